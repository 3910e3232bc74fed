"""A signal whose KeyboardInterrupt Python swallows (it landed in a finaliser or an at-fork
hook) is not lost: it is raised again at the next safe point, and kept off the screen."""

from __future__ import annotations

import signal
import sys

import pytest

from synthorg import interrupts


class _Finaliser:
    def __del__(self) -> None:
        interrupts.note_and_interrupt(signal.SIGTERM, None)


def test_a_swallowed_interrupt_is_raised_at_the_next_safe_point(monkeypatch, capsys):
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    interrupts.quiet_lost_interrupts()
    doomed = _Finaliser()
    del doomed  # its KeyboardInterrupt goes to the unraisable hook, not to us
    assert "Exception ignored" not in capsys.readouterr().err
    with pytest.raises(KeyboardInterrupt):
        interrupts.raise_if_noted()
    interrupts.raise_if_noted()  # raised once


def test_other_unraisable_errors_are_still_reported(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    interrupts.quiet_lost_interrupts()

    class Broken:
        def __del__(self) -> None:
            raise ValueError("in a finaliser")

    broken = Broken()
    del broken
    assert [type(u.exc_value) for u in seen] == [ValueError]
    assert not interrupts.take_noted()
