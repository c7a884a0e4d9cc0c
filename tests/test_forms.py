"""Form from the sentence (issue 42, item 2): a candidate's inflected forms attested in the training target,
grouped by lemma key (`mwemt.testsets.forms`), offered to judged constraints as alternatives the model's score
chooses among (``forms`` > 1)."""

from __future__ import annotations

import json

import pytest

from mwemt.errors import InputError, MwemtError
from tests.conftest import requires_nmt
from tests.test_constraints_judged import baseline  # noqa: F401  (the tiny model, trained once per module)

TARGET = ["voglio sbarazzarmi di questo .", "devi sbarazzarti di lui .", "mi sono sbarazzato di tutto .",
          "lei si è sbarazzata di lui .", "voglio sbarazzarmi di lei .", "è stanca morta .", "sono stanco morto .",
          "sono stanco morto oggi .", "era stanca morta ."]


def index(table=None):
    from mwemt.preprocess.lemmatize import get_lemmatizer
    from mwemt.testsets.forms import FormIndex
    from mwemt.testsets.mwe_table import MweTranslationTable

    if table is None:
        table = MweTranslationTable()
        table.add("get rid of", ["sbarazzato", "di"], 2)
        table.add("dead tired", ["stanca", "morta"], 1)
        table.add("win", ["ha", "...", "vinto"], 1)
    lem = get_lemmatizer("simplemma", "it")
    tokens = [t.split() for t in TARGET]
    return table, FormIndex.build(table, tokens, [lem.lemmatize(t) for t in tokens], lemmatizer=lem)


def test_lemma_key_joins_clitics_and_enclitic_infinitives():
    from mwemt.preprocess.lemmatize import get_lemmatizer
    from mwemt.testsets.forms import lemma_key

    lem = get_lemmatizer("simplemma", "it")
    assert lemma_key(["sbarazzarmi", "di"], lemmatizer=lem) == lemma_key(["sbarazzarsi", "di"], lemmatizer=lem)
    assert lemma_key(["mi", "rendo", "conto"], lemmatizer=lem)[0] == lemma_key(["si", "rende", "conto"],
                                                                                lemmatizer=lem)[0] == "si"
    with pytest.raises(MwemtError):
        lemma_key(["x"])


def test_a_candidate_gets_the_forms_the_training_target_attests_most_frequent_first():
    _, forms = index()
    alts = forms.alternatives(("sbarazzato", "di"), limit=3)
    assert alts[0] == ("sbarazzato", "di")                          # the table's form first, always
    assert alts[1] == ("sbarazzarmi", "di") and len(alts) == 3      # attested twice, then the others by count
    assert set(forms.alternatives(("sbarazzato", "di"), limit=10)) == {
        ("sbarazzato", "di"), ("sbarazzarmi", "di"), ("sbarazzarti", "di"), ("sbarazzata", "di")}
    assert forms.alternatives(("stanca", "morta"), limit=2) == (("stanca", "morta"), ("stanco", "morto"))
    assert forms.alternatives(("stanca", "morta"), limit=1) == (("stanca", "morta"),)
    # a gapped translation, or one the target never has, is offered as it is
    assert forms.alternatives(("ha", "...", "vinto"), limit=3) == (("ha", "...", "vinto"),)
    assert forms.alternatives(("mai", "visto"), limit=3) == (("mai", "visto"),)
    with pytest.raises(MwemtError):
        forms.alternatives(("stanca", "morta"), limit=0)


def test_with_forms_keeps_each_phrase_once_and_the_limit():
    from mwemt.testsets.forms import with_forms

    _, forms = index()
    out = with_forms([("stanca", "morta"), ("stanco", "morto")], forms, 2)
    assert out == [("stanca", "morta"), ("stanco", "morto")]
    assert with_forms([("sbarazzato", "di"), ("stanca", "morta")], forms, 2, limit=3) == [
        ("sbarazzato", "di"), ("sbarazzarmi", "di"), ("stanca", "morta")]
    assert with_forms([("a", "b")], None, 3) == [("a", "b")]


def test_the_forms_file_round_trips_and_is_checked(tmp_path):
    from mwemt.testsets.forms import FormIndex

    _, forms = index()
    path = tmp_path / "forms.jsonl.gz"
    forms.write(path)
    again = FormIndex.read(path)
    assert again.forms == forms.forms and again.signature() == forms.signature()
    assert again.alternatives(("sbarazzato", "di"), 3) == forms.alternatives(("sbarazzato", "di"), 3)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"format": "mwemt-target-forms", "version": 1}) + "\n" + '{"lemmas": []}\n')
    with pytest.raises(InputError, match="bad row"):
        FormIndex.read(bad)
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(InputError):
        FormIndex.read(tmp_path / "empty.jsonl")


