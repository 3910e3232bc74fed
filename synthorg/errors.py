"""Three families of errors: misuse, run failure, control signals (DESIGN.md)."""

from __future__ import annotations


class SynthorgError(Exception):
    """Base of every error synthorg raises on purpose."""


class MisuseError(SynthorgError):
    """Bad configuration or input. The message names the field, line or file."""


class ConfigError(MisuseError):
    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"invalid config {source}:\n{lines}")


class RunDirBusy(MisuseError):
    """Another live process holds the run directory."""


class RunFailure(SynthorgError):
    """A simulation run could not complete; it is recorded, never silent."""


class ActorCrashed(RunFailure):
    """A worker process hosting part of the simulation died; the run rolls back and goes on."""


class ExecutorFault(ActorCrashed):
    """An executor's outside service (the Docker engine of the sandbox, an MCP server) failed
    one call on every attempt. Never the call's outcome: that would make the ledger depend on
    the machine's luck. The run rolls back to its last good state and goes on, as for a lost
    actor, and gives up after as many recoveries."""


class Interrupted(RunFailure):
    """SIGINT/SIGTERM: a checkpoint was written; `synthorg resume` continues the run."""

    def __init__(self, run_dir: str, tick: int) -> None:
        self.run_dir, self.tick = run_dir, tick
        super().__init__(f"interrupted at tick {tick}; checkpoint written. "
                         f"Continue with: synthorg resume {run_dir}")


class LoopTransitionError(RunFailure):
    """A loop phase or agent work-state transition that the state machine forbids."""


class ControlSignal(SynthorgError):
    """Not an error of the user or the code: the run must pause or stop (approval, budget)."""


class BudgetExceeded(ControlSignal):
    pass


class ApprovalRequired(ControlSignal):
    pass
