"""Subwords with factors: exact round trips, factor projection, located errors, joint vs separate models."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mwemt.cli import main
from mwemt.errors import InputError, MwemtError
from mwemt.formats import parse_factored
from mwemt.preprocess.subword import (
    SPACE,
    SubwordCountError,
    SubwordModel,
    apply_file,
    decode_file,
    group_pieces,
    project_factors,
)


@pytest.fixture(scope="module")
def data() -> Path:
    return Path(__file__).resolve().parent / "fixtures" / "subword"


@pytest.fixture(scope="module")
def joint(data):
    return SubwordModel.train([data / "train.en", data / "train.it"], vocab_size=400)


@pytest.fixture(scope="module")
def unigram(data):
    return SubwordModel.train([data / "train.en", data / "train.it"], vocab_size=400,
                              model_type="unigram")


def fixture_lines(data, name):
    return (data / name).read_text(encoding="utf-8").splitlines()


# ---------------------------------------------------------------- round trips and special characters

@pytest.mark.parametrize("which", ["joint", "unigram"])
def test_fixture_round_trip_and_one_word_start_per_token(which, data, request):
    model = request.getfixturevalue(which)
    assert model.model_type == ("bpe" if which == "joint" else "unigram")
    n_pieces = n_words = 0
    for line in fixture_lines(data, "train.en") + fixture_lines(data, "train.it"):
        tokens = line.split()
        pieces = model.encode_tokens(tokens)
        assert sum(p.startswith(SPACE) for p in pieces) == len(tokens)
        assert model.decode(pieces) == tokens
        n_pieces += len(pieces)
        n_words += len(tokens)
    assert n_words < n_pieces < 4 * n_words  # it does segment, and not into characters


def test_underscore_is_an_ordinary_learned_character(joint):
    pieces = joint.encode_tokens(["took_care_of", "gave_up"])
    assert "<0x5F>" not in pieces                      # learned from the data, not a byte fallback
    assert any("_" in p for p in pieces)
    assert "".join(pieces) == f"{SPACE}took_care_of{SPACE}gave_up"   # '_' never becomes the boundary
    assert joint.decode(pieces) == ["took_care_of", "gave_up"]
    assert joint.decode(joint.encode_tokens(["_", "__", "a_", "_b"])) == ["_", "__", "a_", "_b"]


def test_factor_escapes_are_whole_pieces(joint):
    pieces = joint.encode_tokens(["R&amp;D", "a&#124;b", "x&#95;y"])
    for esc in ("&amp;", "&#124;", "&#95;"):
        assert esc in pieces
    assert joint.decode(pieces) == ["R&amp;D", "a&#124;b", "x&#95;y"]


def test_rare_unicode_round_trips_through_byte_pieces(joint):
    tokens = ["ǅemal", "𝔘nicode", "Straße", "日本語", "ﬁ", "Ａ", "e\u0301", "a▁b", SPACE]
    pieces = joint.encode_tokens(tokens)
    assert "<0xF0>" in pieces                           # 𝔘 was never seen: bytes, not <unk>
    assert "<unk>" not in pieces
    assert joint.decode(pieces) == tokens               # no NFKC: ﬁ, Ａ and e+combining accent survive


def test_without_byte_fallback_unknown_characters_still_round_trip_as_text(data, tmp_path):
    model = SubwordModel.train([data / "train.en"], vocab_size=120, byte_fallback=False)
    assert not model.byte_fallback and model.vocab_size == 120
    tokens = ["𝔘nicode", "città"]
    assert model.decode(model.encode_tokens(tokens)) == tokens


def test_tokens_with_whitespace_or_the_reserved_escape_are_refused(joint):
    with pytest.raises(ValueError, match="whitespace"):
        joint.encode_tokens(["a b"])
    with pytest.raises(ValueError, match="empty"):
        joint.encode_tokens([""])
    with pytest.raises(ValueError, match="reserved"):
        joint.encode_tokens(["x&#9601;y"])


TOKEN_CHARS = st.one_of(
    st.sampled_from(list("abcdeéèàòùçñßÅ0123456789_.,'-") + ["&#124;", "&amp;", "&#95;", "▁", "𝔘", "€"]),
    st.characters(blacklist_categories=("Cs",)),
)
TOKENS = st.lists(st.lists(TOKEN_CHARS, min_size=1, max_size=6).map("".join), max_size=12).filter(
    lambda toks: all(t and not any(c.isspace() for c in t) and "&#9601;" not in t for t in toks))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tokens=TOKENS)
def test_decode_inverts_encode_tokens(joint, tokens):
    pieces = joint.encode_tokens(tokens)
    assert sum(p.startswith(SPACE) for p in pieces) == len(tokens)
    assert joint.decode(pieces) == tokens


# ---------------------------------------------------------------- factor projection

def test_project_factors_copy_and_bio():
    rows = [["He", "he", "O"], ["took", "take_care_of", "B"], ["care", "take_care_of", "I"],
            ["housework", "housework", "O"]]
    words = [["▁He"], ["▁to", "ok"], ["▁c", "a", "re"], ["▁house", "work"]]
    copy = project_factors(rows, words, iob="copy")
    assert copy == [["▁He", "he", "O"], ["▁to", "take_care_of", "B"], ["ok", "take_care_of", "B"],
                    ["▁c", "take_care_of", "I"], ["a", "take_care_of", "I"], ["re", "take_care_of", "I"],
                    ["▁house", "housework", "O"], ["work", "housework", "O"]]
    bio = project_factors(rows, words, iob="bio")
    assert [r[2] for r in bio] == ["O", "B", "I", "I", "I", "I", "O", "O"]
    assert [r[1] for r in bio] == [r[1] for r in copy]


def test_project_factors_tag_index_picks_the_tag_factor():
    rows = [["took", "B", "take"], ["off", "I", "off"]]
    words = [["▁to", "ok"], ["▁o", "ff"]]
    out = project_factors(rows, words, iob="bio", tag_index=1)
    assert out == [["▁to", "B", "take"], ["ok", "I", "take"], ["▁o", "I", "off"], ["ff", "I", "off"]]
    with pytest.raises(ValueError, match="non-surface"):
        project_factors(rows, words, iob="bio", tag_index=0)


def test_encode_factored_gives_every_piece_the_word_factors(joint):
    rows = [r for r in parse_factored("Mary|mary|O ran|run_into|B into|run_into|I "
                                      "R&amp;D|r&amp;d|O unbelievably|unbelievably|O")]
    out = joint.encode_factored(rows, iob="bio")
    assert all(len(r) == 3 for r in out)
    assert joint.decode([r[0] for r in out]) == [r[0] for r in rows]
    by_word: list[list[list[str]]] = []
    for r in out:
        if r[0].startswith(SPACE):
            by_word.append([])
        by_word[-1].append(r)
    assert len(by_word) == len(rows)
    for row, pieces in zip(rows, by_word):
        assert {p[1] for p in pieces} == {row[1]}
        expected = [row[2]] + ["O" if row[2] == "O" else "I"] * (len(pieces) - 1)
        assert [p[2] for p in pieces] == expected
    assert len(by_word[-1]) > 1          # the unseen word really was split, so 'bio' was exercised


def test_group_pieces_counts_word_starts():
    assert group_pieces(["▁a", "b", "▁c"], 2) == [["▁a", "b"], ["▁c"]]
    with pytest.raises(SubwordCountError, match="2 word-start pieces for 3 words"):
        group_pieces(["▁a", "b", "▁c"], 3)
    with pytest.raises(SubwordCountError):
        group_pieces(["a", "▁b"], 2)
    with pytest.raises(SubwordCountError):
        project_factors([["a", "x"]], [["▁a"], ["▁b"]])


def test_bad_tag_in_bio_mode_is_refused():
    with pytest.raises(ValueError, match="tag 'X'"):
        project_factors([["a", "a", "X"]], [["▁a"]], iob="bio")


# ---------------------------------------------------------------- files

def test_apply_factored_file_and_decode_plain_file(joint, data, tmp_path):
    out = tmp_path / "out.sp"
    stats = apply_file(joint, data / "train.iob.en", out, factors=3, iob="bio", progress=False)
    src = fixture_lines(data, "train.iob.en")
    got = out.read_text(encoding="utf-8").splitlines()
    assert stats.lines == len(src) == len(got)
    assert stats.words == sum(len(line.split()) for line in src)
    assert stats.pieces == sum(len(line.split()) for line in got) > stats.words
    for line_in, line_out in zip(src, got):
        rows = parse_factored(line_out, 3)
        surfaces = [r[0] for r in parse_factored(line_in, 3)]
        assert joint.decode([r[0] for r in rows]) == surfaces
    assert "&#124;|&#124;|O" in got[0] and "&amp;|r&amp;d|O" in got[0]   # escapes survive unchanged
    # a plain file round-trips exactly through apply and decode
    plain = tmp_path / "plain.sp"
    apply_file(joint, data / "train.it", plain, progress=False)
    back = tmp_path / "back.it"
    dstats = decode_file(joint, plain, back, progress=False)
    assert back.read_bytes() == (data / "train.it").read_bytes()
    assert dstats.lines == 300


def test_empty_lines_stay_to_keep_files_aligned(joint, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("a b\n\nc\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    stats = apply_file(joint, src, out, progress=False)
    assert out.read_text(encoding="utf-8").split("\n")[1] == ""
    assert (stats.lines, stats.empty_lines, stats.words) == (3, 1, 3)


def test_misaligned_factor_counts_name_file_and_line_and_write_nothing(joint, tmp_path):
    src = tmp_path / "bad.iob"
    src.write_text("a|a|O b|b|O\nc|c|O d|d\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    with pytest.raises(InputError) as err:
        apply_file(joint, src, out, factors=3, progress=False)
    assert err.value.path == str(src) and err.value.line == 2
    assert "d|d" in str(err.value)
    assert not out.exists() and list(tmp_path.iterdir()) == [src]


def test_bad_utf8_is_located(joint, tmp_path):
    src = tmp_path / "bad.txt"
    src.write_bytes(b"good line\nbad \xff line\n")
    with pytest.raises(InputError) as err:
        apply_file(joint, src, tmp_path / "o", progress=False)
    assert err.value.line == 2 and "UTF-8" in str(err.value)
    with pytest.raises(InputError) as err:
        SubwordModel.train([src], vocab_size=300)
    assert err.value.line == 2


def test_bad_tag_and_reserved_escape_in_files_are_located(joint, tmp_path):
    src = tmp_path / "bad.iob"
    src.write_text("a|a|O\nb|b|Q\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        apply_file(joint, src, tmp_path / "o", factors=3, iob="bio", progress=False)
    assert err.value.line == 2 and "'Q'" in str(err.value)
    src.write_text("ok\nx&#9601;y\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        apply_file(joint, src, tmp_path / "o", progress=False)
    assert err.value.line == 2
    with pytest.raises(MwemtError, match="factored input"):
        apply_file(joint, src, tmp_path / "o", iob="bio", progress=False)


def test_factored_training_uses_only_the_surface_factor(data, tmp_path):
    surface = tmp_path / "surface.en"
    surface.write_text("".join(" ".join(r[0] for r in parse_factored(line)) + "\n"
                               for line in fixture_lines(data, "train.iob.en")), encoding="utf-8")
    a = SubwordModel.train([data / "train.iob.en"], vocab_size=350, factored=True)
    b = SubwordModel.train([surface], vocab_size=350)
    pieces = set(a.pieces)
    assert a.pieces == b.pieces
    assert not any("|" in p for p in pieces)
    bad = tmp_path / "bad.iob"
    bad.write_text("a|a|O\nb|b\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        SubwordModel.train([bad], vocab_size=300, factored=True)
    assert err.value.line == 2


@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
def test_training_is_reproducible_and_has_a_manifest(data, tmp_path, model_type):
    kw = dict(vocab_size=350, model_type=model_type, seed=3, input_sentence_size=200)
    a = SubwordModel.train([data / "train.en"], **kw)
    b = SubwordModel.train([data / "train.en"], **kw)
    assert a.sha256 == b.sha256
    c = SubwordModel.train([data / "train.en"], **{**kw, "seed": 4})
    assert c.sha256 != a.sha256            # another seed samples other training lines
    assert not list(tmp_path.iterdir()) and a.path is None  # training writes nothing
    assert a.save(tmp_path / "a") == tmp_path / "a.model" == a.path
    man = json.loads((tmp_path / "a.manifest.json").read_text(encoding="utf-8"))
    assert man["kind"] == "subword-model" and man["seed"] == 3
    assert man["inputs"]["input0"]["sha256"] and man["model"]["sha256"] == a.sha256
    assert man["config"]["normalization_rule_name"] == "identity"
    assert man["sentences_read"] == 300 and man["sentences_trained"] == 200
    assert "sentencepiece" in man["versions"]
    loaded = SubwordModel.load(tmp_path / "a.model")
    assert loaded.sha256 == a.sha256 and loaded.model_type == model_type and loaded.vocab_size == a.vocab_size
    vocab = (tmp_path / "a.vocab").read_text(encoding="utf-8").splitlines()
    assert len(vocab) == a.vocab_size and vocab[0].startswith("<unk>\t")


def test_load_errors(tmp_path):
    with pytest.raises(InputError, match="not found"):
        SubwordModel.load(tmp_path / "missing.model")
    junk = tmp_path / "junk.model"
    junk.write_bytes(b"\x00\x01not a model")
    with pytest.raises(InputError, match="not a sentencepiece model"):
        SubwordModel.load(junk)


def test_vocab_too_small_for_byte_fallback_is_a_clear_error(data, tmp_path):
    with pytest.raises(MwemtError, match="byte-fallback pieces"):
        SubwordModel.train([data / "train.en"], vocab_size=100)
    assert not (tmp_path / "m.model").exists()


# ---------------------------------------------------------------- CLI

def test_cli_joint_vs_separate(data, tmp_path, capsys):
    en, it = str(data / "train.en"), str(data / "train.it")
    assert main(["subword", "train", "--input", en, it, "--joint", "--model-prefix", str(tmp_path / "j"),
                 "--vocab-size", "400"]) == 0
    assert main(["subword", "train", "--input", en, it, "--model-prefix", str(tmp_path / "s"),
                 "--vocab-size", "400", "--model-type", "unigram"]) == 0
    assert sorted(p.name for p in tmp_path.glob("*.model")) == ["j.model", "s.en.model", "s.it.model"]
    joint_model = SubwordModel.load(tmp_path / "j.model")
    en_model = SubwordModel.load(tmp_path / "s.en.model")
    it_model = SubwordModel.load(tmp_path / "s.it.model")
    assert en_model.model_type == "unigram" and joint_model.model_type == "bpe"
    # 'à' occurs only in the Italian file: the joint and Italian models know it, the English one does not
    assert "<0xC3>" not in joint_model.encode_tokens(["città"])
    assert "<0xC3>" not in it_model.encode_tokens(["città"])
    assert "<0xC3>" in en_model.encode_tokens(["città"])
    man = json.loads((tmp_path / "j.manifest.json").read_text(encoding="utf-8"))
    assert man["joint"] is True and len(man["inputs"]) == 2
    assert json.loads((tmp_path / "s.en.manifest.json").read_text(encoding="utf-8"))["joint"] is False


def test_cli_apply_decode_files_and_stdio(data, tmp_path, capsys, monkeypatch):
    prefix = tmp_path / "m"
    assert main(["subword", "train", "-i", str(data / "train.iob.en"), "--factored", "-m", str(prefix),
                 "--vocab-size", "350", "--model-type", "unigram"]) == 0
    out = tmp_path / "out.sp"
    assert main(["subword", "apply", "--model", f"{prefix}.model", "-i", str(data / "train.iob.en"),
                 "-o", str(out), "--factors", "3", "--subword-iob", "copy", "-q"]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 300
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"took_care_of the city .\n")))
    assert main(["subword", "apply", "--model", f"{prefix}.model", "-q"]) == 0
    pieces = capsys.readouterr().out
    assert pieces.startswith(SPACE) and pieces.count(SPACE) == 4
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(pieces.encode())))
    assert main(["subword", "decode", "--model", f"{prefix}.model", "-q"]) == 0
    assert capsys.readouterr().out == "took_care_of the city .\n"
    bad = tmp_path / "bad.iob"
    bad.write_text("a|a|O\nb|b\n", encoding="utf-8")
    assert main(["subword", "apply", "--model", f"{prefix}.model", "-i", str(bad), "-o", str(tmp_path / "x"),
                 "--factors", "3"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:" in err and "expected" in err
    assert not (tmp_path / "x").exists()


def test_split_by_unicode_script_controls_merges_across_the_join(data, tmp_path):
    kw = dict(vocab_size=500)
    split = SubwordModel.train([data / "train.en"], **kw)
    merged = SubwordModel.train([data / "train.en"], split_by_unicode_script=False, **kw)
    def joins_letters(p):
        return "_" in p and any(c.isalpha() for c in p)
    assert not any(joins_letters(p) for p in split.pieces)
    assert any(joins_letters(p) for p in merged.pieces)
    tokens = ["Mary", "took_care_of", "R&amp;D"]
    assert merged.decode(merged.encode_tokens(tokens)) == tokens


def test_output_to_a_pipe_writes_through_instead_of_replacing_it(joint, tmp_path):
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    src = tmp_path / "in.txt"
    src.write_text("took_care_of it\n", encoding="utf-8")
    apply_file(joint, src, fifo, progress=False)
    reader.join(timeout=10)
    assert stat.S_ISFIFO(fifo.stat().st_mode)            # still a pipe, not a renamed regular file
    assert joint.decode(got[0].decode("utf-8").split()) == ["took_care_of", "it"]


def test_a_foreign_model_without_word_start_markers_fails_the_count_check(data, tmp_path):
    import sentencepiece as spm

    writer = io.BytesIO()   # trained outside mwemt, without the dummy prefix: the first word has no ▁
    spm.SentencePieceTrainer.train(input=str(data / "train.en"), model_writer=writer, vocab_size=70,
                                   add_dummy_prefix=False, normalization_rule_name="identity", minloglevel=2)
    model = SubwordModel(writer.getvalue())
    with pytest.raises(SubwordCountError):
        model.encode_tokens(["took_care_of", "it"])
    src = tmp_path / "in.iob"
    src.write_text("a|a|O\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        apply_file(model, src, tmp_path / "out", factors=3, progress=False)
    assert err.value.line == 1 and "word-start" in str(err.value)
    assert not (tmp_path / "out").exists()


def test_user_defined_symbols_stay_whole(data, tmp_path):
    model = SubwordModel.train([data / "train.en"], vocab_size=400,
                               user_defined_symbols=["<BT>", "&#124;"])
    pieces = model.encode_tokens(["<BT>", "Mary", "x<BT>y"])
    assert pieces.count("<BT>") == 2 and model.decode(pieces) == ["<BT>", "Mary", "x<BT>y"]
    model.save(tmp_path / "u")
    spec = json.loads((tmp_path / "u.manifest.json").read_text(encoding="utf-8"))["config"]
    assert spec["user_defined_symbols"] == ["&amp;", "&#124;", "&#95;", "&#9601;", "<BT>"]
    with pytest.raises(MwemtError, match="whitespace"):
        SubwordModel.train([data / "train.en"], vocab_size=400, user_defined_symbols=["a b"])
