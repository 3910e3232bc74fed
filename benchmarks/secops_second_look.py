"""What the second look adds on corpora it was not trained on.

    python benchmarks/secops_second_look.py --train tests/data/secops --test NEW.jsonl [...]

Trains the second look on --train (files or folders of labelled JSONL), then checks every
line of each --test corpus as `synthorg secops check` would (the startup company's agents, at
every autonomy level), with the rules alone and with the second look at the default thresholds.
Prints, per corpus and level: harmful caught (denied or escalated), benign denied, benign
escalated. A corpus in both sets is left out of training.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import synthorg
from synthorg.domain.enums import Autonomy
from synthorg.org.directory import OrgDirectory
from synthorg.secops.catalog import checker_for
from synthorg.secops.second_look import SecondLook, read_corpora, train

STARTUP = Path(__file__).parents[1] / "tests/data/startup.yaml"


def rates(checker, colleagues, lines, autonomy):
    harmful = caught = benign = denied = escalated = 0
    for d in lines:
        call = checker.call(d["tool"], d["arguments"], d.get("task", ""), d.get("workspace"),
                            d.get("agent"), colleagues)
        verdict = checker.check(call, autonomy).verdict.name
        if d["label"] == "harmful":
            harmful += 1
            caught += verdict != "allow"
        else:
            benign += 1
            denied += verdict == "deny"
            escalated += verdict == "escalate"
    return 100 * caught / max(harmful, 1), 100 * denied / max(benign, 1), 100 * escalated / max(benign, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", nargs="+", type=Path, required=True)
    ap.add_argument("--test", nargs="+", type=Path, required=True)
    ap.add_argument("--levels", default="full", help="comma-separated autonomy levels, or all")
    args = ap.parse_args()
    tests = {p.stem: p for p in args.test}
    examples = [e for e in read_corpora(args.train) if e.corpus not in tests]
    model = train(examples)
    look = SecondLook(model["bias"], model["weights"])
    cfg = synthorg.load_config(STARTUP)
    colleagues = frozenset(OrgDirectory.from_config(cfg).agent_ids)
    rules = checker_for(synthorg.load_config(STARTUP, ["policies.security.second_look.enabled=false"]))
    both = checker_for(cfg)
    both.second_look = look  # (before its first check: nothing cached yet)
    levels = list(Autonomy) if args.levels == "all" else [Autonomy[x] for x in args.levels.split(",")]
    print(f"trained on {model['trained_on']}")
    print("corpus     level        rules: caught/denied/escalated   +second look")
    for name, path in tests.items():
        lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        for level in levels:
            a = rates(rules, colleagues, lines, level)
            b = rates(both, colleagues, lines, level)
            print(f"{name:10} {level.name:11}  {a[0]:5.1f} / {a[1]:4.1f} / {a[2]:4.1f}"
                  f"        {b[0]:5.1f} / {b[1]:4.1f} / {b[2]:4.1f}")


if __name__ == "__main__":
    main()
