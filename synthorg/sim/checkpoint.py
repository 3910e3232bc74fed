"""Checkpoints: everything needed to continue a run, written atomically, verified on read.

File layout: a magic line, one JSON header line (format, tick, seed, payload sha256 and
length, config digest), then the payload: an uncompressed .npz archive of plain arrays (no
object arrays: numpy reads it with allow_pickle=False) and, in it, the state's structure as
JSON. Reading one builds nothing but dicts, lists, numbers, strings and arrays, and the few
state classes named in `_DECODERS` from those: a crafted checkpoint can hold wrong data (then
the run refuses it or fails), never code.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from synthorg.engine.queues import TaskQueues
from synthorg.errors import MisuseError
from synthorg.ledger.ledger import PARTS_DIR, ShardTotals, file_digest
from synthorg.sim import manifest
from synthorg.sim.channels import Exchange

MAGIC = b"SYNTHORG-CHECKPOINT\n"
FORMAT = 15  # 2: sharded ledger, exchange in flight; 3: groups draw arrivals (next_task), no
# driver shard; 4: ledger parts are .npy (a format 3 run directory holds parquet parts);
# 5: queued tasks are held as record bytes; 6: org versions, actions in flight, agent columns;
# 7: arrays and JSON instead of a pickle; 8: queue deadline calendars, agents' paid and
# tool_spend counters; 9: the budget period's base; 10: agents' spending in the period;
# 11: the call form an approval was asked for; 12: agents' automatic autonomy lowering;
# 13: long-term memory (the shards' content, groups' unsent writes, agents' experience);
# 14: HR (its history and decisions, the departments' state, groups' feeds and org decisions)
# 15: actions carry the model's tokens and cost; agents' plans of LLM mode
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
    memory: list[dict[str, object]]  # each memory shard's content as data (memory/service.py)
    hr: dict[str, object]  # the HR office's and departments' state (empty without hr)


def checkpoint_path(run_dir: Path, tick: int) -> Path:
    return run_dir / DIR_NAME / f"tick-{tick:08d}.ckpt"


def encode(ck: Checkpoint) -> bytes:
    payload = _pack(ck)
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
    try:
        return _unpack(payload)
    except (ValueError, KeyError, TypeError, IndexError, zipfile.BadZipFile, OSError) as exc:
        raise CheckpointError(f"{source}: unexpected checkpoint content ({exc})") from None


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
    manifest.record(path.parent, [path])
    return path


def read(path: Path) -> Checkpoint:
    manifest.verify(path)
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(f"{path}: checkpoint not found") from None
    return decode(blob, str(path))


def latest(run_dir: Path) -> Path:
    """The newest checkpoint its manifest lists (one written but not yet listed when the run
    died is passed over)."""
    found = sorted((run_dir / DIR_NAME).glob("tick-*.ckpt"))
    listed = manifest.read(run_dir / DIR_NAME)
    if listed is not None:
        found = [f for f in found if f.name in listed]
    if not found:
        raise CheckpointError(f"{run_dir}: no checkpoint to resume from "
                              "(set runtime.checkpoint_every to write them)")
    return found[-1]


def part_names(ck: Checkpoint) -> list[str]:
    """The ledger part files the checkpoint's state stands on, every shard's."""
    return [str(name) for g in ck.groups for name, _ in g["ledger"]["parts"]]  # type: ignore[index]


def verify_parts(run_dir: Path, ck: Checkpoint) -> None:
    """Every ledger part the checkpoint stands on is there and holds what was written."""
    for g in ck.groups:
        for name, digest in g["ledger"]["parts"]:  # type: ignore[index]
            path = run_dir / PARTS_DIR / str(name)
            if "/" in str(name) or not path.is_file():
                raise CheckpointError(f"{path}: missing (the checkpoint at tick {ck.tick} "
                                      "stands on it)")
            if file_digest(path) != digest:
                raise CheckpointError(f"{path}: changed or truncated since it was written (it "
                                      f"does not match the checkpoint at tick {ck.tick})")


def config_digest(config_json: str) -> str:
    return hashlib.sha256(config_json.encode()).hexdigest()[:16]


# ---- the payload: JSON structure, arrays beside it ---------------------------------------
_ARRAY, _TUPLE, _OBJECT = "__array__", "__tuple__", "__object__"


def _pack(ck: Checkpoint) -> bytes:
    arrays: list[np.ndarray] = []

    def tree(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                raise TypeError("object arrays have no place in a checkpoint")
            arrays.append(value)
            return {_ARRAY: len(arrays) - 1}
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise TypeError(f"checkpoint keys must be strings: {list(value)[:3]}")
            return {k: tree(v) for k, v in value.items()}
        if isinstance(value, tuple):
            return {_TUPLE: [tree(v) for v in value]}
        if isinstance(value, list):
            return [tree(v) for v in value]
        for cls, (name, fields) in _ENCODERS.items():
            if isinstance(value, cls):
                return {_OBJECT: name, "fields": tree(fields(value))}
        if value is None or isinstance(value, bool | int | float | str):
            return value
        raise TypeError(f"cannot checkpoint a {type(value).__name__}")

    structure = json.dumps(tree({f.name: getattr(ck, f.name) for f in dataclasses.fields(ck)}))
    buffer = io.BytesIO()
    named = {"tree": np.frombuffer(structure.encode(), dtype=np.uint8),
             **{f"a{i}": a for i, a in enumerate(arrays)}}
    np.savez(buffer, **named)  # type: ignore[arg-type]
    return buffer.getvalue()


def _unpack(payload: bytes) -> Checkpoint:
    with zipfile.ZipFile(io.BytesIO(payload)) as archive:
        members = archive.infolist()
        # stored, not compressed: what a member unpacks to is what the file holds
        if any(m.compress_type != zipfile.ZIP_STORED for m in members) or \
                sum(m.file_size for m in members) > len(payload):
            raise ValueError("compressed or oversized members")
    with np.load(io.BytesIO(payload), allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    structure = json.loads(arrays.pop("tree").tobytes())

    def build(value: Any) -> Any:
        if isinstance(value, list):
            return [build(v) for v in value]
        if not isinstance(value, dict):
            return value
        if _ARRAY in value:
            return arrays[f"a{int(value[_ARRAY])}"]
        if _TUPLE in value:
            return tuple(build(v) for v in value[_TUPLE])
        if _OBJECT in value:
            return _DECODERS[value[_OBJECT]](build(value["fields"]))
        return {k: build(v) for k, v in value.items()}

    fields = build(structure)
    if not isinstance(fields, dict) or set(fields) != {f.name for f in dataclasses.fields(Checkpoint)}:
        raise ValueError("not the fields of a checkpoint")
    return Checkpoint(**fields)


def _queues_fields(q: TaskQueues) -> dict[str, Any]:
    agents, tasks = q.to_arrays()
    return {"size": len(q.length), "agents": agents, "tasks": tasks}


# the only classes a checkpoint holds besides plain data, each made from plain fields
_ENCODERS: dict[type, tuple[str, Callable[[Any], Any]]] = {
    Exchange: ("exchange", lambda x: {"inputs": x.inputs}),
    TaskQueues: ("queues", _queues_fields),
    ShardTotals: ("shard_totals", lambda t: {f.name: getattr(t, f.name)
                                             for f in dataclasses.fields(t)}),
}
_DECODERS: dict[str, Callable[[Any], Any]] = {
    "exchange": lambda f: Exchange(inputs=list(f["inputs"])),
    "queues": lambda f: TaskQueues.from_arrays(int(f["size"]), f["agents"], f["tasks"]),
    "shard_totals": lambda f: _totals(f),
}


def _totals(f: dict[str, Any]) -> ShardTotals:
    """ShardTotals from its fields, each of the type it must be (writable copies)."""
    return ShardTotals(
        fingerprint=np.array(f["fingerprint"], dtype=np.uint64),
        rows=np.array(f["rows"], dtype=np.int64),
        event_counts=np.array(f["event_counts"], dtype=np.int64),
        message_kinds=np.array(f["message_kinds"], dtype=np.int64),
        completed=int(f["completed"]), failed=int(f["failed"]),
        action_status=np.array(f["action_status"], dtype=np.int64))
