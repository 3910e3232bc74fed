"""The stylised facts of synthorg/facts.py, startup and enterprise, 5 seeds each (`synthorg
bench --facts N` checks them on more seeds)."""

from __future__ import annotations

import pytest

from synthorg.facts import FACTS, Fact, Runner, t95

STARTUP_FACTS = [f for f in FACTS if f.company == "startup"]


@pytest.fixture(scope="module")
def runner() -> Runner:
    # facts share the runs of their common conditions; the analyses are simulated in-process
    # here and memory kept in process (the sandbox and Mem0 have their own tests;
    # `synthorg bench --facts` runs them for real)
    return Runner(base={"startup": ("tools.analyse.executor=null", "memory.backend=inprocess",
                                    "memory.embedder=hashing")})


def test_there_are_enough_facts_on_both_companies():
    assert len(STARTUP_FACTS) >= 15
    assert sum(f.company == "enterprise" for f in FACTS) >= 4


@pytest.mark.parametrize("fact", FACTS, ids=lambda f: f.name)
def test_the_organisation_reproduces(fact: Fact, runner: Runner):
    verdict = runner.check(fact, range(5))
    assert verdict.holds, (
        f"{fact.name}: {fact.measure} moved {verdict.mean:+.4g} ± {verdict.half_width:.3g} "
        f"(95 %), expected {'up' if fact.direction > 0 else 'down'}; per seed "
        f"{[round(e, 4) for e in verdict.effects]}")


def test_a_fact_that_does_not_move_is_not_taken_to_hold(runner: Runner):
    """The same condition on both sides: every paired difference is 0, and no interval can
    lie on one side of it."""
    same = Fact("nothing changes", "a control", "startup", (), (), "tasks_completed", +1)
    verdict = runner.check(same, range(3))
    assert verdict.mean == 0 and not verdict.holds


def test_t_quantiles_widen_for_few_seeds():
    assert t95(4) > t95(9) > t95(29) > 1.96
    assert t95(17) == t95(15)  # between table rows: the wider one
