"""Concurrency efficiency of an LLM client against a server of known latency.

With each request taking `latency_s` at the server, `in_flight` concurrent requests can at best
reach `in_flight / latency_s` requests per second; `efficiency` is the measured rate over that.

    python -m synthorg.llm.bench --latency 0.2 --limits 1,8,32,64,128,256

starts the fake server (`synthorg.llm.fake_server`) and prints the curve of the default client
(the openai SDK with a json_schema response_format).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

Complete = Callable[[int], Awaitable[Any]]
LIMITS = (1, 8, 32, 64, 128, 256)


async def concurrency_point(complete: Complete, in_flight: int, requests: int) -> dict[str, Any]:
    """Runs `requests` calls `await complete(i)`, at most `in_flight` at a time; a failure cancels
    the rest and propagates."""
    gate = asyncio.Semaphore(in_flight)

    async def one(i: int) -> None:
        async with gate:
            await complete(i)

    start = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        for i in range(requests):
            group.create_task(one(i))
    seconds = time.perf_counter() - start
    return {"in_flight": in_flight, "requests": requests, "seconds": seconds,
            "rps": requests / seconds if seconds > 0 else math.inf}


TRANSPORTS = ("aiohttp", "httpx2", "httpx", "sdk-default")


def _http_client(transport: str, pool: int) -> Any:
    """The openai SDK's HTTP client for `transport`, with a pool of `pool` connections, all kept alive.

    aiohttp (the SDK's `DefaultAioHttpClient`) is the fastest; httpcore 1.x under legacy `httpx`
    scans every pooled connection for every request (quadratic: ~30 requests/s at 256 in flight);
    "sdk-default" is the SDK's own client (100 connections kept alive)."""
    import openai

    if transport == "sdk-default":
        return None
    if transport == "httpx":
        import httpx

        return httpx.AsyncClient(limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool),
                                 timeout=httpx.Timeout(120.0))
    import httpx2  # the openai SDK's own HTTP library

    limits = httpx2.Limits(max_connections=pool, max_keepalive_connections=pool)
    if transport == "aiohttp":
        try:
            return openai.DefaultAioHttpClient(limits=limits, timeout=httpx2.Timeout(120.0))
        except RuntimeError:  # no aiohttp: the next best
            pass
    elif transport != "httpx2":
        raise ValueError(f"transport must be one of {TRANSPORTS}, not {transport!r}")
    return openai.DefaultAsyncHttpxClient(limits=limits, timeout=httpx2.Timeout(120.0))


def _openai_complete(base_url: str, in_flight: int, model: str,
                     transport: str = "aiohttp") -> tuple[Complete, Callable[[], Awaitable]]:
    """The default client: the openai SDK, a small message, a small json_schema reply, validated."""
    import openai
    from pydantic import BaseModel, Field

    class Verdict(BaseModel):
        answer: str
        confidence: float = Field(ge=0, le=1)

    pool = max(512, 2 * in_flight)  # the connection pool never caps concurrency
    client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=120.0,
                                http_client=_http_client(transport, pool))
    response_format: Any = {"type": "json_schema", "json_schema": {
        "name": "Verdict", "schema": Verdict.model_json_schema(), "strict": True}}

    async def complete(i: int) -> Verdict:
        reply = await client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": f"Request {i}: approve the plan?"}],
            response_format=response_format, max_tokens=50)
        return Verdict.model_validate_json(reply.choices[0].message.content or "")

    return complete, client.close


