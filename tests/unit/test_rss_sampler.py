"""The bench's memory figure: whole-tree RSS, including processes started while it samples
(Ray starts its workers after the sampler)."""

from __future__ import annotations

import subprocess
import sys
import time

from synthorg.bench import RssSampler, tree_rss_bytes

MB = 2**20
ALLOCATE = "import sys; b = b'x' * (200 * 2**20); print('ready', flush=True); sys.stdin.read()"


def test_the_sampler_counts_a_child_started_after_it():
    before = tree_rss_bytes()
    with RssSampler(interval=0.01) as rss:
        while rss.peak == 0:  # the first look at the tree is done, without the child
            time.sleep(0.001)
        child = subprocess.Popen([sys.executable, "-c", ALLOCATE], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
            deadline = time.monotonic() + 10
            while rss.peak < before + 150 * MB and time.monotonic() < deadline:
                time.sleep(0.01)
            seen_while_running = rss.peak
        finally:
            child.kill()
            child.wait()
    assert seen_while_running >= before + 150 * MB
