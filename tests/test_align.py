"""Word alignment: Pharaoh links, symmetrization by hand-worked cases, eflomal on a toy corpus, the cache,
and `mwemt align`."""

from __future__ import annotations

import json

import pytest

from mwemt.cli import main
from mwemt.errors import MwemtError
from mwemt.testsets.align import (
    MAX_TOKENS,
    AlignConfig,
    AlignmentCache,
    align,
    align_directional,
    cache_key,
    check_links,
    format_pharaoh,
    grow_diag_final_and,
    parse_pharaoh,
    read_alignment_file,
    symmetrize,
)


def test_pharaoh_round_trip_and_errors():
    links = parse_pharaoh("2-1 0-0  1-2\n")
    assert links == {(0, 0), (1, 2), (2, 1)}
    assert format_pharaoh(links) == "0-0 1-2 2-1"
    assert parse_pharaoh("") == frozenset()
    for bad in ("0-", "a-1", "1:2", "-1-2"):
        with pytest.raises(ValueError):
            parse_pharaoh(bad)
    check_links({(0, 0), (1, 2)}, 2, 3)
    with pytest.raises(ValueError, match="outside the 2 source and 2 target"):
        check_links({(1, 2)}, 2, 2)


def test_grow_diag_final_and_by_hand():
    fwd = frozenset({(0, 0), (1, 1), (2, 1)})
    rev = frozenset({(0, 0), (1, 1), (1, 2)})
    # both extra links neighbour (1, 1) and align a word not yet aligned: grown
    assert grow_diag_final_and(fwd, rev, 3, 3) == {(0, 0), (1, 1), (2, 1), (1, 2)}
    # (0, 3) is nobody's neighbour and source 0 is aligned: final-and rejects it
    assert grow_diag_final_and(frozenset({(0, 0), (0, 3)}), frozenset({(0, 0)}), 4, 4) == {(0, 0)}
    # (2, 3) aligns two unaligned words: final-and adds it
    assert grow_diag_final_and(frozenset({(0, 0), (2, 3)}), frozenset({(0, 0)}), 4, 4) == {(0, 0), (2, 3)}
    # a neighbour both of whose words are already aligned is not grown
    assert grow_diag_final_and(frozenset({(0, 0), (1, 1), (0, 1)}), frozenset({(0, 0), (1, 1)}), 2, 2) == {(0, 0), (1, 1)}


def test_symmetrize_methods():
    fwd, rev = frozenset({(0, 0), (1, 2)}), frozenset({(0, 0), (1, 1)})
    assert symmetrize(fwd, rev, 2, 3, "intersection") == {(0, 0)}
    assert symmetrize(fwd, rev, 2, 3, "union") == {(0, 0), (1, 1), (1, 2)}
    with pytest.raises(MwemtError, match="unknown symmetrization"):
        symmetrize(fwd, rev, 2, 3, "grow")


def test_config_is_checked():
    with pytest.raises(MwemtError, match="samplers"):
        AlignConfig(samplers=0)
    with pytest.raises(MwemtError, match="model"):
        AlignConfig(model=4)


def _precision_recall(pred, gold):
    tp = sum(len(set(p) & set(g)) for p, g in zip(pred, gold))
    return tp / sum(len(p) for p in pred), tp / sum(len(g) for g in gold)


def test_eflomal_learns_the_toy_corpus(toy_corpus):
    src, tgt, gold = toy_corpus
    s, t = [x.split() for x in src], [x.split() for x in tgt]
    links = align(s, t, config=AlignConfig(samplers=1))
    assert len(links) == len(src)
    for a, ss, tt in zip(links, s, t):
        check_links(a, len(ss), len(tt))
    precision, recall = _precision_recall(links, gold)
    assert precision > 0.9 and recall > 0.85, (precision, recall)
    # the adjective-noun swap is learned, not just the diagonal
    swapped = sum((1, 2) in a and (2, 1) in a for a, ss in zip(links, s) if "takes" not in ss)
    assert swapped > 0.8 * sum("takes" not in ss for ss in s)


def test_extra_text_only_adds_statistics(toy_corpus):
    src, tgt, gold = toy_corpus
    s, t = [x.split() for x in src], [x.split() for x in tgt]
    few = align(s[:12], t[:12], extra=(s[12:], t[12:]), config=AlignConfig(samplers=1))
    assert len(few) == 12
    precision, recall = _precision_recall(few, gold[:12])
    assert precision > 0.8 and recall > 0.8


def test_empty_long_and_spaced_tokens(toy_corpus):
    src, tgt, _ = toy_corpus
    s, t = [x.split() for x in src], [x.split() for x in tgt]
    s2 = [[], ["w"] * (MAX_TOKENS + 1), ["the", "big cat"]] + s
    t2 = [["il"], ["w"], ["il", "gatto"]] + t
    result = align_directional(s2, t2, config=AlignConfig(samplers=1))
    assert result.skipped == [0, 1]
    assert result.forward[0] == result.forward[1] == frozenset()
    check_links(result.forward[2] | result.reverse[2], 2, 2)  # a token with a space stays one token


