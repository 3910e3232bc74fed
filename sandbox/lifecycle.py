"""A run's sandboxes from the driver's side: checked before the first tick (a config that
needs them and finds no Docker daemon or image stops at once, saying what to do; leftovers of
dead runs are swept), and removed when the run ends, whatever became of the processes that
made them."""

from __future__ import annotations

import asyncio

import aiodocker

from sandbox.backend import IMAGE, SandboxUnavailable
from sandbox.cleanup import remove_run, sweep_dead


def ready(image: str = IMAGE) -> int:
    """Raise SandboxUnavailable unless a daemon answers and has the image; returns how many
    leftovers of dead runs were removed."""

    async def check() -> int:
        try:
            async with aiodocker.Docker() as docker:
                try:
                    await docker.images.inspect(image)
                except aiodocker.DockerError as exc:
                    if exc.status == 404:
                        raise SandboxUnavailable(
                            f"the sandbox image {image} is missing: run `make sandbox-image`"
                        ) from None
                    raise
                return await sweep_dead(docker)
        except (aiodocker.DockerError, OSError, ValueError) as exc:
            raise SandboxUnavailable(
                f"the config runs tools in sandboxes, and no Docker daemon answers ({exc}): "
                "run `make docker` (or start dockerd); tools are never run on the host "
                "instead") from None

    return asyncio.run(check())


def remove(run_key: str, keep_workspaces: bool = False) -> int:
    """Remove every container of the run and, unless it may be resumed, its workspaces."""

    async def go() -> int:
        async with aiodocker.Docker() as docker:
            return await remove_run(docker, run_key, keep_volumes=keep_workspaces)

    try:
        return asyncio.run(go())
    except (aiodocker.DockerError, OSError, ValueError):
        return 0  # the daemon went away: the next run's sweep removes what is left
