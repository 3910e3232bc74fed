"""What retrieved memories do to an agent's work in deterministic mode: relevant experience
raises competence on the task (so confidence, speed and quality, and fewer help requests
follow), and a colleague remembered as helpful with such work is the one asked for help."""

from __future__ import annotations

import numpy as np

from synthorg.config.models import MemorySpec
from synthorg.memory.records import Category, Outcome

# what a memory is worth as experience, by category (episodic: the quality it recalls)
_WORTH = np.zeros(len(Category))
_WORTH[Category.procedural] = 1.0
_WORTH[Category.semantic] = 0.8
_WORTH[Category.social] = 0.4
FAILED_WORTH = 0.25  # a failure remembered still teaches something


def experience(hits: np.ndarray, n: int, spec: MemorySpec) -> tuple[np.ndarray, np.ndarray]:
    """Per query (n of them): the competence bonus and the remembered helper (-1: none)."""
    bonus = np.zeros(n)
    helper = np.full(n, -1, dtype=np.int32)
    if not len(hits):
        return bonus, helper
    floor = spec.relevance_floor
    relevance = np.clip((hits["score"] - floor) / max(1.0 - floor, 1e-9), 0.0, 1.0)
    episodic = hits["category"] == Category.episodic
    worth = np.where(episodic,
                     np.where(hits["outcome"] == Outcome.completed, hits["quality"],
                              FAILED_WORTH),
                     _WORTH[hits["category"]])
    gained = np.bincount(hits["query"], weights=spec.experience_gain * relevance * worth,
                         minlength=n)
    bonus[:] = np.minimum(gained[:n], spec.max_bonus)
    who = (hits["helper"] >= 0) & (relevance > 0)
    if who.any():
        best = hits[who]  # by query then rank: the first of each query is its best
        first = np.unique(best["query"], return_index=True)[1]
        helper[best["query"][first]] = best["helper"][first]
    return bonus, helper
