"""Each sentence's own output length limit in fairseq's batched search, so a batch never changes an output.

fairseq's `SequenceGenerator` stops every hypothesis of a batch at one length, ``max_len_a * S +
max_len_b`` with S the batch's longest source (with its end of sentence): a hypothesis that never ends
(common in a weak model) runs on to the longest sentence's limit, so its output depends on which
sentences share its batch. `SentenceLengthLimit` wraps the generator's search strategy and forces
the end of sentence for each sentence at the step where it would be forced if the sentence were
decoded alone (`limits_by_id`): the same choice fairseq makes at its global limit, one sentence at a
time. The generator's own loop, finalization and scoring are untouched.
"""

from __future__ import annotations

import math

import torch
from fairseq.search import Search


def limits_by_id(sample: dict, max_len_a: float, max_len_b: int, max_len: int, min_len: int = 1,
                 room: list[int] | None = None) -> torch.Tensor:
    """Per dataset id of a collated inference ``sample``: the step at which its output must end, what
    fairseq computes for a batch of that one sentence (``int(a * source length + b)``, at most the
    model's ``max_len - 1``, at least ``min_len``). ``room``: by dataset id, tokens added to ``b`` for that
    sentence (a constrained line's constraints)."""
    src = sample["net_input"]["src_tokens"]
    words = src if src.dim() == 2 else src[..., 0]   # a factored source: the word stream sets the length
    lengths = sample["net_input"].get("src_lengths")
    if lengths is None or lengths.dim() != 1:
        raise ValueError("an inference sample without 1-D src_lengths")
    ids = sample["id"]
    limits = torch.full((int(ids.max()) + 1,), max_len - 1, dtype=torch.long, device=words.device)
    extra = [0] * len(lengths) if room is None else [room[k] for k in ids.tolist()]
    own = [max(min(int(max_len_a * int(n) + (max_len_b + e)), max_len - 1), min_len)
           for n, e in zip(lengths.tolist(), extra)]
    limits[ids] = torch.tensor(own, dtype=torch.long, device=words.device)
    return limits


class SentenceLengthLimit(Search):
    """A search strategy that ends each sentence at its own length limit, then lets ``inner`` choose."""

    def __init__(self, inner: Search, tgt_dict):
        super().__init__(tgt_dict)
        self.inner = inner
        self.supports_constraints = inner.supports_constraints
        self.stop_on_max_len = inner.stop_on_max_len
        self.limits: torch.Tensor | None = None   # by dataset id; set for each batch (`limits_by_id`)

    def step(self, step, lprobs, scores, prev_output_tokens=None, original_batch_idxs=None):
        if self.limits is not None and original_batch_idxs is not None:
            done = self.limits[original_batch_idxs] <= step   # (sentences,)
            if bool(done.any()):
                lprobs[done, :, : self.eos] = -math.inf
                lprobs[done, :, self.eos + 1:] = -math.inf
        return self.inner.step(step, lprobs, scores, prev_output_tokens, original_batch_idxs)

    # the rest of the strategy's interface is the inner strategy's
    def set_src_lengths(self, src_lengths):
        self.inner.set_src_lengths(src_lengths)

    def init_constraints(self, batch_constraints, beam_size: int):
        self.inner.init_constraints(batch_constraints, beam_size)

    def prune_sentences(self, batch_idxs):
        self.inner.prune_sentences(batch_idxs)

    def update_constraints(self, active_hypos):
        self.inner.update_constraints(active_hypos)
