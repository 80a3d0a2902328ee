"""How many episodes play at once on one backend: a fixed number, or as many as keep a vLLM
server's batch full.

A vLLM engine batches every request it holds; a few concurrent episodes leave most of its batch
empty. For a vLLM server the harness started (and `--concurrency` not fixing it), a lane reads
the server's `/metrics` every `POLL_S`: while no request waits (`vllm:num_requests_waiting` is 0)
and episodes are left, it grows its workers by half; when requests queue, it drops as many
workers as wait, and holds for `HOLD_POLLS` polls before growing again. `--concurrency` bounds
it. A worker over the target leaves after its episode (none is cut short). What a lane did is
recorded in run.json (`concurrency`, per model) and the report says it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from harness import defaults

POLL_S = 2.0
HOLD_POLLS = 2
START = 8  # workers of an adaptive lane before its first reading
BOUND = 256  # an adaptive lane's most workers where --concurrency does not bound it
GROW = 1.5


def parse_metrics(text: str) -> dict[str, float]:
    """The sums of vLLM's request gauges over their label sets (one per engine): running, waiting."""
    out = {"running": 0.0, "waiting": 0.0}
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(None, 1)[0] if line.strip() else ""
        key = name.removeprefix("vllm:num_requests_")
        if key in out and name != key:  # the gauge itself, not another metric of a longer name
            try:
                out[key] += float(line.rsplit(None, 1)[1])
            except (IndexError, ValueError):
                pass
    return out


class Lane:
    """The workers that play one model's episodes on one backend."""

    def __init__(self, fixed: int | None = None, *, metrics_url: str | None = None, bound: int | None = None):
        self.metrics_url = metrics_url if fixed is None else None
        self.bound = bound or BOUND
        self.target = fixed or (min(START, self.bound) if self.metrics_url else defaults.CONCURRENCY)
        self.start, self.peak, self.backoffs, self.polls = self.target, self.target, 0, 0
        self.note: str | None = None
        self.active = 0
        self._wake = asyncio.Event()
        self._hold = 0

    def record(self) -> dict[str, Any]:
        if self.metrics_url is None:
            return {"mode": "fixed", "workers": self.target}
        out: dict[str, Any] = {
            "mode": "adaptive",
            "start": self.start,
            "bound": self.bound,
            "peak": self.peak,
            "final": self.target,
            "backoffs": self.backoffs,
            "polls": self.polls,
        }
        return out | ({"note": self.note} if self.note else {})

    def adjust(self, running: float, waiting: float, work_left: bool) -> None:
        """One reading of the server's gauges."""
        self.polls += 1
        if waiting > 0:
            self.target = max(1, self.target - math.ceil(waiting))
            self.backoffs += 1
            self._hold = HOLD_POLLS
        elif self._hold:
            self._hold -= 1
        elif work_left and self.active >= self.target and self.target < self.bound:
            self.target = min(self.bound, max(self.target + 1, math.ceil(self.target * GROW)))
            self.peak = max(self.peak, self.target)
            self._wake.set()

    async def _poll(self, queue: asyncio.Queue[Any]) -> None:
        # aiohttp: only when a lane polls a server's metrics (the runner loads this module)
        from harness.serving.backends.transport import Transport, TransportError

        url = urlsplit(str(self.metrics_url))
        client = Transport(f"{url.scheme}://{url.netloc}", api_key="", timeout_s=5.0, max_response_bytes=16 << 20)
        try:
            while True:
                await asyncio.sleep(POLL_S)
                text = ""
                try:
                    text = (await client.get(url.path)).decode("utf-8", "replace")
                except TransportError:
                    pass
                if "vllm:num_requests" not in text:
                    self.note = f"no vLLM metrics at {self.metrics_url}: stayed at {self.target}"
                    return
                gauges = parse_metrics(text)
                self.adjust(gauges["running"], gauges["waiting"], not queue.empty())
        finally:
            await client.aclose()

    async def run(
        self,
        queue: asyncio.Queue[Any],
        play: Callable[[Any], Awaitable[asyncio.Future[Any]]],
        stopped: Callable[[], bool],
    ) -> None:
        """Play the queue's episodes until it is empty or `stopped()`. `play(item)` plays one and
        returns the future of its record's write: each worker waits for its previous write before
        it hands over the next (at most one record per worker waits for the writer)."""

        async def worker() -> None:
            saving = None
            try:
                while not queue.empty() and not stopped() and self.active <= self.target:
                    saved = await play(queue.get_nowait())
                    if saving is not None:
                        await saving
                    saving = saved
                if saving is not None:
                    await saving
            finally:
                self.active -= 1
                self._wake.set()

        poller = asyncio.create_task(self._poll(queue)) if self.metrics_url else None
        tasks: set[asyncio.Task[None]] = set()
        try:
            while True:
                while len(tasks) < self.target and not queue.empty() and not stopped():
                    self.active += 1
                    tasks.add(asyncio.create_task(worker()))
                if not tasks:
                    return
                self._wake.clear()
                waker = asyncio.create_task(self._wake.wait())
                done, _ = await asyncio.wait({*tasks, waker}, return_when=asyncio.FIRST_COMPLETED)
                waker.cancel()
                for task in done & tasks:
                    tasks.discard(task)
                    task.result()  # a worker's failure (a full disk) stops the lane
        finally:
            if poller is not None:
                poller.cancel()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, *([poller] if poller else []), return_exceptions=True)
