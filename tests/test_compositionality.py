"""Compositionality: MWE collapsing, PPMI, gold scales, prediction on a corpus with known neighbours."""

from __future__ import annotations

import csv
import math
import random

import numpy as np
import pytest
import scipy.sparse

from mwemt.compositionality.gold import agreement, read_gold
from mwemt.compositionality.ppmi import count_cooccurrences, ppmi
from mwemt.compositionality.predict import (
    Translations,
    component_weights,
    predict,
    rescale,
    substring_ratio,
)
from mwemt.compositionality.vectors import (
    CorpusSource,
    VectorsConfig,
    build_vectors,
    collapse_sentence,
    collapsed_stream,
    iter_corpus_lines,
    load_store,
)
from mwemt.errors import InputError, MwemtError
from mwemt.formats import read_compositionality, write_compositionality
from mwemt.preprocess.annotate import Annotator
from mwemt.preprocess.lexicon import Lexicon
from mwemt.records import AnnotatedSentence, LexiconEntry, Mwe

FIX = "tests/fixtures/compositionality"


def lexicon(*mwes: str) -> Lexicon:
    return Lexicon([LexiconEntry(tuple(m.split())) for m in mwes])


# ---------------------------------------------------------------- collapsing


def test_collapse_joins_lemmas_of_contiguous_mwes():
    ann = Annotator(lexicon("ivory tower", "take care of"), "en")
    sent = ann.annotate_text("The professors took care of their Ivory Towers.")
    assert collapse_sentence(sent) == ["the", "professor", "take_care_of", "their", "ivory_tower", "."]


def test_collapse_escapes_literal_underscores_and_leaves_gapped_mwes_apart():
    sent = AnnotatedSentence(["a_b", "x", "y", "z"], ["a_b", "x", "y", "z"], [Mwe((0, 1), "a_b x"), Mwe((2,), "y")])
    assert collapse_sentence(sent) == ["a&#95;b_x", "y", "z"]
    gapped = Annotator(lexicon("take off"), "en", max_gap=2).annotate_text("Take your coat off")
    assert [m.indices for m in gapped.mwes] == [(0, 3)]
    assert collapse_sentence(gapped) == ["take", "your", "coat", "off"]


def test_collapsed_stream_skips_nothing_but_empty_sentences():
    ann = Annotator(lexicon("ivory tower"), "en")
    out = list(collapsed_stream(["an ivory tower", "", "ivory towers everywhere"], ann))
    assert out == [["a", "ivory_tower"], ["ivory_tower", "everywhere"]]


def test_corpus_column_dedupe_and_bad_column(tmp_path):
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("Hi.\tCiao!\nHi.\tCiao.\nRun!\tCorri!\n\n")
    src = CorpusSource.parse(f"{tsv}::1")
    assert src.column == 1
    assert list(iter_corpus_lines([src])) == ["Hi.", "Run!"]
    assert list(iter_corpus_lines([src], dedupe=False)) == ["Hi.", "Hi.", "Run!"]
    with pytest.raises(InputError) as err:
        list(iter_corpus_lines([CorpusSource.parse(f"{tsv}::3")]))
    assert f"{tsv}:1" in str(err.value) and "at least 3 columns" in str(err.value)
    with pytest.raises(MwemtError):
        CorpusSource.parse(f"{tsv}::zero")


# ---------------------------------------------------------------- PPMI


def test_cooccurrence_window_stays_inside_sentences():
    counts = count_cooccurrences([["a", "b", "c"], ["c", "a"]], rows=["a", "c"], contexts=["b", "c"], window=1)
    dense = counts.toarray()
    # a: b once (sentence 1), c once (sentence 2); c: b once; a and c are not neighbours in sentence 1
    assert dense.tolist() == [[1, 1], [1, 0]]
    wide = count_cooccurrences([["a", "b", "c"]], rows=["a"], contexts=["c"], window=2).toarray()
    assert wide.tolist() == [[1]]


def test_ppmi_matches_hand_computation():
    counts = scipy.sparse.csr_matrix(np.array([[2, 0], [1, 1]]))
    m = ppmi(counts).toarray()
    n = 4.0
    assert m[0, 0] == pytest.approx(math.log(2 * n / (2 * 3)))
    assert m[1, 1] == pytest.approx(math.log(1 * n / (2 * 1)))
    assert m[1, 0] == 0.0  # log(1*4/(2*3)) < 0 is clipped
    assert m[0, 1] == 0.0


# ---------------------------------------------------------------- gold scales and errors


