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
    man = build_vectors([CorpusSource(str(corpus))], lexicon("apple pie", "ivory tower").entries, d / "vec",
                        config, progress=False)
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


# ---------------------------------------------------------------- corpus scale: workers, cache, samples


def _build(tmp_path, name, lex=("apple pie", "ivory tower"), **over):
    corpus = tmp_path / "corpus.txt"
    if not corpus.exists():
        corpus.write_text("\n".join(tiny_corpus()) + "\n")
    config = VectorsConfig(dim=20, epochs=5, min_count=2, w2v_window=2, ppmi_window=2, context_first_rank=1,
                           context_last_rank=60, seed=7, workers=1, w2v_workers=1, svd_dim=10)
    for k, v in over.items():
        setattr(config, k, v)
    return build_vectors([CorpusSource(str(corpus))], lexicon(*lex).entries, tmp_path / name, config, progress=False)


def test_workers_give_the_same_corpus_and_counts(tmp_path):
    one = _build(tmp_path, "one")
    two = _build(tmp_path, "two", workers=2)
    assert (tmp_path / "one" / "corpus.txt").read_bytes() == (tmp_path / "two" / "corpus.txt").read_bytes()
    assert (tmp_path / "one" / "vocab.tsv").read_text() == (tmp_path / "two" / "vocab.tsv").read_text()
    a = scipy.sparse.load_npz(tmp_path / "one" / "ppmi.npz")
    b = scipy.sparse.load_npz(tmp_path / "two" / "ppmi.npz")
    assert (a != b).nnz == 0
    assert one["mwe_occurrences"] == two["mwe_occurrences"] == {"apple pie": 100, "ivory tower": 100}
    assert two["stages"]["collapse"]["workers"] == 2


def test_stages_are_cached_by_inputs_and_settings(tmp_path):
    first = _build(tmp_path, "v")
    assert not any(rec.get("cached") for rec in first["models"].values())
    again = _build(tmp_path, "v")
    assert again["stages"]["collapse"]["cached"] and all(r.get("cached") for r in again["models"].values())
    more_epochs = _build(tmp_path, "v", epochs=6)
    assert more_epochs["stages"]["collapse"]["cached"]
    assert more_epochs["models"]["ppmi"].get("cached") and more_epochs["models"]["svd"].get("cached")
    assert not more_epochs["models"]["w2v"].get("cached")
    other_lexicon = _build(tmp_path, "v", lex=("apple pie",))
    assert not other_lexicon["stages"]["collapse"].get("cached")
    assert other_lexicon["mwe_occurrences"] == {"apple pie": 100}


