"""The tick exchange as named channels: what every group hands the others between tick t and
t + 1.

A channel has one owner (the component that writes it) and a reach:
- addressed: the writer splits its rows by destination group, and each group reads only its
  part (messages, sorted by sender within each part);
- broadcast: every group reads all of it (loads, spend).

A group's output of a tick is one array per channel and reach (`width` arrays, in `CHANNELS`
order, addressed parts in group order): that flat list is what every transport moves (Ray
object refs, a compiled graph, shared-memory slots), because Ray resolves only top-level refs.
Adding a channel is one entry here, plus the code that writes and the code that reads it.
What travels besides the exchange, on one pipeline only (the arrivals drawn ahead on the shm
pipeline), is that pipeline's own business.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from synthorg.domain.records import MESSAGE_DTYPE, carries_task


@dataclass(frozen=True)
class Channel:
    name: str
    owner: str
    addressed: bool
    dtype: np.dtype


CHANNELS = (
    Channel("messages", "agent groups (their agents' and routed departments' messages)", True,
            MESSAGE_DTYPE),
    Channel("loads", "agent groups (queued + current task per agent, at the tick's end)", False,
            np.dtype(np.int32)),
    Channel("spend", "agent groups (micro-USD spent per department in the tick)", False,
            np.dtype(np.int64)),
    Channel("skills", "agent groups (their agents' current skill levels, flat; only on the "
            "tick before the org changes, empty otherwise)", False, np.dtype(np.float64)),
)
BY_NAME = {c.name: c for c in CHANNELS}

NO_SKILLS = np.zeros(0, dtype=np.float64)

Received = dict[str, list[Any]]  # channel -> one array (or Ray object ref) per writer group


def width(groups: int) -> int:
    """Arrays in one group's flat output."""
    return sum(groups if c.addressed else 1 for c in CHANNELS)


def flatten(output: Mapping[str, Any], groups: int) -> list[Any]:
    """A group's output (channel -> its array, or its parts by destination if addressed) as
    the flat list transports move."""
    flat: list[Any] = []
    for c in CHANNELS:
        if c.addressed:
            parts = list(output[c.name])
            if len(parts) != groups:
                raise ValueError(f"channel {c.name}: {len(parts)} parts for {groups} groups")
            flat += parts
        else:
            flat.append(output[c.name])
    return flat


def share(flat: Sequence[Any], reader: int, groups: int) -> dict[str, Any]:
    """What group `reader` takes from one writer's flat output."""
    out, at = {}, 0
    for c in CHANNELS:
        if c.addressed:
            out[c.name] = flat[at + reader]
            at += groups
        else:
            out[c.name] = flat[at]
            at += 1
    return out


def received(shares: Sequence[Mapping[str, Any]]) -> Received:
    """A reader's inputs from every writer's share, in writer order."""
    return {c.name: [s[c.name] for s in shares] for c in CHANNELS}


def flat_inputs(got: Received) -> tuple[Any, ...]:
    """A reader's inputs as one flat tuple (channels in order, writers in order)."""
    return tuple(x for c in CHANNELS for x in got[c.name])


def from_flat(flat: Sequence[Any], groups: int) -> Received:
    """The inverse of `flat_inputs`."""
    if len(flat) != len(CHANNELS) * groups:
        raise ValueError(f"{len(flat)} inputs for {len(CHANNELS)} channels of {groups} groups")
    return {c.name: list(flat[k * groups:(k + 1) * groups]) for k, c in enumerate(CHANNELS)}


@dataclass
class Exchange:
    """What is in flight from one tick to the next: per reader group, what it receives on
    each channel from every writer (arrays here; object refs inside the Ray backend)."""

    inputs: list[Received]

    @classmethod
    def initial(cls, bounds: Sequence[tuple[int, int]], departments: int) -> Exchange:
        """Before the first tick: no messages, no load, nothing spent."""
        empty = {"messages": lambda lo, hi: np.zeros(0, MESSAGE_DTYPE),
                 "loads": lambda lo, hi: np.zeros(hi - lo, dtype=np.int32),
                 "spend": lambda lo, hi: np.zeros(departments, dtype=np.int64),
                 "skills": lambda lo, hi: NO_SKILLS}
        return cls([received([{c.name: empty[c.name](lo, hi) for c in CHANNELS}
                              for lo, hi in bounds]) for _ in bounds])

    @classmethod
    def gather(cls, stepped: Sequence[Sequence[Any]]) -> Exchange:
        """Next tick's inputs from this tick's flat outputs (arrays or object refs)."""
        n = len(stepped)
        return cls([received([share(out, r, n) for out in stepped]) for r in range(n)])

    def flat(self, reader: int) -> tuple[Any, ...]:
        return flat_inputs(self.inputs[reader])

    @classmethod
    def from_flat(cls, flats: Sequence[Sequence[Any]]) -> Exchange:
        """From every reader's flat inputs (as group actors keep them)."""
        return cls([from_flat(f, len(flats)) for f in flats])

    def tasks_in_flight(self) -> list[tuple[int, int]]:
        """(task id, addressee) of the tasks travelling in messages (assigned or handed
        over, not yet received)."""
        return [(t, dst) for got in self.inputs for m in got["messages"]
                for t, dst in zip(m["t_task"][carries_task(m)].tolist(),
                                  m["dst"][carries_task(m)].tolist(), strict=True)]

    def dept_spent(self, running: np.ndarray) -> np.ndarray:
        """Spend per department so far: `running` (a host's, before the last tick) plus the
        last tick's, which is in flight."""
        return running + np.sum(self.inputs[0]["spend"], axis=0, dtype=np.int64)
