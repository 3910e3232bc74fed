"""Autonomy that falls by itself and rises only through an approval (seed decision D7).

No real security system grants privileges automatically, but every one takes them away: an
agent is lowered a level after repeated denials (`after_denials` within `window_ticks`) or
when a budget refuses its calls, and to supervised after a harmful call of its own ran. After
`restore_after_ticks` without a further lowering it asks the SecOps office, as an approval,
for a level back; the seeded approver or a person decides like any other approval.

The autonomy an agent holds is the org chart's (agent → department → company, capped by
seniority) less the levels it was lowered, a column of the group that hosts it: that group's
interceptor is the only reader of an agent's autonomy, so a lowering applies from the
agent's next call with no message to anyone, and the run reproduces whatever its layout.
"""

from __future__ import annotations

import json

import numpy as np

from synthorg.config.models import DowngradePolicy
from synthorg.domain.enums import ActionStatus, Autonomy, EventKind, LowerCause
from synthorg.engine.columns import AgentColumns
from synthorg.engine.events import EventBuffer
from synthorg.secops.office import GRANTED

RESTORE_TASK = -1  # the task of an approval asking for autonomy back: none


class AutonomyGuard:
    def __init__(self, policy: DowngradePolicy, global_ids: np.ndarray) -> None:
        self.policy = policy
        self.ids = global_ids

    @staticmethod
    def held(a: AgentColumns, charted: np.ndarray, local: np.ndarray) -> np.ndarray:
        """The autonomy the agents `local` hold, given the org chart's (`charted`, theirs)."""
        return np.maximum(charted - a.lowered[local], 0)

    def denied(self, tick: int, a: AgentColumns, charted: np.ndarray, local: np.ndarray,
               ev: EventBuffer) -> None:
        """The agents `local` (distinct) were each denied a call at `tick`."""
        n = self.policy.after_denials
        if n is None or not len(local):
            return
        stale = tick - a.strike_tick[local] > self.policy.window_ticks
        a.strikes[local[stale]] = 0
        a.strikes[local] += 1
        a.strike_tick[local] = tick
        out = a.strikes[local] >= n
        a.strikes[local[out]] = 0
        self._lower(tick, a, charted[out], local[out], 1, LowerCause.denials, ev)

    def incident(self, tick: int, a: AgentColumns, charted: np.ndarray, local: np.ndarray,
                 ev: EventBuffer) -> None:
        if self.policy.on_incident and len(local):
            self._lower(tick, a, charted, local, len(Autonomy), LowerCause.incident, ev)

    def budget(self, tick: int, a: AgentColumns, charted: np.ndarray, local: np.ndarray,
               ev: EventBuffer) -> None:
        if not self.policy.on_budget or not len(local):
            return
        first = a.lowered[local] == 0  # a budget that stays spent is one reason, not many
        self._lower(tick, a, charted[first], local[first], 1, LowerCause.budget, ev)

    def _lower(self, tick: int, a: AgentColumns, charted: np.ndarray, local: np.ndarray,
               levels: int, cause: LowerCause, ev: EventBuffer) -> None:
        held = self.held(a, charted, local)
        can = held > 0
        local, held, charted = local[can], held[can], charted[can]
        now = np.maximum(held - levels, 0)
        a.lowered[local] = charted - now
        a.lowered_at[local] = tick
        ev.add(EventKind.autonomy_lowered, self.ids[local], target=now, value=float(cause))

    def asking(self, tick: int, a: AgentColumns, active: np.ndarray | None,
               busy_agents: np.ndarray) -> np.ndarray:
        """The agents (local) who ask for a level back now: lowered long enough ago, not
        asking yet, and making no other call this tick (an agent makes one call a tick)."""
        after = self.policy.restore_after_ticks
        if after is None:
            return np.zeros(0, np.int64)
        due = (a.lowered > 0) & ~a.restore_asked & (tick - a.lowered_at >= after)
        if active is not None:
            due &= active
        local = np.nonzero(due)[0]
        if len(local) and len(busy_agents):
            local = local[~np.isin(self.ids[local], busy_agents)]
        a.restore_asked[local] = True
        return local

    def decided(self, tick: int, a: AgentColumns, charted: np.ndarray, rows: np.ndarray,
                local: np.ndarray, ev: EventBuffer) -> None:
        """The office's answers (ACTION_DTYPE rows) to the agents `local` who asked for a
        level back; an agent lowered again since it asked keeps the new level."""
        a.restore_asked[local] = False
        asked_at = rows["tick"]
        current = a.lowered_at[local] <= asked_at
        timed_out = rows["status"] == ActionStatus.timed_out.value
        ok = (((rows["status"] == ActionStatus.succeeded.value) | timed_out)
              & (rows["value"] == GRANTED) & current & (a.lowered[local] > 0))
        up = local[ok]
        a.lowered[up] -= 1
        a.lowered_at[up] = tick
        ev.add(EventKind.autonomy_restored, self.ids[up],
               target=self.held(a, charted[ok], up))
        kept = local[~ok & current]
        a.lowered_at[kept] = tick  # asks again after another spell
        ev.add(EventKind.autonomy_kept_low, self.ids[kept],
               target=self.held(a, charted[~ok & current], kept))


def restore_context(held: int, charted: int, since: int) -> str:
    """What the office parks with a request for autonomy back."""
    return json.dumps({"tool": "", "rule": "autonomy.restore", "reason": (
        f"asks for autonomy {Autonomy(held + 1).name} back (holds {Autonomy(held).name}, "
        f"charted {Autonomy(charted).name}; lowered at tick {since})")})
