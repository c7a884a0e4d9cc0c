"""The degenerate-output counter (mwemt.evaluate.degenerate) on hand-made lines: loops, over-long outputs,
fragments appended after a sentence end, and a line's flags depending on that line alone."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mwemt.evaluate.degenerate import (
    APPENDED,
    LONG,
    LOOP,
    DegenerateCounter,
    DegenerateSettings,
    count_test,
    degenerate_flags,
    degenerate_line,
    expected_ratio,
    long_bound,
    sentence_count,
    tokenize,
)


def test_tokenize_keeps_numbers_and_elisions_whole():
    assert tokenize("L'uomo pesa 3.5 kg... davvero?!") == ["L'uomo", "pesa", "3.5", "kg", "...", "davvero", "?!"]


@pytest.mark.parametrize("hyp", [
    "mezzo mezzo mezzo per il cibo",                       # one token, three times in a row
    "è un , è un , è un , vero",                           # a 3-token span three times
    "Stati STATI stati stati",                             # case does not hide a loop
    "se ne andò via . se ne andò via .",                   # a 5-token span twice
    "a riveveveveve prezzi",                               # a subword loop inside one token
])
def test_loops_are_flagged(hyp):
    assert LOOP in degenerate_line("he walked away .", hyp)


@pytest.mark.parametrize("hyp", [
    "molto molto bene",                                    # twice: not yet a loop
    "aspetta ... aspetta",                                 # a punctuation run is no loop
    "è un bel giorno , è un bel giorno",                   # 4 tokens twice (short spans need 3 times)
    "1000000 di persone",                                  # repeated digits are a number
    "Ha ha!",
])
def test_ordinary_lines_are_not_loops(hyp):
    assert LOOP not in degenerate_line("he walked away .", hyp)


def test_a_repetition_the_source_has_is_no_loop():
    assert degenerate_line("very very very good .", "molto molto molto buono .") == frozenset()
    assert degenerate_line("very good .", "molto molto molto buono .") == {LOOP}
    # the source repeats twice, the output four times: more than the source, a loop
    assert degenerate_line("no , no .", "no no no no .") == {LOOP}
    assert degenerate_line("hmmmm ok", "hmmmm va bene") == frozenset()


def test_appended_fragments():
    assert APPENDED in degenerate_line("He walked away.", "Se ne andò. Via via.")
    assert APPENDED in degenerate_line("Breathe out .", "Branda . Espirare .")          # tokenized text too
    assert APPENDED in degenerate_line("Tough luck!", "È fortuna! Tom! Disdetta!")
    assert APPENDED in degenerate_line("He said no.", 'Disse "no." poi basta')          # after closing quotes
    assert APPENDED not in degenerate_line("He walked away.", "Se ne andò.")
    assert APPENDED not in degenerate_line("It costs 3.5 euros.", "Costa 3.5 euro.")   # a decimal point
    assert APPENDED not in degenerate_line("Mr. Smith left.", "Sig. Rossi è partito.")  # as many on both sides
    assert APPENDED not in degenerate_line("Run! Now.", "Corri! Adesso.")              # the source has two
    assert APPENDED not in degenerate_line("Really?", "Davvero?!")
    assert sentence_count(tokenize("...")) == 0 and sentence_count(tokenize("Sì. No. Forse")) == 3


def test_long_outputs_against_the_bound():
    s = DegenerateSettings()
    src = ["w"] * 10
    assert long_bound(10, 1.1, s) == pytest.approx(27.0)                                # 2 x 1.1 x 10 + 5
    assert LONG not in degenerate_flags(src, [f"t{i}" for i in range(27)], expected_ratio=1.1)
    assert LONG in degenerate_flags(src, [f"t{i}" for i in range(28)], expected_ratio=1.1)
    assert LONG in degenerate_flags(src, [f"t{i}" for i in range(28)], expected_ratio=1.0)   # bound 25
    assert LONG not in degenerate_flags(src, [f"t{i}" for i in range(28)], expected_ratio=1.2)  # bound 29
    # a short source gets the slack: "Hi." -> five words is not long
    assert LONG not in degenerate_line("Hi .", "Ciao a tutti voi !")


def test_expected_ratio_is_the_median_reference_source_ratio():
    sources = ["a b", "a b c d", "a b c d e", ""]
    refs = ["x y z", "x y z w", "x", "x y"]                 # 1.5, 1.0, 0.2; the empty source is left out
    assert expected_ratio(sources, refs) == pytest.approx(1.0)
    assert DegenerateCounter.for_test(sources, refs).expected_ratio == pytest.approx(1.0)
    assert expected_ratio([], []) == 1.0


def test_without_a_source_only_loops_are_judged():
    assert degenerate_flags(None, tokenize("Sì. No. Forse. Forse forse forse")) == {LOOP}
    counted = count_test(None, None, {"a": ["ok ok ok ok", "va bene . poi ."]})
    assert counted["with_source"] is False
    assert counted["systems"]["a"] == {"lines": 2, "loop": 1, "long": None, "appended": None, "any": 1}


def test_flags_of_a_line_depend_on_that_line_alone():
    sources = ["He walked away .", "Tough luck !", "I lived in Boston .", "Come along .", "It is late ."]
    refs = ["Se ne andò .", "Che sfortuna !", "Ho vissuto a Boston .", "Vieni con noi .", "È tardi ."]
    base = ["Se ne andò .", "Sfortuna !", "Ho vissuto a Boston .", "Vieni .", "È tardi ."]
    # shares all lines with the baseline but two: one loops, one gets a fragment appended
    other = list(base)
    other[1] = "Sfortuna sfortuna sfortuna !"
    other[3] = "Vieni . Accompagna ."
    counter = DegenerateCounter.for_test(sources, refs)
    rows_base = counter.sentence_stats(sources, base).rows
    rows_other = counter.sentence_stats(sources, other).rows
    changed = np.flatnonzero((rows_base != rows_other).any(axis=1))
    assert list(changed) == [1, 3]
    for i, (s, h) in enumerate(zip(sources, other)):               # each row is the line's own verdict
        flags = degenerate_line(s, h, expected_ratio=counter.expected_ratio)
        assert [bool(x) for x in rows_other[i, :3]] == [f in flags for f in (LOOP, LONG, APPENDED)]
        assert bool(rows_other[i, 3]) == bool(flags)
    # a line scored alone, or among other lines, gets the same flags
    alone = counter.sentence_stats(sources[1:2], other[1:2]).rows
    assert (alone[0] == rows_other[1]).all()
    counted = count_test(sources, refs, {"base": base, "other": other}, examples=2)
    assert counted["systems"]["other"]["loop"] == 1 and counted["systems"]["other"]["appended"] == 1
    assert counted["systems"]["other"]["any"] == 2 and counted["systems"]["base"]["any"] == 0
    assert counted["systems"]["other"]["examples"] == {"loop": [2], "appended": [4]}


def test_signature_names_every_setting():
    sig = str(DegenerateCounter(0.9).signature())
    assert sig.startswith("Degenerate|") and "n1-4x3" in sig and "n5+x2" in sig and "char1-4x4" in sig
    assert "long:2x0.900+5" in sig and "|version:" in sig
    assert str(DegenerateCounter(0.9, DegenerateSettings(long_factor=3.0)).signature()) != sig
    with pytest.raises(ValueError):
        DegenerateSettings(loop_short_repeats=1)
    with pytest.raises(ValueError):
        DegenerateCounter(0.0)
    with pytest.raises(ValueError):
        DegenerateCounter(1.0).sentence_stats(["a"], ["a", "b"])


def test_mwemt_compare_shows_degenerate_outputs(tmp_path):
    from mwemt.evaluate.bootstrap import BootstrapSettings
    from mwemt.evaluate.compare import CompareSettings, compare_systems, load_compare_inputs, write_report

    sources = ["He walked away .", "Tough luck !", "I lived in Boston .", "Come along .", "It is late ."]
    refs = ["Se ne andò .", "Che sfortuna !", "Ho vissuto a Boston .", "Vieni con noi .", "È tardi ."]
    base = ["Se ne andò .", "Sfortuna !", "Ho vissuto a Boston .", "Vieni .", "È tardi ."]
    other = ["Se ne andò .", "Sfortuna sfortuna sfortuna !", "Ho vissuto a Boston .", "Vieni . Accompagna .",
             "È tardi ."]
    files = {}
    for name, lines in (("src", sources), ("ref", refs), ("base", base), ("other", other)):
        files[name] = tmp_path / f"{name}.txt"
        files[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    inputs = load_compare_inputs([("base", files["base"]), ("other", files["other"])], ref=files["ref"],
                                 src=files["src"], lang="it")
    r = compare_systems(inputs, settings=CompareSettings(bootstrap=BootstrapSettings(20)))
    d = r["degenerate"]
    assert d["with_source"] and d["signature"].startswith("Degenerate|")
    assert {k: d["systems"]["other"][k] for k in ("lines", "loop", "long", "appended", "any")} == \
        {"lines": 5, "loop": 1, "long": 0, "appended": 1, "any": 2}
    assert [(e["flag"], e["sentence"]) for e in d["systems"]["other"]["examples"]] == [("loop", 2), ("appended", 4)]
    assert r["bleu_parts"]["other"]["vs_baseline"] is not None and "bp" in r["bleu_parts"]["base"]
    paths = write_report(tmp_path / "report", r)
    md = paths["report.md"].read_text(encoding="utf-8")
    assert "## Degenerate outputs" in md and "| other | 1 (20.0%) | 0 (0.0%) | 1 (20.0%) | 2 (40.0%) | +2 |" in md
    assert "- other, sentence 4, appended: source: Come along . \u2192 Vieni . Accompagna ." in md
    html = paths["index.html"].read_text(encoding="utf-8")
    assert 'id="degenerate-table"' in html and 'id="bleu-parts-table"' in html
    assert json.loads(paths["report.json"].read_text())["degenerate"]["systems"]["other"]["any"] == 2
