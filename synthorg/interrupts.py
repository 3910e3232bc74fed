"""SIGTERM and SIGINT: while a command starts, and in the loops that take them over.

The handler raises KeyboardInterrupt, as Ctrl-C does. Python runs a handler at the next
bytecode boundary, and when that lies in an at-fork hook or a finaliser (Ray and subprocess
fork while starting), the exception is printed as "Exception ignored" and lost. So the
handler also notes the signal: `raise_if_noted` raises it again at the next safe point, and
the unraisable hook keeps such a lost interrupt off the screen. A run's tick loop and a
sweep's wait loop take signals over with `as_flag`.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator

_noted: list[int] = []


def note_and_interrupt(signum: int, frame: object) -> None:
    _noted.append(signum)
    raise KeyboardInterrupt


def take_noted() -> bool:
    """Whether a signal was noted since the last call (a run loop taking signals over asks:
    one whose interrupt was swallowed stops the run at its first tick boundary)."""
    noted = bool(_noted)
    _noted.clear()
    return noted


def raise_if_noted() -> None:
    """Raise KeyboardInterrupt for a signal whose own interrupt was swallowed."""
    if take_noted():
        raise KeyboardInterrupt


def quiet_lost_interrupts() -> None:
    """Install an unraisable hook that drops KeyboardInterrupts (they are noted) and reports
    everything else as Python would."""
    default = sys.unraisablehook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            default(unraisable)

    sys.unraisablehook = hook


def forget_half_imported_ray() -> None:
    """Drop Ray's exit hook when a signal cut `import ray` short and Ray never started: the
    hook would import the rest of Ray at exit and print a traceback."""
    import atexit

    worker = sys.modules.get("ray._private.worker")
    shutdown = getattr(worker, "shutdown", None)
    if worker is None or shutdown is None:
        return
    started = getattr(getattr(worker, "global_worker", None), "connected", False)
    if not started:
        atexit.unregister(shutdown)


@contextlib.contextmanager
def as_flag() -> Iterator[threading.Event]:
    """While inside: SIGINT/SIGTERM set the flag instead of raising, so a loop stops at a
    point of its own choosing, never with an exception inside a library's code (polars turns
    one raised in its callbacks into a TypeError). A second signal raises KeyboardInterrupt."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def handler(signum: int, frame: object) -> None:
        if stop.is_set():  # a second Ctrl-C: stop now
            signal.default_int_handler(signum, frame)  # type: ignore[arg-type]
        stop.set()

    for s in previous:
        signal.signal(s, handler)
    if take_noted():
        stop.set()
    try:
        yield stop
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
