"""`mwemt compositionality vectors|predict|evaluate` end to end, and word2vec reproducibility."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from test_compositionality import tiny_corpus

from mwemt.cli import main
from mwemt.errors import MwemtError

FIX = "tests/fixtures/compositionality"
SMALL = ["--dim", "20", "--epochs", "10", "--min-count", "2", "--window", "2", "--ppmi-window", "2",
         "--context-ranks", "1-60", "-q"]


@pytest.fixture
def corpus_and_lexicon(tmp_path):
    corpus = tmp_path / "corpus.tsv"
    corpus.write_text("".join(f"{line}\tunused\n" for line in tiny_corpus(300)))
    lex = tmp_path / "lex.txt"
    lex.write_text("apple pie\nivory tower\nblue moon\n")
    return corpus, lex


def test_vectors_predict_evaluate(tmp_path, corpus_and_lexicon, capsys):
    corpus, lex = corpus_and_lexicon
    vec, out, table = tmp_path / "vec", tmp_path / "comp.tsv", tmp_path / "all.tsv"
    assert main(["compositionality", "vectors", "--corpus", f"{corpus}::1", "--lexicon", str(lex),
                 "--out", str(vec), *SMALL]) == 0
    man = json.loads((vec / "manifest.json").read_text())
    assert man["kind"] == "compositionality-vectors" and man["inputs"][f"{corpus}::1"]["sha256"]
    assert "100 MWE occurrences of 2/3 lexicon entries collapsed" in capsys.readouterr().err
    assert man["lexicon"]["occurrences"] == 100

    assert main(["compositionality", "predict", "--vectors", str(vec), "--mwes", str(lex), "--model", "ppmi",
                 "--method", "alpha", "-o", str(out), "--table", str(table)]) == 0
    err = capsys.readouterr().err
    assert "scored 2 of 3 MWEs with ppmi:alpha" in err
    assert "not scored: blue moon: MWE token 'blue_moon' not in ppmi" in err
    lines = out.read_text().splitlines()
    assert lines[0] == "mwe\tcompositionality" and len(lines) == 3
    scores = {k: float(v) for k, v in (ln.split("\t") for ln in lines[1:])}
    assert scores["apple pie"] > scores["ivory tower"]
    pman = json.loads((tmp_path / "comp.tsv.manifest.json").read_text())
    assert pman["missing"][0]["mwe"] == "blue moon"
    header, *rows = table.read_text().splitlines()
    assert header.split("\t") == ["mwe", "corpus_count", "ppmi:direct", "ppmi:alpha", "missing"]
    assert rows[2].split("\t")[2:4] == ["NA", "NA"]

    gold = tmp_path / "gold.tsv"
    gold.write_text("mwe\tcompositionality\napple pie\t0.9\nivory tower\t0.1\nblue moon\t0.5\nbank account\t1\n")
    assert main(["compositionality", "evaluate", "--pred", str(out), "--gold", str(gold), "--format", "tsv"]) == 2
    assert "only 2 of 4 gold MWEs have a prediction" in capsys.readouterr().err


def test_evaluate_reports_correlation_coverage_and_signature(tmp_path, capsys):
    pred = tmp_path / "p.tsv"
    pred.write_text("mwe\tcompositionality\nacademy award\t0.1\naccess card\t0.8\nboard game\t0.7\n")
    js = tmp_path / "e.json"
    assert main(["compositionality", "evaluate", "-p", str(pred), "-g", f"{FIX}/farahmand.csv",
                 "-f", "farahmand", "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert "compositionality|gold:farahmand@" in out and "|n:3|" in out
    result = json.loads(js.read_text())["result"]
    assert result["n"] == 3 and result["coverage"] == 1.0 and result["spearman"] == 1.0


def test_bad_gold_row_exits_2_with_location(tmp_path, capsys):
    pred = tmp_path / "p.tsv"
    pred.write_text("mwe\tcompositionality\nend user\t0.5\n")
    gold = tmp_path / "reddy.tsv"
    gold.write_text("end\tuser\t3.8\t4.8\t4.2\nsnail\tmail\t0.6\t4.5\tlots\n")
    assert main(["compositionality", "evaluate", "-p", str(pred), "-g", str(gold), "-f", "reddy"]) == 2
    err = capsys.readouterr().err
    assert f"{gold}:2" in err and "compound score 'lots' is not a number" in err


def test_predict_without_vectors_is_a_clear_error(tmp_path, capsys):
    lex = tmp_path / "lex.txt"
    lex.write_text("apple pie\n")
    assert main(["compositionality", "predict", "-V", str(tmp_path), "-m", str(lex)]) == 2
    assert "not a complete vectors directory" in capsys.readouterr().err


@pytest.mark.slow
def test_word2vec_is_reproducible_across_processes(tmp_path, corpus_and_lexicon):
    corpus, lex = corpus_and_lexicon
    for k, hashseed in enumerate(("1", "2")):
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        r = subprocess.run([sys.executable, "-m", "mwemt", "compositionality", "vectors", "-c", f"{corpus}::1",
                            "-l", str(lex), "-o", str(tmp_path / f"v{k}"), "--models", "w2v", "--w2v-workers", "1", *SMALL],
                           env=env, capture_output=True)
        assert r.returncode == 0, r.stderr.decode()
    a, b = np.load(tmp_path / "v0" / "w2v.npy"), np.load(tmp_path / "v1" / "w2v.npy")
    assert a.shape == b.shape and np.array_equal(a, b)
    assert (tmp_path / "v0" / "w2v.tokens.txt").read_text() == (tmp_path / "v1" / "w2v.tokens.txt").read_text()


@pytest.mark.shared
@pytest.mark.slow
def test_report_script_on_a_wikipedia_sample(shared, tmp_path):
    """The whole report (curve, CIs, TED files, plot) on the first 300 paragraphs, never the whole corpus."""
    import importlib.util
    from itertools import islice
    from pathlib import Path

    from mwemt.fileio import iter_lines, write_lines

    wiki = shared / "monolingual/enwiki-2015-sample/enwiki-2015.en.txt.gz"
    if not wiki.is_file():
        pytest.skip("no Wikipedia sample in the shared data")
    sample = tmp_path / "wiki.txt"
    write_lines(sample, islice(iter_lines(wiki), 300))
    spec = importlib.util.spec_from_file_location(
        "compositionality_report",
        Path(__file__).resolve().parents[1] / "results" / "compositionality" / "scripts" / "compositionality_report.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "out"
    args = ["--corpus", str(sample), "--shared", str(shared), "--out", str(out), "--cache", str(tmp_path / "cache"),
            "--curve", "4k,8k", "--dim", "10", "--epochs", "1", "--bootstrap", "50", "--no-contextual", "-q"]
    assert mod.main(args) == 0
    rep = json.loads((out / "report.json").read_text())
    assert [c["target_tokens"] for c in rep["curve"]] == [4000, 8000, None]
    assert rep["curve"][0]["tokens"] < rep["curve"][1]["tokens"] < rep["curve"][2]["tokens"]
    reddy = rep["results"]["reddy"]
    assert {"w2v:alpha", "ppmi:direct", "svd:alpha", "ss", "ppmi:ss+ds"} <= reddy.keys()
    ss = reddy["ss"]
    assert ss["spearman_ci95"][0] <= ss["spearman"] <= ss["spearman_ci95"][1] and ss["n"] == 45
    assert rep["ted"]["distinct_mwes"] == 1080 and rep["ted"]["gapped"] == 73
    assert (out / "corpus_size.png").stat().st_size > 10000
    ted = (out / "ted-en.all.tsv").read_text().splitlines()
    assert len(ted) == 1081 and "gapped" in next(line for line in ted if line.startswith("bring...to"))
    assert (out / "ted-en.tsv").read_text().startswith("mwe\tcompositionality\n")
    demo = rep["testsets"]["demo"]   # the demo's MWE test set by default: 55 distinct source MWEs
    assert demo["distinct_mwes"] == 55 and demo["files"] == ["testset-demo.tsv", "testset-demo.all.tsv"]
    assert len((out / "testset-demo.all.tsv").read_text().splitlines()) == 56
    assert mod.main(args) == 0  # second run: every stage from the cache
    rep2 = json.loads((out / "report.json").read_text())
    assert all(s.get("cached") for s in rep2["stages"].values())


def test_weights_from_references_to_tesla_comp(tmp_path, corpus_and_lexicon, capsys, monkeypatch):
    corpus, lex = corpus_and_lexicon
    vec = tmp_path / "vec"
    assert main(["compositionality", "vectors", "--corpus", f"{corpus}::1", "--lexicon", str(lex),
                 "--out", str(vec), *SMALL]) == 0
    ref = tmp_path / "ref.en"
    ref.write_text("We ate apple pie today .\nShe lives in an ivory tower .\nApple pies are sweet .\n"
                   "Once in a blue moon .\nNothing here .\n", encoding="utf-8")
    out = tmp_path / "w.tsv"
    capsys.readouterr()
    assert main(["compositionality", "weights", "--ref", str(ref), "--lexicon", str(lex), "--vectors", str(vec),
                 "-o", str(out)]) == 0
    err = capsys.readouterr().err
    # apple pie twice, ivory tower and blue moon once; blue moon never occurs in the corpus: NA, not dropped
    assert "5 reference lines: 4 occurrences of 3 distinct MWEs (lex.txt, 3 entries) in 4 lines" in err
    assert "predicted 2 of 3 MWEs (67%), 3 of 4 occurrences (75%)" in err
    assert "NA: blue moon (1x): MWE token 'blue_moon' not in ppmi" in err
    header, *rows = out.read_text().splitlines()
    assert header == "mwe\tcompositionality\treference_occurrences\tnote"
    cells = {r.split("\t")[0]: r.split("\t")[1:] for r in rows}
    assert cells["apple pie"][1] == "2" and cells["blue moon"][0] == "NA"
    assert float(cells["apple pie"][0]) > float(cells["ivory tower"][0])
    man = json.loads((tmp_path / "w.tsv.manifest.json").read_text())
    assert man["counts"]["predicted"] == 2 and man["not_predicted"][0]["mwe"] == "blue moon"
    # tesla-comp reads the file: blue moon is found and weighted by the default, and said so
    hyp = tmp_path / "hyp.en"
    hyp.write_text("We ate cake today .\nShe lives in a white tower .\nApple pies are sweet .\n"
                   "Once in a while .\nNothing here .\n", encoding="utf-8")
    assert main(["score", "--hyp", f"H={hyp}", "--ref", str(ref), "--metrics", "tesla-comp",
                 "--compositionality", str(out)]) == 0
    table = capsys.readouterr().out
    row = next(x.split() for x in table.splitlines() if x.startswith("H ") and len(x.split()) == 5)
    assert row == ["H", "4", "1", "2", "1"] and "default median=0.5" in table  # found, in hyp, predicted, default
    # without --vectors and nothing cached: a clear error
    monkeypatch.delenv("MWEMT_VECTORS", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["compositionality", "weights", "--ref", str(ref), "--lexicon", str(lex), "-o", str(out)]) == 2
    assert "no vectors: give --vectors DIR" in capsys.readouterr().err
    monkeypatch.setenv("MWEMT_VECTORS", str(vec))
    assert main(["compositionality", "weights", "--ref", str(ref), "--lexicon", str(lex), "-o", str(out), "-q"]) == 0


def test_wordnet_multiword_lemmas():
    from mwemt.wordnet import available, install, multiword_lemmas

    if not available() and install() is None:
        pytest.skip("WordNet is not installed here")
    lemmas = multiword_lemmas()
    assert len(lemmas) > 60000 and "ivory tower" in lemmas and "take care" in lemmas
    assert all(" " in m and m == m.lower() for m in lemmas[:1000])


def test_wordnet_as_a_lexicon(tmp_path, capsys, monkeypatch):
    from mwemt.compositionality.weights import find_reference_mwes, reference_annotator
    from mwemt.wordnet import available, install

    if not available() and install() is None:
        pytest.skip("WordNet is not installed here")
    out = tmp_path / "wn.txt"
    assert main(["lexicon", "convert", "wordnet", "-o", str(out)]) == 0
    entries = [x for x in out.read_text(encoding="utf-8").splitlines() if not x.startswith("#")]
    assert len(entries) > 60000 and "ivory tower" in entries
    assert "wrote" in capsys.readouterr().err
    # the annotator over WordNet's MWEs (a slice of them: compiling all 64k takes seconds)
    from mwemt.compositionality import weights
    from mwemt.wordnet import multiword_entries

    some = [e for e in multiword_entries() if " ".join(e.lemmas) in ("ivory tower", "take care", "in the end")]
    monkeypatch.setattr(weights, "multiword_entries", lambda: some)
    found = find_reference_mwes(["She lives in an ivory tower .", "They took care of it in the end ."],
                                reference_annotator("wordnet"))
    assert found.counts["ivory tower"] == 1 and found.counts["take care"] == 1 and found.counts["in the end"] == 1
    assert found.lines == 2 and found.lines_with_mwes == 2
    annotator = reference_annotator("wordnet")
    assert annotator.max_gap == 0 and annotator.filters is None  # tesla-comp's look-up: contiguous, unfiltered
    with pytest.raises(MwemtError, match="English"):
        reference_annotator("wordnet", lang="de")
