"""Removing what runs leave in Docker.

A run removes its containers and workspace volumes when it ends or is interrupted
(`remove_run`). One killed outright cannot: its session containers stop by themselves when
their stdio client dies (they are auto-removed), and the next run sweeps the rest
(`sweep_dead`): containers whose owning process on this host is gone, and workspace volumes
whose run finished (its directory holds a summary) or whose directory is gone, or that were
a dead run's spares (never anyone's workspace). The volumes
of an interrupted run are kept: `synthorg resume` carries its workspaces on.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import aiodocker
import psutil

from sandbox.backend import LABEL_HOST, LABEL_PID, LABEL_RUN, LABEL_RUN_DIR, LABEL_SCOPE, SPARE


async def remove_run(docker: aiodocker.Docker, run_key: str, keep_volumes: bool = False
                     ) -> int:
    """Remove the run's containers and (unless `keep_volumes`: an interrupted run's, for
    resume) its workspace volumes; returns how many things were removed."""
    removed = 0
    label = f"{LABEL_RUN}={run_key}"
    for container in await docker.containers.list(all=True, filters={"label": [label]}):
        await _delete_container(container)
        removed += 1
    if keep_volumes:
        return removed
    volumes = await docker.volumes.list(filters={"label": [label]})
    for info in volumes.get("Volumes") or []:
        removed += await delete_volume(docker, info["Name"])
    return removed


async def sweep_dead(docker: aiodocker.Docker) -> int:
    """Remove the leftovers of dead runs on this host; returns how many."""
    host = socket.gethostname()
    removed = 0
    for container in await docker.containers.list(all=True, filters={"label": [LABEL_PID]}):
        labels = container._container.get("Labels") or {}
        if labels.get(LABEL_HOST) == host and not _alive(labels.get(LABEL_PID, "")):
            await _delete_container(container)
            removed += 1
    volumes = await docker.volumes.list(filters={"label": [LABEL_RUN]})
    for info in volumes.get("Volumes") or []:
        labels = info.get("Labels") or {}
        if labels.get(LABEL_HOST) != host or _alive(labels.get(LABEL_PID, "")):
            continue
        run_dir = labels.get(LABEL_RUN_DIR)
        if (labels.get(LABEL_SCOPE) == SPARE or run_dir is None or not Path(run_dir).is_dir()
                or (Path(run_dir) / "summary.json").exists()):
            removed += await delete_volume(docker, info["Name"])
    return removed


def _alive(pid: str) -> bool:
    return pid.isdigit() and psutil.pid_exists(int(pid))


async def _delete_container(container: aiodocker.containers.DockerContainer) -> None:
    try:
        await container.delete(force=True)
    except aiodocker.DockerError as exc:
        if exc.status not in (404, 409):  # gone, or being removed already
            raise


async def delete_volume(docker: aiodocker.Docker, name: str, tries: int = 1) -> int:
    """Delete a volume; one still mounted by a container going away is tried again up to
    `tries` times. Returns 1 if it was deleted."""
    for attempt in range(tries):
        try:
            volume = await docker.volumes.get(name)
            await volume.delete()
            return 1
        except aiodocker.DockerError as exc:
            if exc.status == 404:  # gone
                return 0
            if exc.status != 409:  # 409: in use
                raise
        if attempt + 1 < tries:
            await asyncio.sleep(0.1)
    return 0
