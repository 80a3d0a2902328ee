"""A served model is never an open door: a server bound beyond loopback needs a key.

The key is read from an environment variable the user names (default REPAIR_HARNESS_SERVE_KEY)
and reaches the server through the child's environment only (vLLM reads VLLM_API_KEY; our
llama.cpp entry reads LLAMA_KEY_ENV): never an argv a `ps` shows, a printed command, run.json, a
record or a log. A printed command names the variable, never its value.
"""

from __future__ import annotations

import ipaddress
import os

from envs.errors import UserError

DEFAULT_KEY_ENV = "REPAIR_HARNESS_SERVE_KEY"
# how our llama.cpp entry point receives the key from its parent
LLAMA_KEY_ENV = "REPAIR_HARNESS_LLAMA_API_KEY"
# vLLM's own variable for --api-key; set in the child's environment, never on its command line
VLLM_KEY_ENV = "VLLM_API_KEY"
WAIVER_FLAG = "--insecure-no-key"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name we cannot vouch for may resolve anywhere


def connect_host(host: str) -> str:
    """Where this machine reaches a server bound to `host` (a wildcard bind answers on loopback)."""
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


def serve_key(host: str, key_env: str = DEFAULT_KEY_ENV, insecure_no_key: bool = False) -> str | None:
    """The key a server on `host` must demand, or None on loopback without one set.

    Beyond loopback a key is required unless the waiver flag was given for a closed network."""
    key = os.environ.get(key_env) or None
    if key is None and not is_loopback(host) and not insecure_no_key:
        raise UserError(
            f"--host {host} serves other machines, so the server must demand a key: export {key_env}=<a long random "
            f"secret> (clients then send it: run --api-key-env {key_env}), or pass {WAIVER_FLAG} on a closed network"
        )
    return key
