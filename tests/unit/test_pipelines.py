"""Which Ray pipeline a run takes, and how the pipelines report failures: a lost actor rolls
the run back, a bug does not."""

from __future__ import annotations

import pytest
import ray.exceptions as rex

from actors.pipelines import crashes_reported
from actors.ray_backend import pipeline_kind
from synthorg.errors import ActorCrashed, MisuseError


@pytest.mark.parametrize("lost", [
    rex.ActorDiedError(),
    rex.RayChannelError("Channel closed."),  # a compiled graph's peer went away
    rex.RayTaskError("step", "traceback", rex.ActorDiedError()),  # an input's actor died
])
def test_a_lost_actor_is_reported_as_a_crash(lost):
    with pytest.raises(ActorCrashed, match="tick 7"), crashes_reported(7):
        raise lost


def test_an_error_in_the_simulation_is_raised_as_it_is():
    bug = rex.RayTaskError("step", "traceback", ValueError("boom"))
    with pytest.raises(rex.RayTaskError) as raised, crashes_reported(7):
        raise bug
    assert raised.value is bug


def test_settling_is_named_when_no_tick_is_running():
    with pytest.raises(ActorCrashed, match="settling"), crashes_reported(-1):
        raise rex.ActorDiedError()


@pytest.mark.parametrize(("asked", "groups", "one_machine", "kind"), [
    ("auto", 2, True, "shm"),  # groups on one machine hand ticks over through shared memory
    ("auto", 40, True, "shm"),
    ("auto", 2, False, "graph"),  # across nodes: the graph while groups fit the cores
    ("auto", 3, False, "tasks"),
    ("graph", 2, True, "graph"),
    ("tasks", 2, True, "tasks"),
])
def test_the_pipeline_follows_where_the_groups_run(asked, groups, one_machine, kind):
    assert pipeline_kind(asked, groups, cpus=2, one_machine=one_machine) == kind


def test_shared_memory_across_nodes_is_refused_naming_the_field():
    with pytest.raises(MisuseError, match=r"runtime\.pipeline: shm needs every group on one"):
        pipeline_kind("shm", 2, cpus=4, one_machine=False)
