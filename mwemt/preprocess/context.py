"""Contextual idiomatic/literal decisions, per occurrence, on the packaged offline sentence encoder.

The statistics of `mwemt.preprocess.filters` judge an occurrence by its entry and configuration;
the same lemmas in the same configuration can still be idiomatic in one sentence and literal in
the next. This optional filter looks at the sentence: the occurrence vector is the mean of the
encoder's last-layer states over the word pieces of the MWE's components (what the components mean
here), joined with the mean over the whole sentence (what the sentence is about); a logistic
regression, trained on the annotated (idiomatic) and unannotated (literal) look-up candidates of
the training .cupt file, gives P(idiomatic). Candidates below the threshold chosen by
cross-validation are removed (filter ``context``) and the probability becomes their confidence.

The encoder is all-MiniLM-L6-v2 (`mwemt.preprocess.sentence_encoder`), one forward pass per
sentence that has a candidate. It is far below 1,000 sentences/s per core on CPU, so the filter
is opt-in (``context=True`` when learning; docs/identification.md has the measured speed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mwemt.errors import MwemtError


class OccurrenceEncoder:
    """Vectors of MWE occurrences in context (components' piece mean + sentence mean)."""

    def __init__(self, encoder=None, max_length: int = 128):
        from mwemt.preprocess.sentence_encoder import load_encoder

        st = encoder if encoder is not None else load_encoder()
        self.tokenizer = st.tokenizer
        self.model = st[0].auto_model
        self.model.eval()
        self.max_length = max_length

    @property
    def dim(self) -> int:
        return 2 * int(self.model.config.hidden_size)

    def encode(self, sentences: Sequence[Sequence[str]], occurrences: Sequence[Sequence[tuple[int, ...]]],
               batch_size: int = 32) -> list[np.ndarray]:
        """For each sentence (its words), one row per occurrence (word indices), in the order given."""
        import torch

        out: list[np.ndarray] = []
        with torch.no_grad():
            for b in range(0, len(sentences), batch_size):
                words = [list(s) for s in sentences[b:b + batch_size]]
                batch = self.tokenizer(words, is_split_into_words=True, padding=True, truncation=True,
                                       max_length=self.max_length, return_tensors="pt")
                states = self.model(input_ids=batch["input_ids"],
                                    attention_mask=batch["attention_mask"]).last_hidden_state.numpy()
                mask = batch["attention_mask"].numpy()
                for k, occ in enumerate(occurrences[b:b + batch_size]):
                    h, m = states[k], mask[k].astype(bool)
                    sentence = h[m].mean(axis=0)
                    word_ids = batch.word_ids(k)
                    rows = []
                    for indices in occ:
                        wanted = set(indices)
                        pieces = [p for p, w in enumerate(word_ids) if w is not None and w in wanted]
                        # components cut off by truncation fall back on the sentence mean
                        rows.append(np.concatenate([h[pieces].mean(axis=0) if pieces else sentence, sentence]))
                    out.append(np.array(rows, dtype=np.float64).reshape(len(occ), -1))
        return out


@dataclass
class ContextClassifier:
    """Logistic regression on occurrence vectors: P(idiomatic) = sigmoid(x . weights + bias)."""

    weights: np.ndarray
    bias: float
    l2: float = 1.0

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        if x.size == 0:
            return np.zeros(0)
        return 1.0 / (1.0 + np.exp(-(x @ self.weights + self.bias)))

    def to_json(self) -> dict:
        return {"weights": [round(float(w), 6) for w in self.weights], "bias": round(float(self.bias), 6),
                "l2": self.l2}

    @classmethod
    def from_json(cls, d: dict) -> ContextClassifier:
        return cls(np.asarray(d["weights"], dtype=np.float64), float(d["bias"]), float(d.get("l2", 1.0)))


def fit_classifier(x: np.ndarray, y: np.ndarray, l2: float = 10.0) -> ContextClassifier:
    """L2-regularised logistic regression (L-BFGS); classes weighted to equal total weight."""
    from scipy.optimize import minimize

    if len(set(y.tolist())) < 2:
        raise MwemtError("the contextual classifier needs both idiomatic and literal training candidates")
    xb = np.hstack([x, np.ones((len(x), 1))])
    pos = y == 1
    weight = np.where(pos, 0.5 / pos.mean(), 0.5 / (1 - pos.mean()))

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = xb @ w
        p = 1.0 / (1.0 + np.exp(-z))
        eps = 1e-12
        value = -np.sum(weight * (y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))) + l2 * np.sum(w[:-1] ** 2)
        grad = xb.T @ (weight * (p - y))
        grad[:-1] += 2 * l2 * w[:-1]
        return float(value), grad

    w = minimize(loss, np.zeros(xb.shape[1]), jac=True, method="L-BFGS-B").x
    return ContextClassifier(w[:-1], float(w[-1]), l2)
