"""Property tests of every file reader in `mwemt.formats`: random bytes, and valid files mutated at
random (bytes deleted, inserted, replaced; lines duplicated, dropped, swapped; the file cut short),
either parse or raise `InputError` naming the file and, for anything about a line, its number.
Never another exception: a KeyError or IndexError from a reader is a crash a user would see.

An error may omit the line only when it is about the file as a whole (no entries at all, a
format that does not match); those messages are listed in ``WHOLE_FILE``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mwemt import formats
from mwemt.errors import InputError

FIX = Path(__file__).resolve().parent / "fixtures"

WHOLE_FILE = re.compile(
    r"^(no (lexicon entries|sentences|non-empty|compositionality scores|entries|ontolex:LexicalEntry)|"
    r"test set is empty|this looks like a |.* lexicon holds no |empty file|no .* found|"
    r"not valid Turtle \(the parser gave up without a position)")  # rdflib's IndexError & co. carry no line

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _consume(result) -> None:
    if result is None or isinstance(result, (list, dict, tuple)):
        return
    for _ in result:  # generators only fail when read
        pass


# name -> (how to read a path, a valid file to mutate, its suffix)
READERS = {
    "tokenized": (lambda p: formats.read_tokenized(p), b"she took care of it .\nhe walked off .\n", ".txt"),
    "factored": (lambda p: formats.read_factored(p, 3),
                 b"she|she|O took|take_care_of|B care|take_care_of|I\nhe|he|O walked|walk|O\n", ".txt"),
    "factored-any": (lambda p: formats.read_factored(p), b"a|b c|d\ne|f\n", ".txt"),
    "lexicon list": (lambda p: formats.read_lexicon_entries(p, "list"), (FIX / "core" / "lexicon.txt").read_bytes(),
                     ".txt"),
    "lexicon auto": (lambda p: formats.read_lexicon_entries(p, "auto"), (FIX / "core" / "lexicon.txt").read_bytes(),
                     ".txt"),
    "lexicon bilingual": (lambda p: formats.read_lexicon_entries(p, "bilingual"),
                          (FIX / "augment" / "dict.tsv").read_bytes(), ".tsv"),
    "bilingual pairs": (lambda p: formats.read_bilingual_pairs(p), (FIX / "augment" / "dict.tsv").read_bytes(),
                        ".tsv"),
    "lexicon wn-aligned": (lambda p: formats.read_lexicon_entries(p, "wn-aligned", side="target"),
                           (FIX / "augment" / "wn.tsv").read_bytes(), ".tsv"),
    "lexicon oewn": (lambda p: formats.read_lexicon_entries(p, "oewn"),
                     (formats.OEWN_HEADER + "\ntake care of\tv\tverb.social\t3\toewn-1-v\n"
                      "ivory tower\tn\tnoun.state\t2\toewn-2-n\n").encode(), ".tsv"),
    "lexicon lidioms": (lambda p: formats.read_lexicon_entries(p, "lidioms", lang="de"),
                        (FIX / "idioms" / "mini.ttl").read_bytes(), ".ttl"),
    "lexicon cupt": (lambda p: formats.read_lexicon_entries(p, "cupt"), (FIX / "parseme" / "small.cupt").read_bytes(),
                     ".cupt"),
    "cupt": (lambda p: formats.read_cupt(p), (FIX / "parseme" / "small.cupt").read_bytes(), ".cupt"),
    "cupt lexicon": (lambda p: formats.extract_cupt_lexicon([p]), (FIX / "parseme" / "small.cupt").read_bytes(),
                     ".cupt"),
    "testset": (lambda p: formats.read_testset(p), (FIX / "eval" / "testset.jsonl").read_bytes(), ".jsonl"),
    "compositionality": (lambda p: formats.read_compositionality(p), (FIX / "eval" / "comp.it.tsv").read_bytes(),
                         ".tsv"),
}


def check_reader(name: str, data: bytes, tmp: Path) -> None:
    read, _, suffix = READERS[name]
    path = tmp / f"input{suffix}"
    path.write_bytes(data)
    try:
        _consume(read(path))
    except InputError as exc:
        assert exc.path == str(path), f"{name}: error names {exc.path!r}, not the file: {exc}"
        assert exc.line is not None or WHOLE_FILE.match(exc.detail), f"{name}: no line number in {exc}"
        if exc.line is not None:
            n_lines = data.count(b"\n") + 1
            assert 1 <= exc.line <= n_lines, f"{name}: line {exc.line} of a {n_lines}-line file: {exc}"


MUTATION = st.tuples(
    st.sampled_from(["delete", "insert", "replace", "dup-line", "drop-line", "swap-lines", "truncate"]),
    st.floats(0, 1, allow_nan=False), st.floats(0, 1, allow_nan=False),
    st.sampled_from([b"\t", b"|", b"\n", b" ", b"\x00", b"\xff", b"\xc3", b"-", b":", b";", b"*", b"_", b"0", b"9",
                     b"{", b"}", b'"', b",", b"#", b"\xe2\x96\x81", b"\r", b"\\", b"<", b">", b"@", b"."]))


def mutate(data: bytes, ops) -> bytes:
    for op, a, b, piece in ops:
        if op in ("dup-line", "drop-line", "swap-lines"):
            lines = data.split(b"\n")
            i, j = int(a * (len(lines) - 1)), int(b * (len(lines) - 1))
            if op == "dup-line":
                lines.insert(i, lines[i])
            elif op == "drop-line" and len(lines) > 1:
                del lines[i]
            else:
                lines[i], lines[j] = lines[j], lines[i]
            data = b"\n".join(lines)
            continue
        k = int(a * len(data))
        if op == "delete":
            data = data[:k] + data[k + 1 + int(b * 3):]
        elif op == "insert":
            data = data[:k] + piece + data[k:]
        elif op == "replace":
            data = data[:k] + piece + data[k + 1:]
        else:
            data = data[:k]
    return data


@pytest.mark.parametrize("name", sorted(READERS))
def test_each_valid_seed_file_parses(name, tmp_path):
    read, seed, suffix = READERS[name]
    path = tmp_path / f"seed{suffix}"
    path.write_bytes(seed)
    _consume(read(path))


@pytest.mark.parametrize("name", sorted(READERS))
@SETTINGS
@given(data=st.binary(max_size=400))
def test_random_bytes_parse_or_raise_a_located_input_error(name, data, tmp_path_factory):
    check_reader(name, data, tmp_path_factory.mktemp("bytes"))


@pytest.mark.parametrize("name", sorted(READERS))
@SETTINGS
@given(ops=st.lists(MUTATION, min_size=1, max_size=4))
def test_mutated_valid_files_parse_or_raise_a_located_input_error(name, ops, tmp_path_factory):
    check_reader(name, mutate(READERS[name][1], ops), tmp_path_factory.mktemp("mutated"))


@SETTINGS
@given(line=st.text(alphabet=st.sampled_from("ab|  \t_\u2581"), max_size=30), n=st.sampled_from([None, 1, 2, 3]))
def test_parse_factored_raises_only_input_errors_with_the_line(line, n):
    try:
        rows = formats.parse_factored(line, n, path="x.txt", lineno=7)
    except InputError as exc:
        assert exc.path == "x.txt" and exc.line == 7
    else:
        assert all(all(f for f in row) for row in rows)
        assert n is None or all(len(row) == n for row in rows)