def test_options_refuse_ranking_and_forms_without_their_files_or_outside_judged():
    from mwemt.nmt.constraints import ConstraintOptions

    with pytest.raises(MwemtError, match="senses"):
        ConstraintOptions("judged", ranking="context")
    with pytest.raises(MwemtError, match="forms"):
        ConstraintOptions("judged", forms=3)
    with pytest.raises(MwemtError, match="judged"):
        ConstraintOptions("unordered", forms=3, forms_file="f")
    with pytest.raises(MwemtError):
        ConstraintOptions("judged", forms=0)
    assert ConstraintOptions("judged", forms=3, forms_file="f").forms == 3


@requires_nmt
def test_candidates_are_followed_by_their_forms(tmp_path):
    from mwemt.nmt.constraints import CandidateFinder, ConstraintOptions, TargetFrequency
    from tests.test_constraints_judged import Counts

    table, forms = index()
    path = tmp_path / "forms.jsonl.gz"
    forms.write(path)
    freq = TargetFrequency(Counts({"sbarazzato": 3, "di": 100}).d)
    finder = CandidateFinder(table, ConstraintOptions("judged", mwe_context="none", forms=3, forms_file=str(path)),
                             lang="en", lemmatizer="simplemma", max_gap=0, frequency=freq)
    cands = finder.candidates("get rid of")
    assert [c.text for c in cands] == ["sbarazzato di", "sbarazzarmi di", "sbarazzarti di"]   # ties by the tokens
    assert cands[0].count == 2 and cands[1].sources == ("form",) and cands[1].count == 0
    plain = CandidateFinder(table, ConstraintOptions("judged", mwe_context="none"), lang="en",
                            lemmatizer="simplemma", max_gap=0, frequency=freq)
    assert [c.text for c in plain.candidates("get rid of")] == ["sbarazzato di"]


@requires_nmt
@pytest.mark.nmt
def test_judged_decoding_lets_the_model_choose_among_the_forms(baseline, tmp_path):  # noqa: F811
    """Each form is decoded as a constraint of its own; the kept output has the form the model scored best."""
    from mwemt.nmt.constraints import ConstraintOptions, constrained_translate
    from mwemt.nmt.translate import Translator
    from mwemt.preprocess.lemmatize import get_lemmatizer
    from mwemt.testsets.forms import FormIndex
    from mwemt.testsets.mwe_table import MweTranslationTable

    table = MweTranslationTable()
    table.add("ivory tower", ["cane"], 1)
    lem = get_lemmatizer("simplemma", "it")
    target = [t.split() for t in ["il cane dorme .", "i cani dormono .", "due cani ."]]
    forms = FormIndex.build(table, target, [lem.lemmatize(t) for t in target], lemmatizer=lem)
    path = tmp_path / "forms.jsonl"
    forms.write(path)
    tr = Translator.load(baseline)
    line = ["My sister looks at the house in the ivory tower ."]
    options = ConstraintOptions("judged", mwe_context="none", threshold=1e6, forms=2, forms_file=str(path))
    hyps, report = constrained_translate(tr, line, table, options, beam=4, batch_size=2)
    (j,) = report.judgements
    assert j.mwes[0]["candidates"] == ["cane", "cani"] and j.failed == 0
    (kept,) = j.options                  # one MWE: its best candidate's output
    # each form alone, as the only candidate: the kept one is the form whose constrained output costs least
    drops = {}
    for word in ("cane", "cani"):
        alone = MweTranslationTable()
        alone.add("ivory tower", [word], 1)
        _, r = constrained_translate(tr, line, alone, ConstraintOptions("judged", mwe_context="none", threshold=1e6),
                                     beam=4, batch_size=2)
        drops[word] = r.judgements[0].options[0].drop
    assert kept.forced[0][1] == min(drops, key=drops.get) and kept.drop == pytest.approx(min(drops.values()))
    assert hyps[0] == kept.output and j.accepted == kept


@requires_nmt
@pytest.mark.nmt
def test_threshold_tuning_decodes_the_forms_and_records_the_files_by_name(baseline, tmp_path):  # noqa: F811
    from mwemt.nmt.constraints import ConstraintOptions, tune_threshold
    from mwemt.nmt.translate import Translator
    from mwemt.preprocess.lemmatize import get_lemmatizer
    from mwemt.testsets.forms import FormIndex
    from mwemt.testsets.mwe_table import MweTranslationTable

    table = MweTranslationTable()
    table.add("ivory tower", ["cane"], 1)
    lem = get_lemmatizer("simplemma", "it")
    target = [t.split() for t in ["il cane dorme .", "i cani dormono ."]]
    path = tmp_path / "forms.jsonl"
    FormIndex.build(table, target, [lem.lemmatize(t) for t in target], lemmatizer=lem).write(path)
    tr = Translator.load(baseline)
    sources = ["My sister looks at the house in the ivory tower .", "The dog sleeps ."]
    record = tune_threshold(tr, sources, ["la casa del cane .", "il cane dorme ."], table,
                            ConstraintOptions("judged", mwe_context="none", forms=2, forms_file=str(path)),
                            beam=3, batch_size=2)
    assert record["constrained_lines"] == 1 and record["options"]["forms"] == 2
    assert record["options"]["forms_file"] == "forms.jsonl"      # a name, not a path of this machine
