"""Instructions per tick, counted by valgrind's callgrind: repeatable to a fraction of a
percent whatever else the machine does, where wall-clock figures on a shared VM move by 20 %.

Counts the ticks of an in-process (`local`) run with the agents in one group and in two:
what two groups do on top of one is their fixed cost per step, and
    one group ÷ (two groups ÷ 2)
is the most the ray backend's two groups (one per core) can gain over the local backend on
this code, before any hand-over, waiting or machine effect. Needs valgrind and gcc
(Debian: `apt-get install valgrind gcc`).

    .venv/bin/python benchmarks/instructions.py [--agents 10000] [--ticks 4] [--groups 1,2]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from synthorg.ledger.ledger import HASH_EVERY

# Callgrind counts only between these client requests (a shared object, so Python can call
# them through ctypes): start-up and the first, warming ticks are not counted.
TOGGLE_C = """
#include <valgrind/callgrind.h>
void count_on(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_TOGGLE_COLLECT; }
void count_off(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_STOP_INSTRUMENTATION; }
"""
WARM_TICKS = 5
COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def child(agents: int, groups: int, ticks: int, toggle: str) -> None:
    """Runs inside valgrind: a local run with `groups` groups, counted from tick WARM_TICKS."""
    import ctypes

    from synthorg.bench import MEGACORP, scaled
    from synthorg.config.loader import load_config
    from synthorg.sim.simulation import Simulation

    lib = ctypes.CDLL(toggle)
    cfg = scaled(load_config(MEGACORP), agents, "local")
    per_group = -(-cfg.agent_count() // groups)
    cfg = cfg.model_copy(update={"runtime": cfg.runtime.model_copy(
        update={"agents_per_actor": per_group})})

    def on_tick(done: int, total: int) -> None:
        if done == WARM_TICKS:
            lib.count_on()
        elif done == WARM_TICKS + ticks:
            lib.count_off()

    with tempfile.TemporaryDirectory(prefix="synthorg-instr-") as out:
        Simulation(cfg, seed=1, out=out).run(ticks=WARM_TICKS + ticks, on_tick=on_tick)


def count(agents: int, groups: int, ticks: int, toggle: Path) -> int:
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
           "--callgrind-out-file=/dev/null", sys.executable, __file__, "--child",
           "--agents", str(agents), "--groups", str(groups), "--ticks", str(ticks),
           "--toggle", str(toggle)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    found = COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"callgrind run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1))


def build_toggle(into: Path) -> Path:
    for tool in ("valgrind", "gcc"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is needed: apt-get install valgrind gcc")
    src, lib = into / "toggle.c", into / "libtoggle.so"
    src.write_text(TOGGLE_C)
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--ticks", type=int, default=HASH_EVERY,
                        help="ticks counted (after warm-up); a multiple of the ledger's "
                        "HASH_EVERY, so each window holds the same share of fingerprinting")
    parser.add_argument("--groups", default="1,2")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--toggle", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.agents, int(args.groups), args.ticks, args.toggle)
        return
    per_tick: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="synthorg-instr-") as tmp:
        toggle = build_toggle(Path(tmp))
        for groups in (int(g) for g in args.groups.split(",")):
            per_tick[groups] = count(args.agents, groups, args.ticks, toggle) / args.ticks
            print(json.dumps({"bench": "instructions", "agents": args.agents, "groups": groups,
                              "ticks_counted": args.ticks,
                              "instructions_per_tick": round(per_tick[groups])}), flush=True)
    if 1 in per_tick and 2 in per_tick:
        print(json.dumps({
            "bench": "instruction_ceiling", "agents": args.agents,
            "second_group_extra": round(per_tick[2] / per_tick[1] - 1, 4),
            "ray_over_local_at_most": round(per_tick[1] / (per_tick[2] / 2), 3)}), flush=True)


if __name__ == "__main__":
    main()
