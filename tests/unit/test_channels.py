"""The tick exchange's named channels: a group's output, flattened for transport, gives every
reader its share (its addressed part, every broadcast)."""

from __future__ import annotations

import numpy as np
import pytest

from synthorg.domain.records import MESSAGE_DTYPE
from synthorg.sim.channels import CHANNELS, Exchange, flat_inputs, flatten, from_flat, share, width


def _output(writer: int, groups: int) -> dict[str, object]:
    parts = []
    for reader in range(groups):
        part = np.zeros(writer + reader + 1, dtype=MESSAGE_DTYPE)
        part["src"], part["dst"] = writer, reader
        parts.append(part)
    return {"messages": parts, "loads": np.full(2, writer, dtype=np.int32),
            "spend": np.array([writer, 1], dtype=np.int64),
            "skills": np.full(3, writer / 10)}


@pytest.mark.parametrize("groups", [1, 2, 5])
def test_every_reader_gets_its_part_and_every_broadcast(groups):
    outputs = [flatten(_output(w, groups), groups) for w in range(groups)]
    assert all(len(o) == width(groups) for o in outputs)
    x = Exchange.gather(outputs)
    for reader in range(groups):
        got = x.inputs[reader]
        assert [len(m) for m in got["messages"]] == [w + reader + 1 for w in range(groups)]
        assert all((m["dst"] == reader).all() for m in got["messages"])
        assert [int(ld[0]) for ld in got["loads"]] == list(range(groups))
        assert share(outputs[0], reader, groups)["spend"] is outputs[0][-2]
        assert [float(k[0]) for k in got["skills"]] == [w / 10 for w in range(groups)]
        again = from_flat(flat_inputs(got), groups)
        assert {c.name for c in CHANNELS} == set(again)
        assert all(a is b for c in CHANNELS for a, b in zip(again[c.name], got[c.name], strict=True))
    assert Exchange.from_flat([x.flat(r) for r in range(groups)]).inputs[0].keys() == got.keys()


def test_a_missing_part_is_refused():
    with pytest.raises(ValueError, match="messages: 1 parts for 2 groups"):
        flatten(_output(0, 1), 2)