def _cpu_seconds(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        import psutil

        times = psutil.Process(pid).cpu_times()
        return float(times.user + times.system)
    except Exception:  # the server gone, or no psutil: no reading
        return None


async def concurrency_curve_async(base_url: str, latency_s: float, limits: Sequence[int] = LIMITS,
                                  complete_factory: Callable[[int], Any] | None = None, *,
                                  min_seconds: float = 2.0, model: str = "fake-model",
                                  server_pid: int | None = None, transport: str = "aiohttp"
                                  ) -> list[dict[str, Any]]:
    """`concurrency_curve` for callers already inside an event loop."""
    points = []
    for limit in limits:
        close: Callable[[], Awaitable] | None = None
        if complete_factory is None:
            complete, close = _openai_complete(base_url, limit, model, transport)
        else:
            complete = complete_factory(limit)
            if inspect.isawaitable(complete):
                complete = await complete
        try:
            await concurrency_point(complete, limit, limit)  # warm-up: connections opened, untimed
            requests = max(4 * limit, math.ceil(limit / latency_s * min_seconds))
            server_before = _cpu_seconds(server_pid)
            client_before = time.process_time()
            point = await concurrency_point(complete, limit, requests)
            client_cpu = time.process_time() - client_before
            server_after = _cpu_seconds(server_pid)
        finally:
            if close is not None:
                await close()
        point["ideal_rps"] = limit / latency_s
        point["efficiency"] = point["rps"] / point["ideal_rps"]
        point["client_cpu"] = client_cpu / point["seconds"]  # cores busy in this process
        point["client_ms_per_request"] = 1000 * client_cpu / requests
        if server_before is not None and server_after is not None:
            point["server_cpu"] = (server_after - server_before) / point["seconds"]
            point["server_ms_per_request"] = 1000 * (server_after - server_before) / requests
        points.append(point)
    return points


def concurrency_curve(base_url: str, latency_s: float, limits: Sequence[int] = LIMITS,
                      complete_factory: Callable[[int], Any] | None = None, *, min_seconds: float = 2.0,
                      model: str = "fake-model", server_pid: int | None = None,
                      transport: str = "aiohttp") -> list[dict[str, Any]]:
    """For each limit of requests in flight: requests per second against a server answering in
    `latency_s`, the ideal `limit / latency_s`, and their ratio `efficiency`. Each point runs
    `limit` untimed warm-up requests, then enough requests to last about `min_seconds`.

    `complete_factory(in_flight)` returns the coroutine function `complete(i)` to measure (it is
    called inside the event loop, and may itself be a coroutine function); by default the openai
    SDK over `transport` (see `_http_client`) with a connection pool that never caps concurrency.
    With `server_pid` each point also gets the server's CPU use ("server_cpu", in cores);
    "client_cpu" is this process's (the default client's, or the factory's, and anything else it runs).
    Runs its own event loop (`asyncio.run`); inside a loop, await `concurrency_curve_async`."""
    return asyncio.run(concurrency_curve_async(base_url, latency_s, limits, complete_factory,
                                               min_seconds=min_seconds, model=model, server_pid=server_pid,
                                               transport=transport))


def format_table(points: Sequence[dict[str, Any]]) -> str:
    """Cores busy (cpu) and CPU milliseconds per request (ms/req), client and server."""
    head = f"{'in_flight':>9} {'requests':>8} {'seconds':>7} {'rps':>8} {'ideal':>8} {'eff':>5}" \
           f" {'client cpu':>10} {'ms/req':>6} {'server cpu':>10} {'ms/req':>6}"
    rows = [head]
    for p in points:
        server = f"{p['server_cpu']:10.2f} {p['server_ms_per_request']:6.2f}" if "server_cpu" in p \
            else f"{'-':>10} {'-':>6}"
        rows.append(f"{p['in_flight']:>9} {p['requests']:>8} {p['seconds']:7.2f} {p['rps']:8.1f}"
                    f" {p['ideal_rps']:8.1f} {p['efficiency']:5.2f} {p['client_cpu']:10.2f}"
                    f" {p['client_ms_per_request']:6.2f} {server}")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    from synthorg.llm.fake_server import FakeServerProcess

    parser = argparse.ArgumentParser(prog="python -m synthorg.llm.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--limits", default=",".join(map(str, LIMITS)))
    parser.add_argument("--min-seconds", type=float, default=2.0)
    parser.add_argument("--base-url", default=None, help="an existing server (else the fake one is started)")
    parser.add_argument("--transport", choices=TRANSPORTS, default="aiohttp",
                        help="the openai SDK's HTTP client")
    parser.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    args = parser.parse_args(argv)
    limits = [int(x) for x in args.limits.split(",") if x.strip()]
    if args.base_url:
        points = concurrency_curve(args.base_url, args.latency, limits, min_seconds=args.min_seconds,
                                   transport=args.transport)
    else:
        with FakeServerProcess(latency=args.latency) as server:
            points = concurrency_curve(server.base_url, args.latency, limits, min_seconds=args.min_seconds,
                                       server_pid=server.pid, transport=args.transport)
    print("\n".join(json.dumps(p) for p in points) if args.json else format_table(points))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
