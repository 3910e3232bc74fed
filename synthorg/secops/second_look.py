"""The second look: a linear model over a call's words and its task's words, trained on the
labelled corpora under tests/data/secops, scoring how much a call reads like the harmful ones.
A call's words are read twice more: those its task never says (`fresh`: a purge, a card, a
bucket the task never named) and those it repeats (`echo`), so a word can weigh differently
when the task asked for it.

The detectors name what they recognise; what none names (a WHERE that takes too much, a refund
to a new card, a look-alike bucket) still reads unlike ordinary work more often than not. A
call no detector flags, scored above `policies.security.second_look.escalate_above`, is asked
about. The score only ever adds caution: a bag of words is easily padded (ten ordinary words
appended to a harmful call pull almost any score down), so it never dismisses a detector's
finding nor softens a refusal. The score is arithmetic over the shipped weights: the same call
scores the same everywhere. Retrain with `synthorg secops train` (`make second-look`) when the
corpora change.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, repeat
from pathlib import Path

from synthorg.secops.calls import ToolCall

WEIGHTS = Path(__file__).with_name("second_look.json")
FORMAT = 2  # (1: without the fresh and echo words)
# words past this many characters of a call or a task are not read: a long program's first
# lines say what it is, and the cost stays bounded
MAX_TEXT = 4_000
_WORD = re.compile(r"[a-z0-9_]+(?:[.\-/@:][a-z0-9_]+)*")
# a compound's pieces are exactly the text's maximal runs of word characters
_PIECE = re.compile(r"[a-z0-9_]+")
# the model's inputs by kind, as the weights file names them
KINDS = ("tool", "call", "task", "fresh", "echo")


def _words(text: str) -> frozenset[str]:
    """Lower-case words, and a compound's pieces too (`billing-db.internal` gives billing,
    db and internal as well)."""
    text = text[:MAX_TEXT].lower()
    return frozenset(_WORD.findall(text)).union(_PIECE.findall(text))


# tasks repeat over many calls; a few hundred kept bound what crafted tasks can hold
_task_words = lru_cache(maxsize=256)(_words)


def call_words(call: ToolCall) -> frozenset[str]:
    return _words(" ".join(f"{name} {text}" for name, text in call.texts.items()))


def inputs(call: ToolCall) -> dict[str, frozenset[str]]:
    words = call_words(call)
    task = _task_words(call.task) if call.task else frozenset()
    return {"tool": frozenset((call.tool,)), "call": words, "task": task,
            "fresh": words - task if task else frozenset(), "echo": words & task}


@dataclass(frozen=True)
class SecondLook:
    bias: float
    weights: Mapping[str, Mapping[str, float]]  # kind -> word -> weight

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> SecondLook:
        try:
            data = json.loads(path.read_text())
            if data.get("format") != FORMAT:
                raise ValueError(f"format {data.get('format')!r}, expected {FORMAT}")
            weights = {kind: {str(w): float(x) for w, x in data["weights"][kind].items()}
                       for kind in KINDS}
            bias = float(data["bias"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}: not a second-look weights file ({exc})") from None
        if not all(map(math.isfinite, [bias, *(x for k in weights.values() for x in k.values())])):
            raise ValueError(f"{path}: weights must be finite numbers")
        return cls(bias, weights)

    def score(self, call: ToolCall) -> float:
        """How much the call reads like the harmful calls it was trained on, 0 to 1."""
        # fsum: exactly rounded whatever the order (a set's order changes with the process's
        # hash seed), so a score at a threshold falls the same side in every process
        z = math.fsum(chain((self.bias,), *(map(self.weights[kind].get, words, repeat(0.0))
                                            for kind, words in inputs(call).items())))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


@lru_cache(maxsize=1)
def shipped() -> SecondLook:
    return SecondLook.load()


@dataclass(frozen=True)
class Example:
    call: ToolCall
    harmful: bool
    corpus: str


def read_corpora(paths: Iterable[Path]) -> list[Example]:
    """The labelled lines of JSONL corpora (files, or folders read recursively, in name order):
    tool, arguments, task and label ("harmful"|"benign") as `secops check` reads them."""
    files: list[Path] = []
    for p in paths:
        files += sorted(p.rglob("*.jsonl")) if p.is_dir() else [p]
    examples = []
    for f in files:
        for number, line in enumerate(f.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                label = d["label"]
                if label not in ("harmful", "benign") or not isinstance(d["arguments"], dict):
                    raise ValueError("label must be harmful or benign, arguments an object")
                call = ToolCall(tool=str(d["tool"]), arguments=d["arguments"],
                                task=str(d.get("task") or ""))
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{f}:{number}: {exc}") from None
            examples.append(Example(call, label == "harmful", f.stem))
    return examples


def train(examples: list[Example], c: float = 1.0) -> dict[str, object]:
    """L2 logistic regression over the words, classes weighted to balance; the weights file's
    content. scikit-learn comes with sentence-transformers (the memory's embedder)."""
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    vocab: dict[tuple[str, str], int] = {}
    indices: list[int] = []
    indptr = [0]
    for ex in examples:
        for kind, words in inputs(ex.call).items():
            indices += [vocab.setdefault((kind, w), len(vocab)) for w in sorted(words)]
        indptr.append(len(indices))
    x = csr_matrix(([1.0] * len(indices), indices, indptr), shape=(len(examples), len(vocab)))
    y = [ex.harmful for ex in examples]
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=5_000, tol=1e-6)
    model.fit(x, y)
    coef = model.coef_[0]
    weights: dict[str, dict[str, float]] = {kind: {} for kind in KINDS}
    for (kind, word), i in sorted(vocab.items()):
        if abs(coef[i]) >= 1e-4:  # the rest move no score by a thousandth
            weights[kind][word] = round(float(coef[i]), 5)
    corpora = sorted({ex.corpus for ex in examples})
    return {"format": FORMAT, "c": c, "bias": round(float(model.intercept_[0]), 5),
            "trained_on": {"corpora": len(corpora), "calls": len(examples),
                           "harmful": sum(y)}, "weights": weights}
