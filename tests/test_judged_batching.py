"""Issue 42 item 6: judged constraints decode a line's constrained variants in one batch (one source, each variant
ending at its own length limit), and the options are those of decoding each variant alone."""

from __future__ import annotations

import pytest
import torch

from mwemt.nmt.fairseq_plugin.length_limit import limits_by_id
from tests.conftest import requires_nmt
from tests.test_probe4 import model  # noqa: F401  (the module's tiny trained model)


def test_limits_by_id_widens_each_sentence_by_its_own_room():
    sample = {"id": torch.tensor([2, 0, 1]),
              "net_input": {"src_tokens": torch.ones(3, 7, dtype=torch.long), "src_lengths": torch.tensor([7, 5, 3])}}
    plain = limits_by_id(sample, 1.2, 10, 1024)
    widened = limits_by_id(sample, 1.2, 10, 1024, room=[4, 0, 9])      # room by dataset id
    assert plain.tolist() == [int(1.2 * 5 + 10), int(1.2 * 3 + 10), int(1.2 * 7 + 10)]
    assert widened.tolist() == [int(1.2 * 5 + 14), int(1.2 * 3 + 10), int(1.2 * 7 + 19)]
    assert limits_by_id(sample, 1.2, 10, 12, room=[4, 0, 9]).tolist() == [11, 11, 11]   # the model's cap


@requires_nmt
@pytest.mark.nmt
def test_batched_variants_give_the_options_of_variants_decoded_alone(model, monkeypatch):  # noqa: F811
    from mwemt.nmt import constraints as C
    from mwemt.nmt.translate import Translator
    from tests.test_methods_model import LINES, constraint_table

    tr = Translator.load(model)
    table = constraint_table()

    def options():
        first, judgements, _ = C.JudgedConstraints(tr, table, C.ConstraintOptions("judged", mwe_context="none")).judge(
            LINES, beam=4, batch_size=64)
        return first, [(j.line, [(o.forced, o.output, o.drop) for o in j.options]) for j in judgements]

    batched = options()
    assert any(len(opts) for _, opts in batched[1]), "the fixture must give some line a constrained option"
    calls = []
    real = tr.translate

    def spy(lines, **kw):
        if kw.get("constraints") is not None:
            calls.append((len(lines), kw.get("batch_groups")))
        return real(lines, **kw)

    monkeypatch.setattr(tr, "translate", spy)
    options()
    assert calls and all(groups is not None for _, groups in calls)   # variants are grouped by their line
    monkeypatch.setattr(C, "VARIANT_BATCH", 1)                       # each variant alone, as before
    assert options() == batched
