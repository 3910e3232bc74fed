"""Confidence thresholds -> ACT / INVESTIGATE / WAIT / ESCALATE, scalar and vectorised."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from synthorg.config.models import DecisionPolicy
from synthorg.domain.decision import decide, decide_many
from synthorg.domain.enums import DecisionType

POLICY = DecisionPolicy()


def test_default_thresholds():
    assert (POLICY.act_threshold, POLICY.critical_act_threshold) == (0.70, 0.85)
    assert (POLICY.investigate_threshold, POLICY.wait_threshold) == (0.50, 0.30)


@pytest.mark.parametrize(("confidence", "critical", "expected"), [
    (1.0, False, DecisionType.act),
    (0.70, False, DecisionType.act),
    (0.6999, False, DecisionType.investigate),
    (0.85, True, DecisionType.act),
    (0.84, True, DecisionType.investigate),
    (0.70, True, DecisionType.investigate),
    (0.50, False, DecisionType.investigate),
    (0.50, True, DecisionType.investigate),
    (0.4999, False, DecisionType.wait),
    (0.30, False, DecisionType.wait),
    (0.30, True, DecisionType.wait),
    (0.2999, False, DecisionType.escalate),
    (0.2999, True, DecisionType.escalate),
    (0.0, False, DecisionType.escalate),
])
def test_decide_boundaries(confidence, critical, expected):
    assert decide(confidence, critical, POLICY) is expected


@pytest.mark.parametrize(("confidence", "critical", "expected"), [
    (0.70, False, DecisionType.act),
    (0.6999, False, DecisionType.investigate),
    (0.84, True, DecisionType.investigate),
    (0.85, True, DecisionType.act),
    (0.4999, False, DecisionType.wait),
    (0.2999, True, DecisionType.escalate),
])
def test_decide_many_boundaries(confidence, critical, expected):
    out = decide_many(np.array([confidence]), np.array([critical]), POLICY)
    assert out.dtype == np.int8
    assert out.tolist() == [int(expected)]


def test_decide_many_agrees_with_decide_on_a_grid():
    conf = np.round(np.linspace(0.0, 1.0, 10_001), 4)
    for critical in (False, True):
        crit = np.full(conf.shape, critical)
        many = decide_many(conf, crit, POLICY)
        one = [int(decide(float(c), critical, POLICY)) for c in conf]
        assert many.tolist() == one


def test_decide_many_empty():
    out = decide_many(np.zeros(0), np.zeros(0, dtype=bool), POLICY)
    assert out.shape == (0,)


thresholds = st.lists(st.floats(0.0, 1.0), min_size=4, max_size=4).map(sorted)


@settings(max_examples=200, deadline=None)
@given(
    conf=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=50),
    crit=st.lists(st.booleans(), min_size=50, max_size=50),
    t=thresholds,
)
def test_decide_many_matches_decide_elementwise(conf, crit, t):
    policy = DecisionPolicy(wait_threshold=t[0], investigate_threshold=t[1], act_threshold=t[2],
                            critical_act_threshold=t[3])
    c = np.array(conf)
    k = np.array(crit[: len(conf)])
    many = decide_many(c, k, policy)
    assert many.tolist() == [int(decide(float(x), bool(y), policy)) for x, y in zip(c, k,
                                                                                     strict=True)]


@pytest.mark.parametrize("kwargs", [
    {"act_threshold": 0.4, "investigate_threshold": 0.5},
    {"wait_threshold": 0.6},
    {"act_threshold": 0.9},  # above critical_act 0.85
    {"act_threshold": 1.5},
    {"wait_threshold": -0.1},
])
def test_policy_rejects_bad_thresholds(kwargs):
    with pytest.raises(ValidationError):
        DecisionPolicy(**kwargs)
