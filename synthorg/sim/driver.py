"""The driver owns the clock: each tick it tells the backend to step every group host (which
draw the tick's arrivals themselves; the backend says which host routes each department)."""

from __future__ import annotations

from synthorg.sim.backend import Backend


class Driver:
    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.tick = 0

    def next_tick(self) -> None:
        """Release the next tick to the backend (it may still run when this returns)."""
        self.backend.tick(self.tick)
        self.tick += 1

    def state_dict(self) -> dict[str, object]:
        return {"tick": self.tick}

    def load_state(self, state: dict[str, object]) -> None:
        self.tick = int(state["tick"])  # type: ignore[call-overload]
