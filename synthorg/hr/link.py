"""How a group host reaches HR: the office itself (local backend) or the `hr` actor."""

from __future__ import annotations

from typing import Protocol

from synthorg.hr.feed import Feed
from synthorg.org.decisions import OrgDecision


class HrLink(Protocol):
    def take(self, tick: int, group: int, feed: Feed) -> None:
        """The group's rows for the review at `tick` (returns once HR holds them)."""

    def decisions(self, tick: int) -> list[OrgDecision]:
        """The review at `tick`'s decisions, once made."""
