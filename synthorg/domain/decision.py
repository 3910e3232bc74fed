"""Confidence thresholds -> ACT / INVESTIGATE / WAIT / ESCALATE (seed 004)."""

from __future__ import annotations

import numpy as np

from synthorg.config.models import DecisionPolicy
from synthorg.domain.enums import DecisionType


def decide(confidence: float, critical: bool, policy: DecisionPolicy) -> DecisionType:
    act = policy.critical_act_threshold if critical else policy.act_threshold
    if confidence >= act:
        return DecisionType.act
    if confidence >= policy.investigate_threshold:
        return DecisionType.investigate
    if confidence >= policy.wait_threshold:
        return DecisionType.wait
    return DecisionType.escalate


def decide_many(confidence: np.ndarray, critical: np.ndarray, policy: DecisionPolicy) -> np.ndarray:
    """Vectorised `decide`: an int8 array of DecisionType values."""
    act = np.where(critical, policy.critical_act_threshold, policy.act_threshold)
    out = np.full(confidence.shape, DecisionType.escalate, dtype=np.int8)
    out[confidence >= policy.wait_threshold] = DecisionType.wait
    out[confidence >= policy.investigate_threshold] = DecisionType.investigate
    out[confidence >= act] = DecisionType.act
    return out
