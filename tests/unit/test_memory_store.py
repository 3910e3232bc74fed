"""The memory stores through `MemoryBackend`: the real Mem0 store (embedded Qdrant, Mem0's
SQLite history, the local all-MiniLM-L6-v2 model) and the in-process one."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from synthorg.memory.backend import MemoryBatch
from synthorg.memory.embedders import MiniLMEmbedder, make_embedder
from synthorg.memory.inprocess import InProcessStore
from synthorg.memory.mem0_store import Mem0Store
from synthorg.memory.records import ORG, WRITE_DTYPE, Category, memory_keys
from synthorg.memory.texts import tags_of

NAMES = ("ana", "bob", "cy")


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def _batch(embedder, specs) -> MemoryBatch:
    """specs: (tick, agent, owner, category, helper, text) per memory."""
    rows = np.zeros(len(specs), dtype=WRITE_DTYPE)
    for i, (tick, agent, owner, category, helper, _) in enumerate(specs):
        rows[i] = (tick, agent, owner, i, category, 1, i, 0, 0, 0, 0.5, 0.8, 3, helper)
    texts = tuple(s[-1] for s in specs)
    return MemoryBatch(memory_keys(rows), rows, texts, tuple(tags_of(r) for r in rows),
                       embedder.embed(texts))


SPECS = [
    (1, 0, 0, Category.episodic, -1, "completed a hard bugfix task on testing"),
    (1, 1, 1, Category.episodic, -1, "completed a hard bugfix task on testing, ran the suite"),
    (2, 0, 0, Category.procedural, -1, "lesson: bugfix tasks on testing go well in steps"),
    (2, 1, 1, Category.social, 2, "cy helped with a bugfix task on testing"),
    (3, 2, ORG, Category.semantic, -1, "the organisation: engineering does bugfix tasks well"),
    (3, 2, 2, Category.episodic, -1, "failed a feature task on python"),
]


@pytest.fixture
def store(tmp_path, minilm):
    made = Mem0Store(tmp_path / "mem", minilm, NAMES)
    made.add(_batch(minilm, SPECS))
    yield made
    made.close()


def _search(store, embedder, owner, text, top_k=10, **kw):
    return store.search(embedder.embed([text]), np.array([owner]), top_k, **kw)


def test_an_agent_never_retrieves_a_colleagues_private_memories(store, minilm):
    for owner in (0, 1, 2):
        hits = _search(store, minilm, owner, "bugfix task on testing")
        assert set(hits["owner"].tolist()) <= {owner, ORG}
        assert ORG in hits["owner"]  # organisation memory is everyone's
    assert len(_search(store, minilm, 0, "bugfix task on testing")) == 3  # 2 own + 1 org


def test_ranking_is_by_score_then_by_key(store, minilm):
    hits = _search(store, minilm, 0, "bugfix task on testing")
    assert list(hits["rank"]) == list(range(len(hits)))
    assert np.all(np.diff(hits["score"]) <= 0)
    assert hits["score"][0] > 0.5  # the model, not noise: a near paraphrase scores high


def test_category_and_tag_filters(store, minilm):
    hits = _search(store, minilm, 1, "bugfix", categories=frozenset({Category.social}))
    assert hits["category"].tolist() == [Category.social]
    assert hits["helper"].tolist() == [2]
    hits = _search(store, minilm, 0, "bugfix", tags=frozenset({"lesson"}))
    assert set(hits["category"].tolist()) == {Category.procedural, Category.semantic}


def test_archive_hides_an_agent_and_restore_brings_it_back(store, minilm):
    before = _search(store, minilm, 0, "bugfix task on testing")
    assert store.archive(0) == 2
    assert _search(store, minilm, 0, "bugfix task on testing")["owner"].tolist() == [ORG]
    assert len(store.list(0)) == 0 and len(store.list(0, archived=True)) == 2
    assert store.archive(0) == 0  # already archived
    assert store.restore(0) == 2
    again = _search(store, minilm, 0, "bugfix task on testing")
    assert again.tobytes() == before.tobytes()


def test_delete_removes_exactly_the_keys(store, minilm):
    key = int(store.list(1).keys[0])
    assert store.delete(np.array([key, 12345])) == 1
    assert key not in store.list(1).keys.tolist()
    assert len(store.list(1)) == 1


def test_mem0s_own_api_reads_the_store(store):
    view = store.mem0_view(0)
    listed = view.get_all(filters={"user_id": "ana"})["results"]
    assert sorted(m["memory"] for m in listed) == sorted(s[-1] for s in SPECS if s[2] == 0)
    found = view.search("lesson about bugfix tasks", filters={"user_id": "ana"}, top_k=1)
    assert found["results"][0]["memory"].startswith("lesson:")
    history = view.history(listed[0]["id"])
    assert history and history[0]["event"] == "ADD"


def test_export_and_load_round_trip_without_the_stores_files(store, minilm, tmp_path):
    store.archive(2)
    batch, archived = store.export()
    data = {**batch.to_arrays(), "archived": archived}
    other = Mem0Store(tmp_path / "other", minilm, NAMES)
    try:
        other.load(MemoryBatch.from_arrays(data), np.asarray(data["archived"]))
        b2, a2 = other.export()
        assert b2.keys.tolist() == batch.keys.tolist() and a2.tolist() == archived.tolist()
        assert b2.rows.tobytes() == batch.rows.tobytes() and b2.texts == batch.texts
        for owner in (0, 1, 2):
            assert (_search(other, minilm, owner, "bugfix").tobytes()
                    == _search(store, minilm, owner, "bugfix").tobytes())
    finally:
        other.close()


def test_crafted_memory_data_is_refused():
    good = MemoryBatch.empty().to_arrays()
    with pytest.raises(ValueError):
        MemoryBatch.from_arrays({**good, "texts": json.dumps(["x"])})
    with pytest.raises(ValueError):
        MemoryBatch.from_arrays({**good, "keys": np.zeros(2, np.int64)})


def test_ties_are_broken_by_key_whatever_the_insertion_order(tmp_path, minilm):
    """Deterministic mode repeats texts: equal scores everywhere. The cut at top_k must take
    the smallest keys, however the store was filled."""
    specs = [(t, 0, 0, Category.episodic, -1, "completed a moderate bugfix task on testing")
             for t in range(40)]
    batch = _batch(minilm, specs)
    forward, backward = Mem0Store(tmp_path / "f", minilm), Mem0Store(tmp_path / "b", minilm)
    try:
        forward.add(batch)
        for i in reversed(range(len(batch))):
            backward.add(batch.take(np.array([i])))
        q = minilm.embed(["bugfix task on testing"])
        a = forward.search(q, np.array([0]), 5)
        b = backward.search(q, np.array([0]), 5)
        assert a.tobytes() == b.tobytes()
        assert a["key"].tolist() == sorted(batch.keys.tolist())[:5]
    finally:
        forward.close()
        backward.close()


def test_the_in_process_store_ranks_as_mem0_does(store, minilm):
    inproc = InProcessStore()
    inproc.add(_batch(minilm, SPECS))
    for owner in (0, 1, 2):
        a = _search(store, minilm, owner, "a bugfix on testing")
        b = _search(inproc, minilm, owner, "a bugfix on testing")
        assert a["key"].tolist() == b["key"].tolist()
        np.testing.assert_allclose(a["score"], b["score"], atol=1e-5)


def test_a_vector_does_not_depend_on_its_batch(minilm):
    texts = ["short", "a much longer text about a bugfix task on testing and more words"]
    alone = minilm.embed(texts[:1])
    fresh = make_embedder("minilm")
    together = fresh.embed(list(reversed(texts)))
    assert together[1].tobytes() == alone[0].tobytes()


_SCRIPT = textwrap.dedent("""
    import json, socket, sys
    connects = []

    def hook(event, args):
        if event in ("socket.connect", "socket.getaddrinfo", "socket.sendto"):
            target = args[1] if event == "socket.connect" else args
            if not (event == "socket.connect" and args[0].family == socket.AF_UNIX):
                connects.append(f"{event} {target!r}")

    sys.addaudithook(hook)
    import numpy as np
    from pathlib import Path
    from synthorg.memory.embedders import MiniLMEmbedder
    from synthorg.memory.mem0_store import Mem0Store
    from tests.unit.test_memory_store import SPECS, NAMES, _batch
    path, step = Path(sys.argv[1]), sys.argv[2]
    emb = MiniLMEmbedder()
    store = Mem0Store(path, emb, NAMES)
    if step == "write":
        store.add(_batch(emb, SPECS))
        store.archive(1)
    hits = store.search(emb.embed(["bugfix task on testing"]), np.array([0]), 5)
    mem0 = store.mem0_view(0).search("bugfix", filters={"user_id": "ana"}, top_k=3)
    archived_1 = len(store.list(1, True))
    store.close()
    seen = list(connects)
    try:  # the hook itself is checked: a connection attempted now must show
        socket.create_connection(("127.0.0.1", 9), timeout=1).close()
    except OSError:
        pass
    print(json.dumps({"keys": hits["key"].tolist(), "archived_1": archived_1,
                      "mem0": len(mem0["results"]), "connects": seen,
                      "probe_seen": len(connects) > len(seen)}))
""")


def test_the_store_persists_across_processes_and_never_reaches_the_network(tmp_path):
    """Two processes one after the other (embedded Qdrant is one process's at a time); each
    records every network connection attempted (an audit hook), and there must be none."""
    script = tmp_path / "probe.py"
    script.write_text(_SCRIPT)
    env_root = str(__import__("pathlib").Path(__file__).resolve().parents[2])
    outs = []
    for step in ("write", "read"):
        done = subprocess.run([sys.executable, str(script), str(tmp_path / "mem"), step],
                              capture_output=True, text=True, timeout=300, cwd=env_root,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": env_root,
                                   "HOME": str(tmp_path)})
        assert done.returncode == 0, done.stderr[-3000:]
        outs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    written, read = outs
    assert written["probe_seen"] and read["probe_seen"]
    assert written["connects"] == [] and read["connects"] == []
    assert read["keys"] == written["keys"] and len(read["keys"]) == 3
    assert read["archived_1"] == 2 and read["mem0"] >= 1
