"""Is a table match an MWE here? (issue 42, item 3): look-alike rules plus the MWE-in-context classifier with the
entries' categories at a recall-first threshold (`mwemt.preprocess.mwe_in_context`), and its use by judged
constraints (``mwe_context: in-context``)."""

from __future__ import annotations

import pytest

from mwemt.errors import InputError, MwemtError
from mwemt.records import Mwe
from tests.conftest import requires_nmt

VERBS = frozenset({"win", "attend", "be", "see", "go", "help", "make"})
CATEGORIES = {"go to": ("verb.stative",), "clock on": ("verb.communication",), "matter to": ("verb.stative",),
              "on it": ("adv.all",), "some other": ("adj.all",), "a few": ("adj.all",), "cell phone": ("verb.communication",),
              "look at": ("verb.perception",)}


def match(sentence: str, entry: str):
    """The tokens of ``sentence`` and the match of ``entry`` at its first occurrence (by surface or lemma)."""
    from mwemt.preprocess.lemmatize import get_lemmatizer

    forms = sentence.split()
    lemmas = get_lemmatizer("simplemma", "en").lemmatize(forms)
    words = entry.split()
    for i in range(len(forms) - len(words) + 1):
        if all(lemmas[i + k].lower() == w or forms[i + k].lower() == w for k, w in enumerate(words)):
            return forms, lemmas, Mwe(tuple(range(i, i + len(words))), entry)
    raise AssertionError(f"{entry!r} not in {sentence!r}")


def fired(sentence: str, entry: str) -> list[str]:
    from mwemt.preprocess.mwe_in_context import VerbForms, fired_rules

    forms, lemmas, m = match(sentence, entry)
    return fired_rules(m, forms, lemmas, CATEGORIES, VerbForms(VERBS))


def test_the_look_alikes_of_the_issue_are_rejected_and_their_mwe_readings_kept():
    # going to + verb is the future, not "go to"; going to + a place is
    assert fired("I 'm going to win .", "go to") == ["to-infinitive"]
    assert fired("I 'm going to school .", "go to") == []
    assert fired("I have an urgent matter to attend to .", "matter to") == ["to-infinitive"]
    # a particle and a pronoun object: literal, except after a form of "be"
    assert fired("This shirt has blood on it .", "on it") == ["particle-pronoun"]
    assert fired("Don 't worry , I 'm on it .", "on it") == []
    # bare determiners before their noun; with an article the quantifier is lexicalized
    assert fired("Let 's make it some other time .", "some other") == ["determiner-sequence"]
    assert fired("I lived there for a few years .", "a few") == []
    # a verb-and-particle entry after an article or a possessive reads as a noun
    assert fired("The clock on that tower is accurate .", "clock on") == ["noun-reading"]
    assert fired("I 'll explain the matter to you later .", "matter to") == ["noun-reading"]
    assert fired("We clock on at nine .", "clock on") == []
    # ... a verb-and-noun entry does not (OEWN lists "cell phone" as a verb only)
    assert fired("I lost my cell phone .", "cell phone") == []
    assert fired("Look at the sky .", "look at") == []


def test_verb_forms_follow_modals_and_leave_pronouns_and_adverbs_out():
    from mwemt.preprocess.mwe_in_context import VerbForms

    corpus = [s.split() for s in ["I can win .", "You will win .", "We did n't win .", "Can you help ?",
                                  "Will you help me ?", "They will also help .", "It will also win .",
                                  "I can help .", "You must help .", "The school is big .", "A school was built .",
                                  "He ca n't swim .", "We wo n't swim ."]]
    verbs = VerbForms.from_corpus(corpus)
    assert {"win", "help", "swim"} <= verbs.words
    assert "school" not in verbs and "you" not in verbs and "also" not in verbs


def test_tune_threshold_keeps_the_target_recall():
    from mwemt.preprocess.mwe_in_context import tune_threshold

    scored = [(0.9, 1), (0.8, 1), (0.5, 1), (0.3, 1), (0.7, 0), (0.2, 0), (0.1, 0)]
    t, record = tune_threshold(scored, 0.75)
    assert t == 0.5 and record["recall"] == 0.75 and record["precision"] == 0.75
    assert tune_threshold(scored, 1.0)[0] == 0.3
    with pytest.raises(MwemtError):
        tune_threshold([(0.5, 0)], 0.9)
    with pytest.raises(MwemtError):
        tune_threshold(scored, 0.0)