def test_scales_are_normalised_to_one_is_compositional():
    nctti = read_gold(f"{FIX}/nctti.tsv", "nctti")
    assert nctti.scores() == pytest.approx({"car park": 0.84, "dream ticket": 0.264, "bank account": 1.0})
    assert nctti.unrated == [(4, "small fry")]
    reddy = read_gold(f"{FIX}/reddy.tsv", "reddy")
    assert reddy.scores() == pytest.approx({"end user": 0.85, "snail mail": 0.262069, "bank account": 0.0})
    farahmand = read_gold(f"{FIX}/farahmand.csv", "farahmand")
    # four "non-compositional" votes -> 0; none -> 1; one of four -> 0.75
    assert farahmand.scores() == {"academy award": 0.0, "access card": 1.0, "board game": 0.75}
    assert read_gold(f"{FIX}/scores.tsv", "tsv").scores() == {"car park": 0.9, "dream ticket": 0.2,
                                                                "bank account": 1.0}


@pytest.mark.parametrize("fmt,text,line,expected", [
    ("farahmand", "access card,0,0,0,0\nboard game,0,x,0,0\n", 2, "0 (compositional) or 1"),
    ("reddy", "end\tuser\t3.8\t4.8\n", 1, "score_compound"),
    ("reddy", "end\tuser\t3.8\t4.8\tfive\n", 1, "a number in [0, 5]"),
    ("nctti", '"compound"\t"CompType"\n"car park"\t"7"\n', 2, "a number in [0, 5]"),
    ("nctti", '"mwe"\t"score"\n"car park"\t"4"\n', 1, "'compound' and 'CompType'"),
    ("tsv", "mwe\tcompositionality\ncar park\tmany\n", 2, "not a number"),
    ("tsv", "mwe\tcompositionality\ncar park\t1.5\n", 2, "outside [0, 1]"),
    ("tsv", "mwe\tcompositionality\ncar park\t0.5\nCar  Park\t0.4\n", 3, "each MWE once"),
    ("farahmand", "academy,1,1\n", 1, "at least two words"),
])
def test_bad_gold_rows_name_file_line_and_expectation(tmp_path, fmt, text, line, expected):
    path = tmp_path / "gold.txt"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        read_gold(path, fmt)
    assert err.value.path == str(path) and err.value.line == line
    assert expected in str(err.value)


def test_agreement_coverage_and_too_few(tmp_path):
    gold = read_gold(f"{FIX}/farahmand.csv", "farahmand")
    ag = agreement({"academy award": 0.1, "access card": 0.9, "board game": 0.6, "other thing": 0.5}, gold)
    assert ag.n == 3 and ag.coverage == 1.0
    assert ag.pearson > 0.9 and ag.spearman == pytest.approx(1.0)
    with pytest.raises(MwemtError, match="only 2 of 3"):
        agreement({"academy award": 0.1, "access card": 0.9}, gold)
    out = tmp_path / "s.tsv"
    write_compositionality(out, [("Academy Award", 0.25)])
    assert out.read_text() == "mwe\tcompositionality\nAcademy Award\t0.250000\n"
    assert read_compositionality(out) == {"academy award": 0.25}


# ---------------------------------------------------------------- string similarity


def test_string_similarity_pieces():
    assert substring_ratio("campo da gioco", "gioco") == 1.0
    assert substring_ratio("piscina", "nuoto") == pytest.approx(1 / 5)
    assert component_weights(2, 0.7) == [0.7, pytest.approx(0.3)]
    assert component_weights(1, 0.7) == [1.0]
    tr = Translations([LexiconEntry(("board", "game"), translations=("gioco da tavolo",)),
                       LexiconEntry(("board",), translations=("tavolo", "GAP!")),
                       LexiconEntry(("game",), translations=("gioco", "partita"))])
    assert tr.get("Board") == ["tavolo"]


def test_rescale_keeps_order_and_spans_unit_interval():
    raw = [("a b", 0.05), ("c d", 0.25), ("e f", 0.10), ("g h", 0.10)]
    assert rescale(raw, "none") == raw
    mm = dict(rescale(raw, "minmax"))
    assert mm == pytest.approx({"a b": 0.0, "c d": 1.0, "e f": 0.25, "g h": 0.25})
    rk = dict(rescale(raw, "rank"))
    assert rk == pytest.approx({"a b": 0.0, "c d": 1.0, "e f": 0.5, "g h": 0.5})  # ties share the mean rank
    with pytest.raises(MwemtError):
        rescale(raw, "zscore")


# ---------------------------------------------------------------- prediction on a tiny corpus


def tiny_corpus(n: int = 600, seed: int = 3) -> list[str]:
    """'apple pie' shares its contexts with 'apple' and 'pie'; 'ivory tower' shares none with its parts."""
    rng = random.Random(seed)
    topics = {
        "apple pie": ["bake", "eat", "sweet", "fruit", "dessert", "oven"],
        "apple": ["eat", "sweet", "fruit", "tree", "juice"],
        "pie": ["bake", "eat", "dessert", "oven", "crust"],
        "ivory tower": ["academic", "professor", "theory", "detached", "idea"],
        "ivory": ["elephant", "tusk", "white", "trade", "carve"],
        "tower": ["tall", "stone", "castle", "climb", "bell"],
    }
    lines = []
    for k in range(n):
        target = list(topics)[k % len(topics)]
        ctx = rng.sample(topics[target], 3)
        lines.append(f"{ctx[0]} {ctx[1]} {target} {ctx[2]} today number{k}")
    return lines