def test_samples_are_nested_and_near_their_size(tmp_path):
    from mwemt.compositionality.corpus import sample_corpus

    man = _build(tmp_path, "full", models=("ppmi",))
    total = man["corpus"]["tokens"]
    small = sample_corpus(tmp_path / "full", tmp_path / "s1", total // 4)
    large = sample_corpus(tmp_path / "full", tmp_path / "s2", total // 2)
    lines_small = set((tmp_path / "s1" / "corpus.txt").read_text().splitlines())
    lines_large = set((tmp_path / "s2" / "corpus.txt").read_text().splitlines())
    assert lines_small < lines_large
    assert abs(small["tokens"] - total // 4) < 0.2 * total and abs(large["tokens"] - total // 2) < 0.2 * total
    assert sample_corpus(tmp_path / "full", tmp_path / "s1", total // 4)["cached"]


def test_pairwise_sum_and_parallel_counts_match_one_pass():
    from mwemt.compositionality.ppmi import PairwiseSum

    rng = np.random.default_rng(0)
    mats = [scipy.sparse.random(30, 7, density=0.2, random_state=i, format="csr", dtype=np.float64) for i in range(11)]
    acc = PairwiseSum((30, 7))
    for m in mats:
        acc.add(m)
    assert np.allclose(acc.total().toarray(), sum(m.toarray() for m in mats))
    words = [f"w{i}" for i in range(40)]
    sents = [[words[j] for j in rng.integers(0, 40, size=rng.integers(1, 30))] for _ in range(400)]
    lines = [" ".join(s) for s in sents]
    one = count_cooccurrences(sents, words[:30], words[5:25], window=3)
    two = count_cooccurrences(lines, words[:30], words[5:25], window=3, workers=2)
    assert (one != two).nnz == 0 and one.sum() > 0


def test_context_distribution_smoothing_matches_hand_computation():
    counts = scipy.sparse.csr_matrix(np.array([[2.0, 1.0], [1.0, 4.0]]))
    got = ppmi(counts, cds=0.5).toarray()
    pc = np.sqrt(np.array([3.0, 5.0]))
    pc /= pc.sum()
    rows = np.array([3.0, 5.0])
    want = np.maximum(np.log(counts.toarray() / (rows[:, None] * pc[None, :])), 0)
    assert np.allclose(got, want, rtol=1e-5)


def test_svd_projection_folds_an_existing_row_onto_its_vector(tiny_store):
    from mwemt.compositionality.ppmi import load_ppmi

    matrix, rows, _ = load_ppmi(tiny_store[0])
    svd = np.load(tiny_store[0] / "svd.npy")
    proj = np.load(tiny_store[0] / "svd.projection.npy")
    i = rows.index("apple_pie")
    assert np.allclose(matrix[i].toarray().ravel() @ proj, svd[i], atol=1e-4)


# ---------------------------------------------------------------- the library entry point


def test_score_mwes_folds_in_mwes_missing_from_the_lexicon(tmp_path):
    from mwemt.compositionality.predict import score_mwes

    _build(tmp_path, "with", lex=("apple pie", "ivory tower"))
    _build(tmp_path, "without", lex=("blue moon",))
    collapsed = {s.mwe: s for s in score_mwes(["apple pie", "ivory tower"], tmp_path / "with")}
    folded = {s.mwe: s for s in score_mwes(["apple pie", "ivory tower", "apple", "unseen thing"],
                                           tmp_path / "without")}
    assert collapsed["apple pie"].how == "collapsed"
    assert folded["apple pie"].how == "folded-in" and folded["apple pie"].corpus_count == 100
    assert folded["ivory tower"].score < folded["apple pie"].score
    # the folded-in row approximates the row a build with the MWE in its lexicon gives (same contexts)
    from mwemt.compositionality.predict import fold_in, targets_for

    with_store, without_store = load_store(tmp_path / "with"), load_store(tmp_path / "without")
    fold_in(without_store, targets_for([LexiconEntry(("apple", "pie"))], without_store))
    ctx_with = (tmp_path / "with" / "ppmi.contexts.txt").read_text().split()
    ctx_without = (tmp_path / "without" / "ppmi.contexts.txt").read_text().split()
    a = dict(zip(ctx_with, with_store.spaces["ppmi"].get("apple_pie")))
    b = dict(zip(ctx_without, without_store.spaces["ppmi"].get("apple_pie")))
    shared_ctx = sorted(a.keys() & b.keys())
    va, vb = np.array([a[c] for c in shared_ctx]), np.array([b[c] for c in shared_ctx])
    assert float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb))) > 0.9
    assert folded["apple"].score is None and "single word" in folded["apple"].reason
    assert folded["unseen thing"].score is None and folded["unseen thing"].corpus_count == 0
    assert list((tmp_path / "without" / "fold-in").glob("*.npz"))  # cached for the next call
    svd = {s.mwe: s for s in score_mwes(["apple pie", "ivory tower"], tmp_path / "without", model="svd")}
    assert svd["apple pie"].how == "folded-in" and svd["ivory tower"].score < svd["apple pie"].score
    w2v = score_mwes(["apple pie"], tmp_path / "without", model="w2v")[0]
    assert w2v.score is None and "not in w2v" in w2v.reason
    with pytest.raises(MwemtError, match="unknown method"):
        score_mwes(["apple pie"], tmp_path / "with", method="ss")


def test_hyphenated_word_is_its_own_mwe_token(tiny_store):
    from mwemt.compositionality.predict import targets_for

    store = load_store(tiny_store[0])
    (t,) = targets_for([LexiconEntry(("Full-time",))], store)
    assert t.token == "full-time" and t.normalized == ("full", "time")


def test_bootstrap_intervals_contain_the_estimate_and_are_seeded():
    from mwemt.compositionality.gold import bootstrap_correlation_ci

    rng = np.random.default_rng(1)
    x = rng.normal(size=60)
    y = x + rng.normal(scale=1.0, size=60)
    (plo, phi), (slo, shi) = bootstrap_correlation_ci(x, y, 500, seed=3)
    r = float(np.corrcoef(x, y)[0, 1])
    assert plo < r < phi and 0.0 < slo < shi < 1.0
    assert bootstrap_correlation_ci(x, y, 500, seed=3) == ((plo, phi), (slo, shi))
    assert bootstrap_correlation_ci(x, 2 * x, 200)[1] == pytest.approx((1.0, 1.0))


# ---------------------------------------------------------------- a small sample of the Wikipedia corpus


@pytest.mark.shared
def test_wikipedia_sample_collapses_rated_compounds(shared, tmp_path):
    from itertools import islice

    from mwemt.compositionality.gold import rated_mwes, read_shared_gold
    from mwemt.compositionality.predict import targets_for
    from mwemt.fileio import iter_lines, write_lines

    wiki = shared / "monolingual/enwiki-2015-sample/enwiki-2015.en.txt.gz"
    if not wiki.is_file():
        pytest.skip("no Wikipedia sample in the shared data")
    sample = tmp_path / "wiki.txt"
    write_lines(sample, islice(iter_lines(wiki), 400))  # the first 400 paragraphs, never the whole file
    rated = rated_mwes(read_shared_gold(shared))
    config = VectorsConfig(dim=20, epochs=1, min_count=2, svd_dim=20, workers=2, w2v_workers=1)
    lex = [LexiconEntry(tuple(m.split())) for m in rated]
    man = build_vectors([CorpusSource(str(sample))], lex, tmp_path / "vec", config, models=("ppmi",), progress=False)
    c = man["corpus"]
    assert c["sentences_written"] + c.get("duplicate_lines", 0) == 400 and c["tokens"] > 20000
    assert man["lexicon"]["entries"] == len(rated) > 1200 and man["lexicon"]["occurrences"] > 0
    store = load_store(tmp_path / "vec")
    seen = [LexiconEntry(tuple(k.split())) for k in man["mwe_occurrences"]]
    assert all(store.counts[t.token] > 0 for t in targets_for(seen, store))
