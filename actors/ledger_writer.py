"""Where group actors' ledger parts go: straight into the run directory on the driver's node,
or through the `ledger` actor from other nodes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import ray

from synthorg.ledger.ledger import DirectorySink, part_digest


@ray.remote(num_cpus=0)
class LedgerWriter:
    """Writes the part files of groups on other nodes on the driver's node, so a run's
    outputs are in one place however the groups are spread over the cluster."""

    def __init__(self, run_dir: str) -> None:
        self._sink = DirectorySink(Path(run_dir))

    def write(self, name: str, chunks: Sequence[np.ndarray]) -> str:
        return self._sink.write(name, chunks)

    def discard(self, shard: str, from_part: int) -> None:
        self._sink.discard(shard, from_part)


class RemoteSink:
    """PartSink over the ledger writer: writes are fire-and-forget until `drain`."""

    def __init__(self, writer: ray.actor.ActorHandle) -> None:
        self._writer = writer
        self._pending: list[ray.ObjectRef] = []

    def write(self, name: str, chunks: Sequence[np.ndarray]) -> str:
        """Returns the sha256 the file will have (computed here, not waited for)."""
        self._pending.append(self._writer.write.remote(name, list(chunks)))
        if len(self._pending) > 8:  # back-pressure on a slow disk
            self.drain()
        return part_digest(chunks)

    def discard(self, shard: str, from_part: int) -> None:
        self.drain()
        ray.get(self._writer.discard.remote(shard, from_part))

    def drain(self) -> None:
        ray.get(self._pending)
        self._pending = []


class DirectSink(DirectorySink):
    """PartSink straight into the run directory, for a group on the driver's node: its parts
    need not travel through the ledger writer (about 0.7 ms of CPU a tick at 10,000 agents,
    on the cores the groups step on)."""

    def drain(self) -> None:
        """Writes are done when `write` returns."""
