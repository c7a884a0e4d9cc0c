"""The MWE translation table (`mwemt.testsets.mwe_table`) and the complete, minimal reference
spans of `mwemt.testsets.aligned` (issue 29, items 3-4), on examples worked by hand."""

from __future__ import annotations

import json

import pytest

from mwemt.errors import InputError, MwemtError
from mwemt.records import AnnotatedSentence, Mwe, TestMwe
from mwemt.testsets.aligned import ReferenceFilters, SpanRules, aligned_reference, filter_reason
from mwemt.testsets.mwe_table import MweTranslationTable, TableEntry, mwe_key, read_dictionary, type_key


def _sent(text: str, mwes: list[tuple[tuple[int, ...], str]]) -> AnnotatedSentence:
    toks = text.split()
    return AnnotatedSentence(toks, [t.lower() for t in toks], [Mwe(i, lemma) for i, lemma in mwes])


# ---------------------------------------------------------------- the table

def test_build_from_alignment_counts_each_occurrence_and_drops_filtered():
    sents = [_sent("keep in touch !", [((0, 1, 2), "keep in touch")]),
             _sent("we keep in touch", [((1, 2, 3), "keep in touch")]),
             _sent("keep in touch", [((0, 1, 2), "keep in touch")]),
             _sent("keep in touch", [((0, 1, 2), "keep in touch")])]
    tgt = ["restiamo in contatto !".split(), "restiamo in contatto".split(), "sentiamoci".split(), "ciao".split()]
    links = [{(0, 0), (1, 1), (2, 2)}, {(0, 0), (1, 0), (2, 1), (3, 2)}, {(0, 0), (2, 0)}, set()]
    table, counts = MweTranslationTable.build_from_alignment(sents, tgt, links)
    assert counts == {"occurrences": 4, "kept": 3, "dropped": {"unaligned": 1}}
    assert [(e.text, e.count, e.sources) for e in table.translations("Keep in touch")] == [
        ("restiamo in contatto", 2, frozenset({"aligned"})), ("sentiamoci", 1, frozenset({"aligned"}))]
    assert table.best("keep in touch").translation == ("restiamo", "in", "contatto")
    assert table.translations("keep in touch", min_count=2) == (table.best("keep in touch"),)
    assert "KEEP IN TOUCH" in table and "lose touch" not in table and len(table) == 1
    assert table.best("lose touch") is None and table.translations("lose touch") == ()


def test_dictionary_entries_merge_and_pass_min_count():
    table = MweTranslationTable()
    table.add("keep in touch", ["restare", "in", "contatto"], 2)
    n = table.add_dictionary([("keep in touch", "restare in contatto"), ("keep in touch", "tenersi in contatto"),
                              ("keep in touch", "GAP!"), ("give up", "rinunciare")], keys=["keep in touch"])
    assert n == 2  # the placeholder is dropped, give up is not among the keys
    got = table.translations("keep in touch", min_count=5)  # dictionary entries always pass min_count
    assert [(e.text, e.count, sorted(e.sources)) for e in got] == [
        ("restare in contatto", 2, ["aligned", "dictionary"]), ("tenersi in contatto", 0, ["dictionary"])]
    assert table.translations("keep in touch", sources={"aligned"}) == (got[0],)
    with pytest.raises(MwemtError):
        table.translations("keep in touch", sources={"web"})


def test_merge_adds_counts_and_unites_sources():
    a = MweTranslationTable({"give up": [TableEntry(("rinunciare",), 3, frozenset({"aligned"}))]})
    b = MweTranslationTable({"give up": [TableEntry(("rinunciare",), 0, frozenset({"dictionary"})),
                                         TableEntry(("mollare",), 4, frozenset({"aligned"}))],
                             "by heart": [TableEntry(("a", "memoria"), 1, frozenset({"aligned"}))]})
    m = a.merge(b)
    assert [(e.text, e.count, sorted(e.sources)) for e in m.translations("give up")] == [
        ("mollare", 4, ["aligned"]), ("rinunciare", 3, ["aligned", "dictionary"])]
    assert m.keys() == ["by heart", "give up"]
    assert a.translations("give up")[0].count == 3  # the inputs are unchanged


