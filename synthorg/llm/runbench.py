"""`synthorg bench --llm`: how many requests the project's own model client keeps in flight
(the concurrency curve against the local server at a fixed latency), and a 10,000-agent
company with a hybrid population reasoning through it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from synthorg.config.llm import LlmSpec
from synthorg.llm.bench import concurrency_curve_async
from synthorg.llm.deliberation import SCHEMA_NAME, reply_schema
from synthorg.llm.fake_server import FakeServerProcess
from synthorg.llm.line import ModelLine

LATENCY_S = 0.2
LIMITS = (1, 8, 32, 64, 128, 256)


def client_curve(latency_s: float = LATENCY_S, limits: tuple[int, ...] = LIMITS
                 ) -> list[dict[str, Any]]:
    """The curve of ModelLine (router, in-flight limit, openai SDK) against the fake server."""
    async def measure(base_url: str, pid: int | None) -> list[dict[str, Any]]:
        lines: list[ModelLine] = []

        def factory(in_flight: int) -> Any:
            spec = LlmSpec(enabled=True, base_url=base_url, model="fake-model",
                           max_in_flight=in_flight, retries=0)
            line = ModelLine(spec, None)
            lines.append(line)
            schema = reply_schema()

            async def complete(i: int) -> None:
                request = line.request("medium", (
                    {"role": "user", "content": f"request {i}: plan the next step"},),
                    SCHEMA_NAME, schema)
                reply, error = await line.ask(request, "medium")
                if reply is None:
                    raise RuntimeError(error)

            return complete

        try:
            return await concurrency_curve_async(base_url, latency_s, limits, factory,
                                                 server_pid=pid)
        finally:
            for line in lines:
                await line.aclose()

    with FakeServerProcess(latency=latency_s) as server:
        points = asyncio.run(measure(server.base_url, server.pid))
    for p in points:
        p["bench"] = "llm_concurrency"
        p["client"] = "synthorg ModelLine"
    return points


def megacorp_hybrid(ticks: int, backend: str, leads: int = 200) -> dict[str, Any]:
    """megacorp with `leads` of its leads and executives deliberating with the model."""
    import synthorg
    from synthorg.bench import MEGACORP

    with FakeServerProcess(latency=0.05) as server:
        cfg = synthorg.load_config(MEGACORP, [
            f"runtime.backend={backend}", "llm.enabled=true", f"llm.base_url={server.base_url}",
            "llm.model=fake-model", "llm.agents.seniority=[lead,executive]",
            f"llm.agents.max_agents={leads}", "llm.max_in_flight=128"])
        started = time.perf_counter()
        result = synthorg.Simulation(cfg, seed=0).run(ticks=ticks)
        wall = time.perf_counter() - started
    s = result.summary
    return {"bench": "llm_megacorp_hybrid", "backend": backend, "ticks": ticks,
            "agents": s.agents, "llm_agents": leads, "llm_calls": s.llm_calls,
            "tokens_in": s.tokens_in, "tokens_out": s.tokens_out,
            "tasks_completed": s.tasks_completed, "wall_seconds": round(wall, 2),
            "agent_steps_per_second": s.agent_steps_per_second}
