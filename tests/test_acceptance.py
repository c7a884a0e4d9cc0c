"""Guarded acceptance of judged constraints (issue 42 item 4): never an output the degenerate-output check flags,
and a threshold that moves less with the few tuning lines that decide it (the median no-loss point of seeded
resamples of the tuning lines). Decoding tests use the tiny baseline of tests/test_constraints_judged.py."""

from __future__ import annotations

import pytest

from mwemt.errors import MwemtError
from tests.conftest import requires_nmt
from tests.test_constraints_judged import NMT, baseline, lines_and_table  # noqa: F401 (the module fixture)


def test_a_degenerate_option_is_never_chosen_whatever_its_drop():
    from mwemt.nmt.constraints import Option, choose

    loop = Option((("a b", "x"), ("c d", "w")), "x w w w w", 0.01, frozenset({"loop"}))
    fine = Option((("a b", "x"),), "x y", 0.2)
    assert choose([loop, fine], 1.0) is fine          # the loop forces more MWEs, costs less, and is refused
    assert choose([loop], 1.0) is None                # only a degenerate option: the first pass stays
    assert choose([Option(loop.forced, loop.output, loop.drop)], 1.0) is not None   # plain: no flags read


def test_guarded_reads_the_degenerate_check_and_plain_reads_nothing():
    from mwemt.nmt.constraints import ConstraintOptions, JudgedConstraints

    judged = JudgedConstraints.__new__(JudgedConstraints)     # only the options and the tokenized input are read
    judged.translator = None
    judged.options = ConstraintOptions("judged", acceptance="guarded")
    assert judged._degenerate("he walked away .", "se ne andò via .", "tokenized") == frozenset()
    assert "loop" in judged._degenerate("he walked away .", "se ne andò via via via via .", "tokenized")
    assert "appended" in judged._degenerate("he walked away .", "se ne andò . il cane . il gatto .", "tokenized")
    judged.options = ConstraintOptions("judged")
    assert judged._degenerate("he walked away .", "via via via via via .", "tokenized") == frozenset()


def test_the_guard_flags_what_the_report_counts():
    """A detokenized output whose second sentence starts in lower case ("in modo. ha avuto luogo."): the Moses
    tokens keep "modo." whole, so a guard on them saw one sentence where the instrument's report counts two (found
    in cpu-science-4: 38 appended lines on the MWE test accepted by guarded acceptance)."""
    from mwemt.evaluate.degenerate import degenerate_line
    from mwemt.nmt.constraints import ConstraintOptions, JudgedConstraints

    judged = JudgedConstraints.__new__(JudgedConstraints)
    judged.translator = None
    judged.options = ConstraintOptions("judged", acceptance="guarded")
    source, output = "Changes are taking place .", "Le arance sono in modo. ha avuto luogo."
    assert degenerate_line(source, output) == frozenset({"appended"})
    assert judged._degenerate(source, output, "tokenized") == degenerate_line(source, output)
    for out in ("Sta piovendo. il cane dorme.", "Va bene... sì.", "Lui se n'è andato via.", "Ciao!! Ciao!! Ciao!!"):
        assert judged._degenerate("It rains .", out, "tokenized") == degenerate_line("It rains .", out)


def test_acceptance_is_checked_at_the_edge():
    from mwemt.experiments.config import config_from_data
    from mwemt.nmt.constraints import ConstraintOptions
    from mwemt.schema import ConfigError

    with pytest.raises(MwemtError, match="acceptance 'sometimes'"):
        ConstraintOptions("judged", acceptance="sometimes")
    with pytest.raises(MwemtError, match="needs constraint mode 'judged'"):
        ConstraintOptions("unordered", acceptance="guarded")
    data = {"data": {"train": str(NMT / "train"), "valid": str(NMT / "valid"), "lexicon": str(NMT / "lexicon.txt"),
                     "lexicon_format": "list"},
            "systems": {"baseline": {"translate": {"constraints": "unordered", "constraint_acceptance": "guarded"}}}}
    with pytest.raises(ConfigError, match="constraint_acceptance"):
        config_from_data(data)
    data["systems"]["baseline"]["translate"]["constraint_acceptance"] = "always"
    with pytest.raises(ConfigError, match="constraint_acceptance"):
        config_from_data(data)


