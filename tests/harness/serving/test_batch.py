"""The lanes that decide how many episodes play at once (harness/serving/batch.py): the gauges read from
vLLM's /metrics, the rule that grows and backs off, and workers that play each item once."""

from __future__ import annotations

import asyncio

from harness.serving import batch
from harness.serving.batch import Lane, parse_metrics

METRICS = """# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="qwen"} 12.0
vllm:num_requests_running{engine="1",model_name="qwen"} 3.0
vllm:num_requests_waiting{engine="0",model_name="qwen"} 2.0
vllm:num_requests_waiting_by_reason{reason="capacity"} 9.0
vllm:num_requests_swapped{engine="0"} 7.0
"""


def test_the_gauges_are_summed_over_engines_and_longer_names_are_other_metrics():
    assert parse_metrics(METRICS) == {"running": 15.0, "waiting": 2.0}
    assert parse_metrics("vllm:num_requests_waiting 4\n# a comment\n\n") == {"running": 0.0, "waiting": 4.0}


def test_a_lane_grows_while_nothing_waits_and_backs_off_by_what_waits():
    lane = Lane(metrics_url="http://x/metrics", bound=100)
    assert lane.target == batch.START
    lane.active = lane.target
    lane.adjust(running=8, waiting=0, work_left=True)
    assert lane.target == 12 and lane.peak == 12
    lane.active = lane.target
    lane.adjust(running=10, waiting=3, work_left=True)
    assert lane.target == 9 and lane.backoffs == 1
    for _ in range(batch.HOLD_POLLS):  # it holds before it grows again
        lane.adjust(running=9, waiting=0, work_left=True)
        assert lane.target == 9
    lane.active = lane.target
    lane.adjust(running=9, waiting=0, work_left=True)
    assert lane.target == 14
    lane.adjust(running=9, waiting=0, work_left=True)  # its workers are not all busy: no growth
    assert lane.target == 14


def test_a_lane_never_passes_its_bound_nor_drops_below_one():
    lane = Lane(metrics_url="http://x/metrics", bound=10)
    for _ in range(5):
        lane.active = lane.target
        lane.adjust(running=1, waiting=0, work_left=True)
    assert lane.target == 10 and lane.peak == 10
    lane.adjust(running=10, waiting=50, work_left=True)
    assert lane.target == 1
    assert Lane(metrics_url="http://x/metrics", bound=3).target == 3


def test_a_fixed_lane_records_its_workers():
    assert Lane(5).record() == {"mode": "fixed", "workers": 5}
    assert Lane(5, metrics_url="http://x/metrics").metrics_url is None  # a fixed number wins


def test_workers_play_each_item_once_and_a_shrinking_target_lets_them_go():
    async def go():
        lane = Lane(6)
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in range(40):
            queue.put_nowait(i)
        played, most = [], 0

        async def play(item):
            nonlocal most
            most = max(most, lane.active)
            await asyncio.sleep(0.001)
            played.append(item)
            if item == 10:
                lane.target = 2
            done = asyncio.get_running_loop().create_future()
            done.set_result(item)
            return done

        await lane.run(queue, play, lambda: False)
        return played, most, lane.active

    played, most, active = asyncio.run(go())
    assert sorted(played) == list(range(40)) and most == 6 and active == 0


def test_a_worker_that_fails_stops_the_lane_with_its_error():
    async def go():
        lane = Lane(3)
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in range(10):
            queue.put_nowait(i)

        async def play(item):
            if item == 4:
                raise OSError("disk full")
            done = asyncio.get_running_loop().create_future()
            done.set_result(item)
            return done

        try:
            await lane.run(queue, play, lambda: False)
        except OSError as exc:
            return str(exc)
        return None

    assert asyncio.run(go()) == "disk full"
