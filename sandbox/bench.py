"""The sandbox's speed (`synthorg bench --sandbox`): a session's cold start (container start,
MCP server start and initialise, first call), warm `run_python` latency of a trivial
program, calls per second with calls in flight over a few sessions, and a new scope's first
call when the warm pool has a spare."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import numpy as np

from sandbox.backend import Limits
from sandbox.containers import DockerSandbox

TRIVIAL: dict[str, object] = {"code": "print(1)"}


async def _measure(calls: int, concurrency: int, sessions: int) -> dict[str, Any]:
    box = DockerSandbox(f"bench{uuid.uuid4().hex[:8]}")
    limits = Limits()
    try:
        began = time.perf_counter()
        first = await box.open_session("s0", limits)
        await first.call("run_python", TRIVIAL, 30)
        cold = time.perf_counter() - began
        for _ in range(10):  # warm up
            await first.call("run_python", TRIVIAL, 30)
        latency = []
        for _ in range(calls):
            t = time.perf_counter()
            await first.call("run_python", TRIVIAL, 30)
            latency.append(time.perf_counter() - t)
        pool = [first] + [await box.open_session(f"s{i}", limits) for i in range(1, sessions)]
        for s in pool[1:]:
            await s.call("run_python", TRIVIAL, 30)
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with gate:
                await pool[i % len(pool)].call("run_python", TRIVIAL, 30)

        t = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(calls)))
        rate = calls / (time.perf_counter() - t)
        box.warm(limits, 1)
        while not box.spares:  # a spare's start: the pool's own
            await asyncio.sleep(0.02)
        t = time.perf_counter()
        await (await box.open_session("pooled", limits)).call("run_python", TRIVIAL, 30)
        pooled = time.perf_counter() - t
    finally:
        await box.close()
    ms = np.array(latency) * 1e3
    return {"bench": "sandbox", "program": "print(1)", "warm_calls": calls,
            "warm_p50_ms": round(float(np.percentile(ms, 50)), 2),
            "warm_p95_ms": round(float(np.percentile(ms, 95)), 2),
            "calls_per_second": round(rate, 1), "in_flight": concurrency,
            "sessions": sessions, "cold_start_s": round(cold, 3),
            "pooled_first_call_ms": round(pooled * 1e3, 2)}


def measure(calls: int = 300, concurrency: int = 8, sessions: int = 2) -> dict[str, Any]:
    return asyncio.run(_measure(calls, concurrency, sessions))