def test_the_default_keeps_the_stage_keys_of_earlier_runs():
    """plain is the default and is left out of the stage configuration, so cached judged stages keep their keys."""
    from mwemt.experiments.stages import JudgedConstraintSection
    from mwemt.schema import to_plain

    plain = JudgedConstraintSection("judged", 1, ("aligned", "dictionary"))
    assert "acceptance" not in to_plain(plain)
    guarded = JudgedConstraintSection("judged", 1, ("aligned", "dictionary"), acceptance="guarded")
    assert to_plain(guarded)["acceptance"] == "guarded" and guarded.options(0.5).acceptance == "guarded"


def test_the_resampled_threshold_is_the_median_no_loss_point_and_seeded():
    """Ten tuning lines; a threshold of 1 accepts line 0 (a loss), 2 also line 1 (a gain). On all lines the
    gain outweighs the loss (the no-loss point is 2); a resample without line 1 but with line 0 says 0."""
    import numpy as np

    from mwemt.nmt.constraints import resampled_no_loss

    def curve_of(w: np.ndarray):
        return [(0.0, 10.0, 0), (1.0, 10.0 - w[0], 1), (2.0, 10.0 - w[0] + 1.5 * w[1], 2)]

    r = resampled_no_loss(curve_of, 10)
    # P(line 0 drawn and line 1 not, or line 1 drawn too rarely) is small: most resamples keep the gain
    assert r["median"] == 2.0 and r["q10"] == 0.0 and r["q90"] == 2.0
    assert resampled_no_loss(curve_of, 10) == r                           # seeded: the same every time
    assert resampled_no_loss(curve_of, 10, seed=7)["median"] == 2.0


@requires_nmt
@pytest.mark.nmt
def test_guarded_tuning_and_decoding_never_accept_a_degenerate_output(baseline):  # noqa: F811
    """The tiny baseline writes loops (`il il il ...`): every constrained option is flagged, so guarded tuning
    records a threshold below every drop, accepts nothing, and decoding keeps the first pass; plain accepts."""
    from mwemt.evaluate.degenerate import degenerate_flags
    from mwemt.nmt.constraints import (
        ConstraintOptions,
        JudgedConstraints,
        constrained_translate,
        tune_threshold,
    )
    from mwemt.nmt.translate import Translator
    from mwemt.preprocess.tokenize import tokenize

    lines, table = lines_and_table()
    tr = Translator.load(baseline)
    options = ConstraintOptions("judged", mwe_context="none", acceptance="guarded")
    first, judgements, _ = JudgedConstraints(tr, table, options).judge(lines, beam=4, batch_size=3)
    flagged = [o for j in judgements for o in j.options]
    assert flagged and all(o.degenerate == degenerate_flags(tr.annotator.tokens(lines[j.line - 1]),
                                                            tokenize(o.output))
                           for j in judgements for o in j.options)
    forced = list(first)
    for j in judgements:
        forced[j.line - 1] = min(j.options, key=lambda o: (-len(o.forced), o.drop)).output
    rec = tune_threshold(tr, lines, forced, table, options, beam=4, batch_size=3)
    assert "median" in rec["rule"] and rec["resampled_no_loss"]["resamples"] == 200
    assert all(o.degenerate for o in flagged) and all(accepted == 0 for _, _, accepted in rec["curve"])
    hyps, report = constrained_translate(tr, lines, table, ConstraintOptions("judged", mwe_context="none",
                                                                             acceptance="guarded", threshold=100.0),
                                         beam=4, batch_size=3)
    assert report.accepted == 0 and hyps == first        # even with a threshold that lets every drop through
    plain = constrained_translate(tr, lines, table, ConstraintOptions("judged", mwe_context="none", threshold=100.0),
                                  beam=4, batch_size=3)[1]
    assert plain.accepted == 3 > report.accepted
