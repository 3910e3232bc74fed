"""Checkpoints: everything needed to continue a run, written atomically, verified on read.

File layout: a magic line, one JSON header line (format, tick, seed, payload sha256 and
length, config digest), then the pickled payload. Checkpoints are trusted local files (pickle);
do not load one from a source you would not run code from.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

from synthorg.errors import MisuseError
from synthorg.sim.channels import Exchange

MAGIC = b"SYNTHORG-CHECKPOINT\n"
FORMAT = 6  # 2: sharded ledger, exchange in flight; 3: groups draw arrivals (next_task), no
# driver shard; 4: ledger parts are .npy (a format 3 run directory holds parquet parts);
# 5: queued tasks are held as record bytes; 6: org versions, actions in flight, agent columns
DIR_NAME = "checkpoints"


class CheckpointError(MisuseError):
    """A checkpoint that is missing, corrupted or from an incompatible version."""


@dataclass(frozen=True)
class Checkpoint:
    tick: int
    seed: int
    config_digest: str
    bounds: tuple[tuple[int, int], ...]
    driver: dict[str, object]
    groups: list[dict[str, object]]
    exchange: Exchange
    secops: dict[str, int]


def checkpoint_path(run_dir: Path, tick: int) -> Path:
    return run_dir / DIR_NAME / f"tick-{tick:08d}.ckpt"


def encode(ck: Checkpoint) -> bytes:
    payload = pickle.dumps(ck, protocol=pickle.HIGHEST_PROTOCOL)
    header = {"format": FORMAT, "tick": ck.tick, "seed": ck.seed,
              "config_digest": ck.config_digest, "length": len(payload),
              "sha256": hashlib.sha256(payload).hexdigest()}
    return MAGIC + json.dumps(header).encode() + b"\n" + payload


def decode(blob: bytes, source: str) -> Checkpoint:
    if not blob.startswith(MAGIC):
        raise CheckpointError(f"{source}: not a synthorg checkpoint")
    head_end = blob.find(b"\n", len(MAGIC))
    try:
        header = json.loads(blob[len(MAGIC):head_end])
    except ValueError:
        raise CheckpointError(f"{source}: corrupted checkpoint header") from None
    if header.get("format") != FORMAT:
        raise CheckpointError(f"{source}: checkpoint format {header.get('format')} is not "
                              f"supported (this synthorg reads format {FORMAT})")
    payload = blob[head_end + 1:]
    if len(payload) != header["length"] or hashlib.sha256(payload).hexdigest() != header["sha256"]:
        raise CheckpointError(f"{source}: checkpoint is corrupted (checksum mismatch)")
    ck = pickle.loads(payload)
    if not isinstance(ck, Checkpoint):
        raise CheckpointError(f"{source}: unexpected checkpoint content")
    return ck


def write(run_dir: Path, ck: Checkpoint) -> Path:
    """Atomic: a reader sees the old file or the complete new one, never a torn write."""
    path = checkpoint_path(run_dir, ck.tick)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(encode(ck))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def read(path: Path) -> Checkpoint:
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(f"{path}: checkpoint not found") from None
    return decode(blob, str(path))


def latest(run_dir: Path) -> Path:
    found = sorted((run_dir / DIR_NAME).glob("tick-*.ckpt"))
    if not found:
        raise CheckpointError(f"{run_dir}: no checkpoint to resume from "
                              "(set runtime.checkpoint_every to write them)")
    return found[-1]


def config_digest(config_json: str) -> str:
    return hashlib.sha256(config_json.encode()).hexdigest()[:16]
