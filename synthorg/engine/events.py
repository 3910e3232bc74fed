"""Per-tick event and message buffers that number rows per actor in emission order.

Sequence numbers are assigned at collection: a stable sort by actor keeps each actor's
emission order, so an agent's events get the same seq whichever group emitted them.
"""

from __future__ import annotations

import numpy as np

from synthorg.domain.enums import EventKind
from synthorg.domain.records import EVENT_DTYPE, MESSAGE_DTYPE, RESULT_DTYPE, join, take


def _number_by_actor(rows: np.ndarray, actor_field: str) -> np.ndarray:
    order = np.argsort(rows[actor_field], kind="stable")
    rows = take(rows, order)
    actors = rows[actor_field]
    if len(rows):
        position = np.arange(len(rows))
        first = np.ones(len(rows), dtype=bool)  # the first row of each actor's run
        np.not_equal(actors[1:], actors[:-1], out=first[1:])
        rows["seq"] = position - np.maximum.accumulate(np.where(first, position, 0))
    return rows


class EventBuffer:
    def __init__(self, tick: int) -> None:
        self.tick = tick
        # arrays from vectorised phases, and runs of single rows kept as tuples (an array per
        # row would cost a dtype promotion each at concatenation)
        self._parts: list[np.ndarray | list[tuple[int, int, int, int, int, int, float, int]]] = []

    def add(self, kind: EventKind, actors: np.ndarray, tasks: np.ndarray | int = -1,
            target: np.ndarray | int = -1, value: np.ndarray | float = 0.0,
            amount: np.ndarray | int = 0) -> None:
        n = len(actors)
        if n == 0:
            return
        rows = np.empty(n, dtype=EVENT_DTYPE)
        rows["tick"] = self.tick
        rows["actor"] = actors
        rows["seq"] = 0
        rows["kind"] = kind
        rows["task"] = tasks
        rows["target"] = target
        rows["value"] = value
        rows["amount"] = amount
        self._parts.append(rows)

    def add_one(self, kind: EventKind, actor: int, task: int = -1, target: int = -1,
                value: float = 0.0, amount: int = 0) -> None:
        last = self._parts[-1] if self._parts else None
        if not isinstance(last, list):
            last = []
            self._parts.append(last)
        last.append((self.tick, actor, 0, int(kind), task, target, value, amount))

    def collect(self) -> np.ndarray:
        """All rows sorted by (actor, seq), in emission order within an actor."""
        if not self._parts:
            return np.zeros(0, dtype=EVENT_DTYPE)
        arrays = [p if isinstance(p, np.ndarray) else np.array(p, dtype=EVENT_DTYPE)
                  for p in self._parts]
        return _number_by_actor(join(arrays, EVENT_DTYPE), "actor")


class ResultBuffer:
    """A tick's finished tasks: arrays from vectorised phases, single rows as tuples."""

    def __init__(self) -> None:
        self._parts: list[np.ndarray] = []
        self._rows: list[tuple] = []

    def add(self, rows: np.ndarray) -> None:
        if len(rows):
            self._parts.append(rows)

    def add_one(self, row: tuple) -> None:
        self._rows.append(row)

    def collect(self) -> np.ndarray:
        """Every row; their order carries no meaning (the ledger orders tasks by id)."""
        singles = [np.array(self._rows, dtype=RESULT_DTYPE)] if self._rows else []
        return join(self._parts + singles, RESULT_DTYPE)


class MessageBuffer:
    def __init__(self) -> None:
        self._chunks: list[np.ndarray] = []

    def add(self, rows: np.ndarray) -> None:
        if len(rows):
            self._chunks.append(rows)

    def collect(self) -> np.ndarray:
        """All messages sorted by (src, seq)."""
        if not self._chunks:
            return np.zeros(0, dtype=MESSAGE_DTYPE)
        return _number_by_actor(join(self._chunks, MESSAGE_DTYPE), "src")
