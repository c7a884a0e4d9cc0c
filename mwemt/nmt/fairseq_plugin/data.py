"""Source factors as extra binarized streams, batched exactly like the word stream.

A factored sample carries its source as a ``(length, factors)`` tensor, column 0 being the
words. Batches carry ``src_tokens`` as ``(batch, length, factors)``: that is the only shape
that survives fairseq's generator and every code path that rebuilds ``net_input``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from fairseq.data import LanguagePairDataset

from mwemt.errors import MwemtError


def check_factor_alignment(word_sizes: np.ndarray, factor_sizes: Sequence[np.ndarray],
                           factor_names: Sequence[str], split: str) -> None:
    """Fail on the first sentence whose factor stream is not as long as its word stream.

    fairseq-preprocess binarizes each stream on its own and never compares them, so a factor
    file shifted by one token would otherwise train silently on garbage.
    """
    for name, sizes in zip(factor_names, factor_sizes):
        if len(sizes) != len(word_sizes):
            raise MwemtError(
                f"split '{split}': the '{name}' factor stream has {len(sizes)} sentences but the word "
                f"stream has {len(word_sizes)}; re-run `mwemt prepare` on aligned files")
        bad = np.flatnonzero(np.asarray(sizes) != np.asarray(word_sizes))
        if len(bad):
            i = int(bad[0])
            raise MwemtError(
                f"split '{split}': sentence id {i} (line {i + 1}) has {int(word_sizes[i])} word tokens "
                f"but {int(sizes[i])} '{name}' factors ({len(bad)} sentence(s) differ); every token "
                "needs exactly one value per factor")


class FactoredLanguagePairDataset(LanguagePairDataset):
    """A `LanguagePairDataset` whose source has several aligned streams.

    ``factor_streams[k][i]`` is sentence ``i`` of factor ``k + 1`` (EOS included, as in the
    word stream). Batching, sorting and size filtering use the word stream, so a factored run
    sees exactly the batches of the matching baseline run.
    """

    def __init__(self, src, src_sizes, src_dict, factor_streams, factor_dicts, *args, **kwargs):
        super().__init__(src, src_sizes, src_dict, *args, **kwargs)
        if self.remove_eos_from_source or self.append_bos:
            raise MwemtError("factored sources do not support remove_eos_from_source or append_bos")
        self.factor_streams = list(factor_streams)
        self.factor_dicts = list(factor_dicts)
        for d in self.factor_dicts:
            if d.pad() != src_dict.pad():
                raise MwemtError("every factor dictionary must use the word dictionary's padding index")

    @property
    def n_factors(self) -> int:
        return 1 + len(self.factor_streams)

    def __getitem__(self, index):
        example = super().__getitem__(index)
        words = example["source"]
        columns = [words] + [stream[index] for stream in self.factor_streams]
        if any(len(c) != len(words) for c in columns):
            raise MwemtError(f"sentence id {index}: factor streams of lengths "
                             f"{[len(c) for c in columns]} do not align with the words")
        example["source"] = torch.stack(columns, dim=-1)
        return example

    def collater(self, samples, pad_to_length=None):
        if len(samples) == 0:
            return {}
        # the stock collater pads, sorts and builds targets from the word column ...
        word_samples = [dict(s, source=s["source"][:, 0]) for s in samples]
        batch = super().collater(word_samples, pad_to_length=pad_to_length)
        words = batch["net_input"]["src_tokens"]
        # ... and every factor goes into the same slots, in the batch's sort order
        bsz, width = words.shape
        full = words.new_full((bsz, width, self.n_factors), self.src_dict.pad())
        where = {s["id"]: s["source"] for s in samples}
        for row, sid in enumerate(batch["id"].tolist()):
            src = where[sid]
            if self.left_pad_source:
                full[row, width - len(src):] = src
            else:
                full[row, :len(src)] = src
        batch["net_input"]["src_tokens"] = full
        return batch
