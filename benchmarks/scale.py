"""Deeper scale runs than `synthorg bench` defaults: more sizes, more ticks, one JSON line each.

    .venv/bin/python benchmarks/scale.py --agents 1000,2000,5000,10000,20000 --ticks 100
"""

from __future__ import annotations

import argparse
import json

from synthorg.bench import memory_flat, throughput


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", default="1000,2000,5000,10000,20000")
    parser.add_argument("--ticks", type=int, default=100)
    parser.add_argument("--backends", default="ray,local")
    parser.add_argument("--memory-ticks", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per size and backend; best counts")
    args = parser.parse_args()
    backends = args.backends.split(",")
    if "ray" in backends:
        from actors.ray_backend import ensure_ray

        ensure_ray()
    sizes = [int(a) for a in args.agents.split(",")]
    for row in throughput(sizes, args.ticks, backends, args.repeat):
        print(json.dumps(row), flush=True)
    print(json.dumps(memory_flat(10_000, args.memory_ticks, backends[0], warmup=100)), flush=True)


if __name__ == "__main__":
    main()
