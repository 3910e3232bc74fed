"""What a group host hands HR at each review: the rows it recorded since the last one (task
results, the tasks it created, the events HR scores behaviour from) and, from the first host,
the agents' loads and each department's spend as the review begins."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synthorg.domain.enums import EventKind
from synthorg.domain.records import EVENT_DTYPE, RESULT_DTYPE, TASK_DTYPE, join

# the events reviews read (collaboration, reviewer signal, conduct)
FEED_KINDS = (EventKind.message_sent, EventKind.help_given, EventKind.help_declined,
              EventKind.approval_granted, EventKind.approval_rejected, EventKind.tool_denied,
              EventKind.security_incident)
_KEEP = np.zeros(256, dtype=bool)
_KEEP[[int(k) for k in FEED_KINDS]] = True


@dataclass(frozen=True, eq=False)
class Feed:
    results: np.ndarray  # RESULT_DTYPE
    created: np.ndarray  # TASK_DTYPE
    events: np.ndarray  # EVENT_DTYPE, of FEED_KINDS
    loads: np.ndarray | None = None  # int per slot: open tasks at the review (first host)
    spent: np.ndarray | None = None  # micro-USD per department this budget period (first host)

    @staticmethod
    def joined(feeds: list[Feed]) -> Feed:
        """The groups' feeds as one (History.ingest puts the rows in an order that does not
        depend on the grouping)."""
        loads = next((f.loads for f in feeds if f.loads is not None), None)
        spent = next((f.spent for f in feeds if f.spent is not None), None)
        return Feed(join([f.results for f in feeds], RESULT_DTYPE),
                    join([f.created for f in feeds], TASK_DTYPE),
                    join([f.events for f in feeds], EVENT_DTYPE), loads, spent)


class FeedBuffer:
    """A host's rows since the last review (part of its checkpointed state)."""

    def __init__(self) -> None:
        self._results: list[np.ndarray] = []
        self._created: list[np.ndarray] = []
        self._events: list[np.ndarray] = []

    def collect(self, events: np.ndarray, results: np.ndarray, created: np.ndarray) -> None:
        kept = events[_KEEP[events["kind"].astype(np.intp)]] if len(events) else events
        for rows, into in ((kept, self._events), (results, self._results),
                           (created, self._created)):
            if len(rows):
                into.append(np.array(rows, copy=True))

    def take(self, loads: np.ndarray | None = None, spent: np.ndarray | None = None) -> Feed:
        feed = Feed(join(self._results, RESULT_DTYPE), join(self._created, TASK_DTYPE),
                    join(self._events, EVENT_DTYPE), loads, spent)
        self._results, self._created, self._events = [], [], []
        return feed

    def state(self) -> dict[str, np.ndarray]:
        return {"results": join(self._results, RESULT_DTYPE),
                "created": join(self._created, TASK_DTYPE),
                "events": join(self._events, EVENT_DTYPE)}

    def load(self, state: dict[str, np.ndarray]) -> None:
        self._results = [np.asarray(state["results"], dtype=RESULT_DTYPE)]
        self._created = [np.asarray(state["created"], dtype=TASK_DTYPE)]
        self._events = [np.asarray(state["events"], dtype=EVENT_DTYPE)]