def test_mismatched_lengths():
    with pytest.raises(MwemtError, match="2 source sentences but 1 target"):
        align([["a"], ["b"]], [["c"]])


def test_cache_reuses_and_keys_on_everything(toy_corpus, tmp_path):
    src, tgt, _ = toy_corpus
    s, t = [x.split() for x in src[:60]], [x.split() for x in tgt[:60]]
    config = AlignConfig(samplers=1)
    first = align_directional(s, t, config=config, cache_dir=tmp_path)
    second = align_directional(s, t, config=config, cache_dir=tmp_path)
    assert not first.cached and second.cached
    assert (first.forward, first.reverse) == (second.forward, second.reverse)
    key = cache_key(s, t, None, config)
    assert key == first.key
    assert cache_key(s, t, None, AlignConfig(samplers=2)) != key
    assert cache_key(s, t, (s, t), config) != key
    assert cache_key(s[:-1] + [s[-1] + ["x"]], t, None, config) != key
    # a damaged entry is not trusted: it is recomputed and replaced
    (AlignmentCache(tmp_path).entry(key) / "forward").write_text("0-99\n", encoding="utf-8")
    third = align_directional(s, t, config=config, cache_dir=tmp_path)
    assert not third.cached
    assert align_directional(s, t, config=config, cache_dir=tmp_path).cached


def _align_at_once(args):
    s, t, cache_dir, barrier = args
    barrier.wait()   # both processes look the key up at the same moment
    result = align_directional(s, t, config=AlignConfig(samplers=1), cache_dir=cache_dir)
    return result.cached, result.forward, result.reverse


def test_concurrent_alignments_of_one_input_agree(toy_corpus, tmp_path):
    """eflomal cannot be seeded: two processes aligning the same input at once (a run's score and report
    stages side by side) must not each align it their own way. One aligns, the other reads its links."""
    import multiprocessing as mp

    src, tgt, _ = toy_corpus
    s, t = [x.split() for x in src[:200]], [x.split() for x in tgt[:200]]
    ctx = mp.get_context("fork")
    barrier = ctx.Manager().Barrier(2)
    with ctx.Pool(2) as pool:
        (c1, f1, r1), (c2, f2, r2) = pool.map(_align_at_once, [(s, t, tmp_path, barrier)] * 2)
    assert sorted([c1, c2]) == [False, True]
    assert (f1, r1) == (f2, r2)


def _write(path, lines):
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return str(path)


def test_align_cli(toy_corpus, tmp_path, capsys):
    src, tgt, _ = toy_corpus
    s = _write(tmp_path / "t.en", [x.replace(" .", ".") for x in src[:40]])  # raw text: Moses splits the "."
    t = _write(tmp_path / "t.it", tgt[:40])
    es, et = _write(tmp_path / "x.en", src[40:]), _write(tmp_path / "x.it", tgt[40:])
    out, rep = tmp_path / "t.align", tmp_path / "rep.json"
    args = ["align", "--src", s, "--tgt", t, "--tgt-tokenized", "--extra", es, et, "--samplers", "1",
            "--cache", str(tmp_path / "cache"), "-o", str(out), "--report", str(rep)]
    assert main(args) == 0
    links = read_alignment_file(out, [x.split() for x in src[:40]], [x.split() for x in tgt[:40]])
    assert len(links) == 40 and all((7, 7) in a for a in links[:3])
    report = json.loads(rep.read_text())
    assert report["pairs"] == 40 and report["extra_pairs"] == 360 and not report["cached"]
    assert "sym:grow-diag-final-and" in report["signature"] and report["inputs"]["extra_src"]["sha256"]
    assert main(args + ["--symmetrization", "intersection"]) == 0
    assert json.loads(rep.read_text())["cached"]  # the directional links are reused
    inter = read_alignment_file(out)
    assert all(a <= b for a, b in zip(inter, links))
    assert "from the cache" in capsys.readouterr().err


def test_align_cli_errors(tmp_path, capsys):
    a = _write(tmp_path / "a.en", ["one", "two"])
    b = _write(tmp_path / "b.it", ["uno"])
    assert main(["align", "--src", a, "--tgt", b, "--no-cache", "-o", str(tmp_path / "o")]) == 2
    assert "misaligned" in capsys.readouterr().err
    assert main(["align", "--src", a, "-o", str(tmp_path / "o")]) == 2
    assert "needs --tgt" in capsys.readouterr().err
    bad = _write(tmp_path / "bad.align", ["0-0", "0-x"])
    with pytest.raises(Exception, match="bad.align:2"):
        read_alignment_file(bad)
    with pytest.raises(Exception, match="bad.align:1.*outside"):
        read_alignment_file(_write(tmp_path / "bad.align", ["0-5"]), [["a"]], [["b"]])