@pytest.fixture(scope="module")
def tiny_store(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny")
    corpus = d / "corpus.txt"
    corpus.write_text("\n".join(tiny_corpus()) + "\n")
    config = VectorsConfig(dim=20, epochs=30, min_count=2, w2v_window=2, ppmi_window=2,
                           context_first_rank=1, context_last_rank=60, seed=7)
    man = build_vectors([CorpusSource(str(corpus))], lexicon("apple pie", "ivory tower"), d / "vec", config,
                        progress=False)
    return d / "vec", man


def test_build_writes_manifest_and_collapsed_counts(tiny_store):
    vec, man = tiny_store
    assert man["mwe_occurrences"] == {"apple pie": 100, "ivory tower": 100}
    assert man["corpus"]["sentences_written"] == 600
    assert man["seed"] == 7 and man["config"]["dim"] == 20
    store = load_store(vec)
    assert set(store.spaces) == {"w2v", "ppmi", "svd"}
    assert "apple_pie" in store.spaces["ppmi"] and "apple_pie" in store.spaces["w2v"]
    assert store.counts["ivory_tower"] == 100


@pytest.mark.parametrize("model", ["ppmi", "svd", "w2v"])
def test_prediction_orders_compositional_above_idiomatic(tiny_store, model):
    store = load_store(tiny_store[0])
    entries = [LexiconEntry(("apple", "pie")), LexiconEntry(("ivory", "tower")), LexiconEntry(("unseen", "thing"))]
    preds = {p.key: p for p in predict(entries, store, alpha=0.7, models=[model])}
    for method in ("direct", "alpha"):
        pie, tower = preds["apple pie"].scores[f"{model}:{method}"], preds["ivory tower"].scores[f"{model}:{method}"]
        assert 0.0 <= tower < pie <= 1.0, (method, pie, tower)
    if model != "svd":  # U·S^0.5 flattens the spectrum: the order holds, not the absolute level
        assert preds["apple pie"].scores[f"{model}:direct"] > 0.5
    unseen = preds["unseen thing"]
    assert not unseen.scores and "not in" in unseen.missing[f"{model}:direct"]


def test_ppmi_direct_is_cosine_with_component_sum(tiny_store):
    store = load_store(tiny_store[0])
    space = store.spaces["ppmi"]
    a, b, m = space.get("apple"), space.get("pie"), space.get("apple_pie")
    expected = float(np.dot(m, a + b) / (np.linalg.norm(m) * np.linalg.norm(a + b)))
    got = predict([LexiconEntry(("apple", "pie"))], store, models=["ppmi"])[0].scores["ppmi:direct"]
    assert got == pytest.approx(expected, rel=1e-5)


def test_string_similarity_and_combination(tiny_store):
    store = load_store(tiny_store[0])
    tr = Translations([LexiconEntry(("apple", "pie"), translations=("torta di mele",)),
                       LexiconEntry(("apple",), translations=("mela",)),
                       LexiconEntry(("pie",), translations=("torta",))])
    p = predict([LexiconEntry(("apple", "pie")), LexiconEntry(("ivory", "tower"))], store, alpha=0.5,
                translations=tr, models=["ppmi"])
    assert p[0].scores["ss"] == pytest.approx(0.5 * 3 / 4 + 0.5 * 1.0)  # "mel" of "mela"; "torta" whole
    assert p[0].scores["ppmi:ss+ds"] == pytest.approx((p[0].scores["ss"] + p[0].scores["ppmi:alpha"]) / 2)
    assert "no translation of 'ivory tower'" in p[1].missing["ss"]
    assert "ppmi:ss+ds" in p[1].missing


# ---------------------------------------------------------------- the real rating files


@pytest.mark.shared
def test_shared_rating_files_read_with_documented_scales(shared):
    comp = shared / "compositionality"
    nctti = read_gold(comp / "nctti" / "data_en.tsv", "nctti")
    assert len(nctti.items) == 279 and [m for _, m in nctti.unrated] == ["small fry"]
    by_class: dict[str, list[float]] = {}
    with open(comp / "nctti" / "data_en.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if row["CompType"]:
                by_class.setdefault(row["CompScale"], []).append(nctti.items[row["compound"]].score)
    mean = {k: sum(v) / len(v) for k, v in by_class.items()}
    assert mean["C"] > mean["PC"] > mean["NC"]  # 1 = compositional after normalisation
    reddy = read_gold(comp / "reddy2011-nc" / "reddy2011.csv", "reddy")
    assert len(reddy.items) == 90 and reddy.items["snail mail"].score < reddy.items["application form"].score
    farahmand = read_gold(comp / "farahmand2015-nc" / "nonComp-judgments.csv", "farahmand")
    assert len(farahmand.items) == 1042
    assert farahmand.items["academy award"].score == 0.0 and farahmand.items["access card"].score == 1.0