def test_write_read_round_trip_and_located_errors(tmp_path):
    t = MweTranslationTable({"give up": [TableEntry(("rinunciare",), 3, frozenset({"aligned", "dictionary"})),
                                         TableEntry(("ha", "...", "rinunciato"), 1, frozenset({"aligned"}))]},
                            provenance={"alignment": "eflomal-x", "inputs": {"src": {"sha256": "ab"}}})
    path = tmp_path / "t.jsonl"
    t.write(path)
    lines = path.read_text().splitlines()
    head = json.loads(lines[0])
    assert head["format"] == "mwemt-mwe-table" and head["provenance"]["alignment"] == "eflomal-x"
    assert head["signature"] == "mwe-table|keys:1|translations:2|sources:aligned+dictionary"
    back = MweTranslationTable.read(path)
    assert back == t and back.provenance == t.provenance
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\n" + '{"key": "x", "translations": [{"tokens": ["a"], "count": "3", '
                   '"sources": ["aligned"]}]}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:2: .*count"):
        MweTranslationTable.read(bad)
    bad.write_text('{"format": "other"}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:1"):
        MweTranslationTable.read(bad)
    bad.write_text(lines[0] + "\n" + lines[1] + "\n" + lines[1] + "\n")
    with pytest.raises(InputError, match=r"bad\.jsonl:3: .*twice"):
        MweTranslationTable.read(bad)


def test_keys_are_lexicon_forms_casefolded():
    assert type_key("Keep  in Touch") == "keep in touch"
    assert mwe_key(TestMwe((0, 1), "have get", "ho", name="have got")) == "have got"
    assert mwe_key(TestMwe((0, 1), "take care", "badare")) == "take care"


def test_read_dictionary_wn_aligned(tmp_path):
    p = tmp_path / "en-ita.multiwordnet.tsv"
    p.write_text("pwn30_synset\tili\toewn_synset\tpos\tlexfile\tenglish_lemmas\tita_lemmas\ta\tb\tc\n"
                 "1-v\ti1\t1-v\tv\tverb.x\tgive up | quit\trinunciare | GAP!\t1\t0\tx\n")
    assert read_dictionary(p) == [("give up", "rinunciare"), ("quit", "rinunciare")]
    assert read_dictionary(p, min_words=2) == [("give up", "rinunciare")]


# ---------------------------------------------------------------- complete and minimal spans

def test_negation_before_the_mwe_joins_with_its_auxiliary():
    src = "he was n't surprised".split()
    tgt = "non era sorpreso".split()
    links = {(0, 1), (1, 1), (2, 0), (3, 2)}
    assert aligned_reference((3,), links, tgt, src_tokens=src).text == "non era sorpreso"
    assert aligned_reference((3,), links, tgt, src_tokens=src, rules=SpanRules.none()).text == "sorpreso"


def test_reflexive_clitic_joins_the_verb():
    src = "she stands up".split()
    tgt = "lei si alza".split()
    assert aligned_reference((1, 2), {(0, 0), (1, 2), (2, 2)}, tgt, src_tokens=src).text == "si alza"
    assert aligned_reference((1, 2), {(0, 0), (1, 2), (2, 2)}, tgt, src_tokens=src,
                             rules=SpanRules.none()).text == "alza"
    # an object pronoun is not a reflexive: "mi" linked to "me" stays out
    src2 = "he told me off".split()
    tgt2 = "mi sgridò".split()
    assert aligned_reference((1, 3), {(1, 1), (2, 0), (3, 1)}, tgt2, src_tokens=src2).text == "sgridò"


def test_articles_trimmed_unless_the_source_has_a_determiner():
    src = "I lost sight of the kids".split()
    tgt = "ho perso di vista i bambini".split()
    links = {(0, 0), (1, 1), (2, 3), (3, 2), (4, 4), (5, 5)}
    # "the" is outside the MWE, but the aligner linked "i" to "of": the trailing article is dropped
    links_bad = links | {(3, 4)}
    assert aligned_reference((1, 2, 3), links_bad, tgt, src_tokens=src).text == "perso di vista"
    assert aligned_reference((1, 2, 3), links_bad, tgt, src_tokens=src, rules=SpanRules.none()).text == \
        "perso di vista i"
    # a leading article goes when the source MWE has no determiner of its own ...
    src2 = "the bank account".split()
    tgt2 = "il conto bancario".split()
    assert aligned_reference((1, 2), {(1, 0), (1, 2), (2, 1)}, tgt2, src_tokens=src2).text == "conto bancario"
    # ... and stays when it has one
    src3 = "take a peek".split()
    tgt3 = "dare un' occhiata".split()
    assert aligned_reference((0, 1, 2), {(0, 0), (1, 1), (2, 2)}, tgt3, src_tokens=src3).text == "dare un' occhiata"


def test_known_translation_completes_a_partial_alignment():
    src = "let 's keep in touch".split()
    tgt = "restiamo in contatto".split()
    links = {(3, 1)}  # only the particle is linked
    assert aligned_reference((2, 3, 4), links, tgt, src_tokens=src).text == "in"
    cands = [("restare", "in", "contatto")]  # the dictionary's lemma; "restiamo" matches by its stem
    assert aligned_reference((2, 3, 4), links, tgt, src_tokens=src, candidates=cands).text == "restiamo in contatto"
    # an MWE the aligner linked to nothing takes the candidate wherever it is
    assert aligned_reference((2, 3, 4), set(), tgt, src_tokens=src, candidates=cands).text == "restiamo in contatto"
    assert aligned_reference((2, 3, 4), set(), tgt, src_tokens=src) is None
    # a candidate elsewhere in the sentence, away from the aligned words, is not taken
    tgt2 = "in breve , restiamo in contatto".split()
    assert aligned_reference((2, 3, 4), {(3, 0)}, tgt2, src_tokens=src, candidates=cands).text == "in"


def test_function_only_translation_is_dropped_as_unreliable():
    f = ReferenceFilters()
    ref = aligned_reference((2, 3, 4), {(3, 1)}, "restiamo in contatto".split())
    assert filter_reason(ref, 3, f, src_tokens="keep in touch".split()) == "function_only"
    # an MWE of function words only may translate to function words
    ref2 = aligned_reference((0, 1), {(0, 0), (1, 0)}, "per".split())
    assert filter_reason(ref2, 2, f, src_tokens="because of".split()) is None
    assert filter_reason(ref, 3, ReferenceFilters(function_only=False), src_tokens="keep in touch".split()) is None


def test_build_with_a_table_completes_spans_and_attaches_alternatives():
    from mwemt.testsets.aligned import build_aligned_testset

    sent = _sent("let 's keep in touch", [((2, 3, 4), "keep in touch")])
    tgt = "restiamo in contatto".split()
    table = MweTranslationTable({"keep in touch": [
        TableEntry(("restare", "in", "contatto"), 4, frozenset({"aligned", "dictionary"})),
        TableEntry(("sentirsi",), 2, frozenset({"aligned"})),
        TableEntry(("tenersi", "in", "contatto"), 0, frozenset({"dictionary"})),
        TableEntry(("stare", "vicini"), 1, frozenset({"aligned"}))]})
    items, report = build_aligned_testset([sent], [tgt], [{(3, 1)}], [1], tgt_lang="it", table=table,
                                          table_min_count=2)
    m = items[0].mwes[0]
    assert m.reference == "restiamo in contatto"
    # every table translation but the one seen once; the reference itself is not repeated
    assert m.alternatives == ("restare in contatto", "sentirsi", "tenersi in contatto")
    # without the table the particle alone is found, and dropped as unreliable
    items, report = build_aligned_testset([sent], [tgt], [{(3, 1)}], [1], tgt_lang="it")
    assert items == [] and report.filtered["function_only"] == 1


def test_report_counts_alternatives():
    from mwemt.records import TestItem
    from mwemt.testsets.report import describe_testset, render_markdown

    items = [TestItem("1", "keep in touch", "restiamo in contatto",
                      [TestMwe((0, 1, 2), "keep in touch", "restiamo in contatto", alternatives=("sentirsi", "x y"))]),
             TestItem("2", "give up", "rinuncia", [TestMwe((0, 1), "give up", "rinuncia")])]
    stats = describe_testset(items)
    assert (stats["with_alternatives"], stats["alternatives"]) == (1, 2)
    assert "1 (50.0%) MWEs carry alternative translations (2 in all" in render_markdown(stats, "t")


def test_cli_table_build_merge_and_testset_alternatives(toy_corpus, tmp_path):
    from mwemt.cli import main
    from mwemt.formats import read_testset

    src, tgt, _ = toy_corpus
    raw_src = [x[:-2] + x[-1] for x in src]
    (tmp_path / "t.en").write_text("".join(x + "\n" for x in raw_src[:80]))
    (tmp_path / "t.it").write_text("".join(x + "\n" for x in tgt[:80]))
    (tmp_path / "lex.txt").write_text("take care of\tVID\nred house\n")
    (tmp_path / "dict.tsv").write_text("take care of\tprendersi cura di; badare a\n")
    common = ["--lexicon", str(tmp_path / "lex.txt"), "--samplers", "1", "--cache", str(tmp_path / "c"), "-q"]
    out = tmp_path / "table.jsonl"
    assert main(["testset", "table", "--src", str(tmp_path / "t.en"), "--tgt", str(tmp_path / "t.it"),
                 "--dictionary", str(tmp_path / "dict.tsv"), "--dictionary-format", "bilingual", "-o", str(out),
                 "--report", str(tmp_path / "r.json"), *common]) == 0
    table = MweTranslationTable.read(out)
    entries = table.translations("take care of", min_count=0)
    # 20 toy sentences hold "takes care of" -> "accudisce": the aligned translation, counted per occurrence
    assert entries[0].translation == ("accudisce",) and entries[0].count >= 18
    assert {("prendersi", "cura", "di"), ("badare", "a")} <= {e.translation for e in entries}
    head = json.loads(out.read_text().splitlines()[0])
    assert head["provenance"]["inputs"]["src"]["sha256"] and "eflomal" in head["provenance"]["alignment"]
    # merging a table with itself doubles the counts
    assert main(["testset", "table", "--merge", str(out), "--merge", str(out), "-o", str(tmp_path / "m.jsonl"),
                 "-q"]) == 0
    assert MweTranslationTable.read(tmp_path / "m.jsonl").best("take care of").count == 2 * entries[0].count
    # a test set built with the table carries the other translations as alternatives
    assert main(["testset", "build", "--src", str(tmp_path / "t.en"), "--tgt", str(tmp_path / "t.it"),
                 "--table", str(out), "--max-per-type", "0", "-o", str(tmp_path / "test.jsonl"), *common]) == 0
    care = [m for it in read_testset(tmp_path / "test.jsonl") for m in it.mwes if m.name == "take care of"]
    assert care and all("prendersi cura di" in m.alternatives for m in care)
    assert main(["testset", "table", "-o", str(tmp_path / "x.jsonl")]) == 2
