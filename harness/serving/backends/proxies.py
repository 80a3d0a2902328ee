"""The proxy policy of the environment, read once per transport: `HTTP_PROXY`, `HTTPS_PROXY` and
`ALL_PROXY` (lower case first, as curl and urllib read them), and `NO_PROXY` with host names,
domains, ports, `*` and CIDRs (`127.0.0.0/8`, `10.0.0.0/8`: what a cluster's NO_PROXY holds).

The stdlib reads the variables (`urllib.request.getproxies_environment`); its NO_PROXY matching
is undocumented and knows no CIDR, so the entries are matched here, as curl reads them."""

from __future__ import annotations

import ipaddress
import urllib.request
from urllib.parse import urlsplit

# what aiohttp can speak to a proxy; a socks proxy would need another package
PROXY_SCHEMES = ("http", "https")


def proxy_for(url: str) -> str | None:
    """The proxy a request to `url` goes through, or None for a direct connection. A proxy the
    transport cannot speak is a ValueError naming the variable's value."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or bypassed(parts.hostname or "", parts.port, proxies.get("no", "")):
        return None
    if "://" not in proxy:
        proxy = f"http://{proxy}"  # curl's reading of a bare host:port
    scheme = urlsplit(proxy).scheme.lower()
    if scheme not in PROXY_SCHEMES:
        raise ValueError(
            f"the environment's proxy for {parts.scheme} is a {scheme} proxy, which the transport does not "
            f"speak (it speaks {' and '.join(PROXY_SCHEMES)}): set an http proxy, or NO_PROXY for this host"
        )
    return proxy


def bypassed(host: str, port: int | None, no_proxy: str) -> bool:
    """Whether NO_PROXY sends `host` direct: `*`, a name or a domain (`example.org` and `.example.org`
    both cover its subdomains), either with `:port` to match that port only, or a CIDR or address."""
    host = host.strip("[]").lower().rstrip(".")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if entry == "*":
            return True
        if address is not None:
            try:
                if address in ipaddress.ip_network(entry.strip("[]"), strict=False):
                    return True
                continue
            except ValueError:
                pass
        name, _, only = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        if only and (not only.isdigit() or int(only) != port):
            continue
        name = name.lstrip("*").lstrip(".")
        if name and (host == name or host.endswith("." + name)):
            return True
    return False
