"""The words of memories and queries, rendered from rows by the memory service: the record of
what happened (in LLM mode the model states the facts of a reasoning agent's record:
memory/facts.py). What the words say decides what is similar: a
memory of a `bugfix` on `testing` is near a new `bugfix`, further from a `feature` on
`python`, unrelated to an `incident`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from synthorg.memory.records import ORG, Category, Outcome, difficulty_word


class Renderer:
    def __init__(self, agents: Sequence[str], types: Sequence[str], skills: Sequence[str],
                 depts: Sequence[str]) -> None:
        self.agents, self.types, self.skills, self.depts = agents, types, skills, depts

    def _agent(self, index: int) -> str:
        return self.agents[index] if 0 <= index < len(self.agents) else f"agent {index}"

    def query(self, row: np.void) -> str:
        return (f"{self.types[row['type']]} task on {self.skills[row['skill']]}, "
                f"{difficulty_word(float(row['difficulty']))}, for {self.depts[row['dept']]}")

    def write(self, row: np.void) -> str:
        kind = self.types[row["type"]]
        skill = self.skills[row["skill"]]
        how_hard = difficulty_word(float(row["difficulty"]))
        category = int(row["category"])
        if category == Category.episodic:
            if row["outcome"] == Outcome.completed:
                return (f"completed a {how_hard} {kind} task on {skill} with quality "
                        f"{row['quality']:.1f} in {row['turns']} turns")
            return f"failed a {how_hard} {kind} task on {skill} after {row['turns']} turns"
        if category == Category.procedural:
            if row["helper"] >= 0:
                return f"{self._agent(row['helper'])} showed how to do {kind} tasks on {skill}"
            return (f"lesson: {how_hard} {kind} tasks on {skill} go well when worked "
                    f"steadily, about {row['turns']} turns")
        if category == Category.social:
            return f"{self._agent(row['helper'])} helped with a {kind} task on {skill}"
        if category == Category.semantic:
            owner = "the organisation" if row["owner"] == ORG else self._agent(row["owner"])
            return (f"{owner}: {self.depts[row['dept']]} does {how_hard} {kind} tasks on "
                    f"{skill} well (quality {row['quality']:.1f})")
        return f"working on a {how_hard} {kind} task on {skill}"


    def recalled(self, hit: np.void) -> str:
        """A retrieved memory as an agent's prompt quotes it (from what a hit carries)."""
        kind, skill = self.types[hit["type"]], self.skills[hit["skill"]]
        a = "an" if kind[:1].lower() in "aeiou" else "a"
        category = int(hit["category"])
        if category == Category.episodic:
            if hit["outcome"] == Outcome.completed:
                return f"I completed {a} {kind} task on {skill} with quality {hit['quality']:.1f}"
            return f"I failed {a} {kind} task on {skill}"
        if category == Category.procedural:
            if hit["helper"] >= 0:
                return f"{self._agent(hit['helper'])} showed me how to do {kind} tasks on {skill}"
            return f"lesson: {kind} tasks on {skill} go well when worked steadily"
        if category == Category.social:
            return f"{self._agent(hit['helper'])} helped me with {a} {kind} task on {skill}"
        if category == Category.semantic:
            owner = "the organisation" if hit["owner"] == ORG else self._agent(hit["owner"])
            return f"{owner}: {kind} tasks on {skill} are done well here (quality {hit['quality']:.1f})"
        return f"working on a {kind} task on {skill}"


def tags_of(row: np.void) -> tuple[str, ...]:
    """What a memory records beyond its task (the task's type, skill, department and
    difficulty it only repeats): a write with none of these says nothing new."""
    tags = []
    if row["outcome"] != Outcome.none:
        tags.append("outcome")
    if row["outcome"] == Outcome.completed:
        tags.append("quality")
    if row["helper"] >= 0:
        tags.append("helper")
    if row["category"] in (Category.procedural, Category.semantic):
        tags.append("lesson")
    return tuple(tags)
