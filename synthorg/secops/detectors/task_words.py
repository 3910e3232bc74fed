"""What a task's own words say: its text before an injection's marker, without the text it
quotes (what someone else wrote, quoted in a task, asks the agent for nothing)."""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache

from synthorg.secops.detectors.injection import first_mark

_QUOTED_TEXT = re.compile(r"\"[^\"]*\"|`[^`]*`|(?<![\w])'[^'\n]{3,}'(?![\w])|^\s*>.*$", re.M)
# an absolute path written in prose (not part of a URL, a ~/ path or a relative one)
_PATH = re.compile(r"(?<![\w.~:/-])/[\w.@+-]+(?:/[\w.@+*?\[\]-]+)*")
_GLOB = re.compile(r"[*?\[]")


# (tasks are up to 20,000 characters: a few hundred kept bounds what crafted tasks can hold;
# a call's detectors ask for the same task's words a few times, then rarely again)
@lru_cache(maxsize=256)
def own_words(task: str) -> str:
    """The task's own words, lower-case."""
    task = task.lower()
    if (mark := first_mark(task)) is not None:
        task = task[:mark.start()]
    return _QUOTED_TEXT.sub(" ", task)


@lru_cache(maxsize=256)
def named_places(task: str) -> tuple[str, ...]:
    """The absolute paths the task's own words name, each cut before its first wildcard
    ("/srv/releases/2023-*" names /srv/releases)."""
    places = []
    for m in _PATH.finditer(own_words(task)):
        parts = m.group().rstrip(".,:;").split("/")
        cut = next((i for i, p in enumerate(parts) if _GLOB.search(p)), len(parts))
        place = posixpath.normpath("/".join(parts[:cut]) or "/")
        if place != "/":
            places.append(place)
    return tuple(dict.fromkeys(places))


def names_place(task: str, path: str) -> bool:
    """Whether the task's own words name `path` (absolute, resolved) or a folder holding it."""
    return bool(task) and any(path == p or path.startswith(p + "/") for p in named_places(task))
