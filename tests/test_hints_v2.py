"""Hints the model learns to copy (issue 36, item 3): `hints.version: 2` annotates about half of the
training sentences that have a matching hint, tries the dictionary's translations first (the kind of
hint an MWE type unseen in training gets at translation time), writes every hinted training pair once
more without hints, and reports where the hints came from; version 1 (the default) and its cache
keys stay as they were."""

from __future__ import annotations

import json

from mwemt.preprocess.hints import (
    HintConfig,
    HintInserter,
    annotate_hint_pairs,
    hint_stream,
    hint_training_lines,
)
from mwemt.preprocess.lemmatize import get_lemmatizer
from mwemt.records import AnnotatedSentence, Mwe
from mwemt.schema import to_plain
from mwemt.testsets.mwe_table import MweTranslationTable
from tests.conftest import FIXTURES

V2 = HintConfig(version=2)
NMT = FIXTURES / "nmt"


def _table() -> MweTranslationTable:
    t = MweTranslationTable()
    t.add("take care of", ["curare"], 5)                   # attested by alignment, the most frequent
    t.add_dictionary([("take care of", "badare a")])      # the dictionary's (count 0: after it in table order)
    t.add("give up", ["rinunciare"], 3)
    t.add_dictionary([("get up", "alzarsi")])            # a type only the dictionary knows
    return t


def _sentence(text: str, mwes: list[tuple[tuple[int, ...], str]]) -> AnnotatedSentence:
    tokens = text.split()
    return AnnotatedSentence(tokens, [t.lower() for t in tokens], [Mwe(span, lemma) for span, lemma in mwes])


def _care() -> AnnotatedSentence:
    return _sentence("She took care of the dog", [((1, 2, 3), "take care of")])


def test_version_2_tries_the_dictionary_translations_first():
    ref = "Lei curava il cane e badava a lui".split()          # both translations occur in the reference
    assert HintInserter(_table()).training_hints(_care(), ref) == {0: ("curare",)}           # version 1: table order
    assert HintInserter(_table(), V2).training_hints(_care(), ref) == {0: ("badare", "a")}   # version 2
    # ... only where the reference has them: else the aligned one, as before
    assert HintInserter(_table(), V2).training_hints(_care(), "Lei curava il cane".split()) == {0: ("curare",)}
    # lemma-aware: the dictionary's citation form matched in an inflected reference
    up = _sentence("He got up early", [((1, 2), "get up")])
    assert HintInserter(_table(), V2).training_hints(up, "Si alzi presto".split()) == {}
    lemma = HintInserter(_table(), V2, lemmatizer=get_lemmatizer("simplemma", "it"))
    assert lemma.training_hints(up, "Si alzi presto".split()) == {0: ("alzarsi",)}
    # translation time is the same for both versions: the table's best, no reference
    assert HintInserter(_table(), V2).test_hints(_care()) == HintInserter(_table()).test_hints(_care())


def test_version_2_hints_half_of_the_matching_sentences_and_copies_each_plain():
    sents = [_care() for _ in range(40)] + [_sentence("The dog sleeps", []) for _ in range(60)]
    refs = [("Lei badava al cane" if k % 2 else "Lei curava il cane").split() for k in range(40)] + \
        [["Il", "cane", "dorme"]] * 60
    old, old_report = hint_training_lines(sents, refs, HintInserter(_table()), seed=3, plain_copies=True)
    assert old_report.hinted_sentences == 10 and len(old) == 100      # version 1: 10% of all 100, never copied
    assert sum(old_report.hint_sources.values()) == 10 and old_report.plain_copies == 0
    lines, report = hint_training_lines(sents, refs, HintInserter(_table(), V2), seed=3, plain_copies=True)
    assert report.eligible == 40 and report.hinted_sentences == 20    # half of the 40 with a matching hint
    assert report.plain_copies == 20 and len(lines) == 120 and len(report.copied) == 20
    for k, line in enumerate(lines):
        if "2" in hint_stream(line):                                   # a hinted line: its plain copy follows
            plain = lines[k + 1]
            assert set(hint_stream(plain)) == {"0"}
            assert [t.rsplit("|", 1)[0] for t in plain.split()] == _care().tokens
    d = report.as_dict()
    assert d["plain_copies"] == 20 and d["lines"] == 120 and d["hinted_share_of_eligible"] == 0.5
    assert d["hint_sources"]["dictionary"] == sum(1 for k in report.copied if k % 2)   # "badava": the dictionary's
    assert d["hint_sources"]["aligned"] == sum(1 for k in report.copied if not k % 2)
    # no copies where the caller says so (the validation split), and none without plain_copy
    assert len(hint_training_lines(sents, refs, HintInserter(_table(), V2), seed=3)[0]) == 100
    no_copy = HintInserter(_table(), HintConfig(version=2, plain_copy=False))
    assert len(hint_training_lines(sents, refs, no_copy, seed=3, plain_copies=True)[0]) == 100
    again, _ = hint_training_lines(sents, refs, HintInserter(_table(), V2), seed=3, plain_copies=True)
    assert again == lines                                              # seeded


