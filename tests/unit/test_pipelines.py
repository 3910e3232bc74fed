"""How the Ray pipelines report failures: a lost actor rolls the run back, a bug does not."""

from __future__ import annotations

import pytest
import ray.exceptions as rex

from actors.pipelines import crashes_reported
from synthorg.errors import ActorCrashed


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