def test_the_bundled_decision_wraps_the_bundled_classifier_and_restores_categories(tmp_path):
    from mwemt.preprocess.mwe_context import bundled_model
    from mwemt.preprocess.mwe_in_context import InContextDecision, bundled_decision

    d = bundled_decision()
    assert 0.0 < d.threshold < bundled_model().thresholds.min_probability   # recall first
    assert d.meta["tuning"]["target_recall"] == 0.95 and d.meta["source"]["files"]["dimsum_train"]
    assert "win" in d.verbs and "school" not in d.verbs
    assert d.categories["clock on"] == ("verb.communication",)
    forms, lemmas, m = match("I 'm going to win the race .", "go to")
    forms2, lemmas2, m2 = match("Tom is going to school .", "go to")
    kept, rejected = d.apply([m], forms, lemmas)
    assert not kept and rejected[0][1] == "lookalike:to-infinitive"
    # the category changes the classifier's probability: it is what the constraint look-up lacks
    bare = bundled_model().probabilities([m2], forms2, lemmas2)[0]
    assert d.probabilities([m2], forms2, lemmas2)[0] != bare
    # every match a rule lets through is judged at the threshold
    low, high = d.with_threshold(0.0), d.with_threshold(1.0)
    assert low.apply([m2], forms2, lemmas2)[0] and not high.apply([m2], forms2, lemmas2)[0]
    assert high.apply([m2], forms2, lemmas2)[1][0][1] == "mwe-context"
    assert d.without(["mwe-context"]).threshold == 0.0 and "to-infinitive" not in d.without(
        ["lookalike:to-infinitive"]).rules
    # saved and read back: the same decisions and signature
    path = tmp_path / "decision.json.gz"
    d.save(path)
    again = InContextDecision.load(path)
    assert again.signature == d.signature and again.categories == d.categories


def test_a_decision_file_is_checked():
    from mwemt.preprocess.mwe_in_context import RULES, InContextDecision, VerbForms, bundled_decision

    with pytest.raises(MwemtError):
        InContextDecision(bundled_decision().classifier, {}, VerbForms(()), 1.5)
    with pytest.raises(MwemtError):
        InContextDecision(bundled_decision().classifier, {}, VerbForms(()), 0.5, rules=("no-such-rule",))
    assert set(bundled_decision().rules) == set(RULES)


def test_a_decision_file_names_its_classifier(tmp_path):
    import gzip
    import json

    from mwemt.preprocess.mwe_in_context import InContextDecision, bundled_decision

    path = tmp_path / "d.json.gz"
    bundled_decision().save(path)
    obj = json.loads(gzip.decompress(path.read_bytes()))
    obj["classifier"] = "mwe-context:other@000000000000"
    path.write_bytes(gzip.compress(json.dumps(obj).encode()))
    with pytest.raises(InputError, match="wraps classifier"):
        InContextDecision.load(path)
    (tmp_path / "x.json").write_text('{"kind": "something else"}')
    with pytest.raises(InputError):
        InContextDecision.load(tmp_path / "x.json")


@requires_nmt
def test_judged_constraints_read_in_context_matches_only():
    from mwemt.nmt.constraints import CandidateFinder, ConstraintOptions, TargetFrequency
    from mwemt.testsets.mwe_table import MweTranslationTable
    from tests.test_constraints_judged import Counts

    table = MweTranslationTable()
    table.add("go to", ["andare", "a"], 5)
    table.add("on it", ["sopra"], 2)
    freq = TargetFrequency(Counts({"andare": 10, "a": 100, "sopra": 5}).d)

    def found(sentence, context):
        finder = CandidateFinder(table, ConstraintOptions("judged", mwe_context=context), lang="en",
                                 lemmatizer="simplemma", max_gap=0, frequency=freq)
        return [m.key for m in finder.mwes(sentence.split())[0]]

    assert found("I 'm going to win .", "none") == ["go to"]
    assert found("I 'm going to win .", "in-context") == []
    assert found("This shirt has blood on it .", "in-context") == []
    with pytest.raises(MwemtError, match="mwe_context"):
        ConstraintOptions("judged", mwe_context="no-such-model")