def test_annotated_pairs_repeat_the_target_of_each_copy():
    from mwemt.preprocess.annotate import AnnotatorConfig, build_annotator
    from mwemt.records import LexiconEntry

    annotator = build_annotator(AnnotatorConfig(lang="en", filters="none"), [LexiconEntry(("take", "care", "of"))])
    pairs = [("She took care of the dog", "Lei badava al cane"), ("The dog sleeps", "Il cane dorme"),
             ("He took care of it", "Lui badava a esso")]
    done, report = annotate_hint_pairs(annotator, pairs, "it", HintInserter(_table(), V2), seed=1, plain_copies=True)
    assert report.hinted_sentences == 1 and report.plain_copies == 1   # half of the 2 matching sentences
    assert len(done.source) == len(done.target) == 4
    k = next(i for i, line in enumerate(done.source) if "2" in hint_stream(line))
    assert done.target[k] == done.target[k + 1] and set(hint_stream(done.source[k + 1])) == {"0"}
    assert [t.rsplit("|", 1)[0] for t in done.source[k + 1].split()] == \
        [t.rsplit("|", 1)[0] for t in done.source[k].split() if not t.endswith("|2")]


def test_the_keys_of_version_1_configs_do_not_change():
    """The version 2 settings are left out of `to_plain` (the cache key's form) at their defaults."""
    assert to_plain(HintConfig()) == {"rate": 0.1, "min_count": 1, "sources": ["aligned", "dictionary"]}
    assert to_plain(HintConfig(version=2)) == {**to_plain(HintConfig()), "version": 2}
    assert to_plain(HintConfig(version=2, matched_rate=0.4))["matched_rate"] == 0.4


def test_a_version_2_system_in_a_grid(tmp_path):
    """The documented example builds, only the v2 system's annotate section differs, and the annotate
    stage writes the copies (training split only) and hints.json's counts by source."""
    from mwemt.experiments import stages as S
    from mwemt.experiments.config import config_from_data
    from mwemt.experiments.runner import StageContext

    cfg = config_from_data({
        "name": "hints-v2", "seed": 1, "src_lang": "en", "tgt_lang": "it",
        "data": {"train": str(NMT / "train"), "valid": str(NMT / "valid"), "lexicon": str(NMT / "lexicon.txt"),
                 "lexicon_format": "list"},
        "hints": {"rate": 0.1},
        "systems": {"inline-hints": {"encoding": "hints"},
                    "inline-hints-v2": {"encoding": "hints", "hints": {"version": 2, "matched_rate": 0.5}}}})
    v1, v2 = cfg.systems["inline-hints"].hints, cfg.systems["inline-hints-v2"].hints
    assert v1 == HintConfig() and v2 == HintConfig(version=2)

    table = MweTranslationTable()
    table.add("by the way", ["a", "proposito"], 3)
    table.add_dictionary([("think about", "pensare")])
    table.write(tmp_path / "table.jsonl")
    section = S.AnnotateSection("en", "it", "hints", "list", "source", cfg.systems["inline-hints-v2"].preprocess)
    inputs = {f"{split}_{side}": NMT / f"{split}.{lang}" for split in ("train", "valid")
              for side, lang in (("src", "en"), ("tgt", "it"))}
    inputs.update(lexicon=NMT / "lexicon.txt", hint_table=tmp_path / "table.jsonl")
    out = tmp_path / "annotate"
    out.mkdir()
    outputs = S.hint_annotate_stage(StageContext("annotate", "inline-hints-v2", inputs,
                                                 S.HintAnnotateSection(section, v2, 1), out, 1, progress=False))
    hints = json.loads((out / outputs["hints"]).read_text(encoding="utf-8"))
    train, valid = hints["splits"]["train"], hints["splits"]["valid"]
    assert hints["hints"]["version"] == 2 and hints["hints"]["matched_rate"] == 0.5
    assert train["plain_copies"] == train["hinted_sentences"] > 0 and valid["plain_copies"] == 0
    assert train["hint_sources"]["dictionary"] > 0 and train["hint_sources"]["aligned"] > 0
    assert train["hinted_sentences"] == int(train["eligible"] * 0.5 + 0.5)
    src = (out / outputs["train_src"]).read_text(encoding="utf-8").splitlines()
    tgt = (out / outputs["train_tgt"]).read_text(encoding="utf-8").splitlines()
    assert len(src) == len(tgt) == 300 + train["plain_copies"]
    counts = json.loads((out / "annotate.json").read_text(encoding="utf-8"))["counts"]["train"]
    assert counts["pairs"] == len(src) and counts["plain_copies"] == train["plain_copies"]
