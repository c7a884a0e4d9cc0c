"""Sentencepiece subwords for pretokenized (and factored) text, exactly invertible.

Why the settings below:
- identity normalization (no NFKC): a subword step must not change the text it segments, and the
  words-with-spaces join ``_`` must stay an ordinary character (sentencepiece's only meta symbol is
  ``▁``, U+2581, the word-boundary marker);
- byte fallback: characters unseen in training become ``<0xNN>`` pieces instead of ``<unk>``, so
  rare Unicode still round-trips and the NMT model can still produce it;
- the factor escapes of `mwemt.preprocess.encode` (``&#124;``, ``&#95;``, ``&amp;``) are
  user-defined symbols, so an escape is always one whole piece and survives unchanged;
- a literal ``▁`` inside a token would be read as a word boundary, so it is escaped as
  ``&#9601;`` on the way in and restored on the way out.

Factors are carried onto pieces: every piece of a word gets the word's factors; the IOB factor is
either copied or, in ``bio`` mode, continuation pieces become ``I`` (an ``O`` word stays ``O``).
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.fileio import atomic_write, count_lines, iter_lines
from mwemt.formats import format_factored, parse_factored
from mwemt.preprocess.encode import escape, tag_base
from mwemt.processes import call_in_child
from mwemt.sampling import sample_stream
from mwemt.schema import setting

log = logging.getLogger(__name__)

SPACE = "\u2581"                     # sentencepiece's word-boundary marker
SPACE_ESCAPE = "&#9601;"             # a literal U+2581 inside a token
FACTOR_ESCAPES = tuple(escape(ch) for ch in "&|_")   # &amp; &#124; &#95;
USER_SYMBOLS = FACTOR_ESCAPES + (SPACE_ESCAPE,)
CONTROL_PIECES = 3                   # <unk> <s> </s>
BYTE_PIECES = 256                    # <0x00> ... <0xFF> with byte fallback
# the least vocabulary a model can have (byte fallback, the factor escapes, one character); the real least is
# larger by the training text's distinct characters (sentencepiece's own count: `sentencepiece_failure` says it)
MIN_VOCAB_SIZE = CONTROL_PIECES + BYTE_PIECES + len(USER_SYMBOLS) + 1
# far beyond any NMT vocabulary; sentencepiece builds fewer pieces than asked when the text has no more to give
MAX_VOCAB_SIZE = 1_000_000
MODEL_TYPES = ("bpe", "unigram")
IOB_MODES = ("copy", "bio")
_BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>")
_PROTO_MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}


@dataclass(frozen=True)
class SubwordConfig:
    """Sentencepiece for an NMT system: trained on the system's own training text, factors carried
    onto every piece."""

    vocab_size: int = setting(8000, minimum=MIN_VOCAB_SIZE, maximum=MAX_VOCAB_SIZE,
                              help="pieces per sentencepiece model: at least 263 (3 control pieces, 256 byte pieces, "
                                   "4 factor escapes) plus the training text's distinct characters, checked before "
                                   "training; a text that supports fewer pieces than asked gets fewer, with a warning")
    model_type: str = setting("bpe", choices=MODEL_TYPES, help="sentencepiece algorithm")
    joint: bool = setting(True, help="one model for both sides (else one per side)")
    iob: str = setting("copy", choices=IOB_MODES, help="the IOB tag of a word's later pieces: copied, or "
                                                        "B becomes I (bio)")
    input_sentence_size: int = setting(0, minimum=0, help="train on a seeded sample of N lines (0 = all)")
    mwe_pieces_min_count: int = setting(0, minimum=0,
                                        help="joined MWE tokens (words-with-spaces, e.g. take_care_of) seen at least "
                                             "this often in the training source become single vocabulary pieces "
                                             "(0 = off: sentencepiece splits them at `_`)")
    mwe_pieces_max: int = setting(2000, minimum=1, help="at most this many MWE pieces (the most frequent)")


class SubwordCountError(ValueError):
    """The pieces of a line do not start one word each: the model or the input is not what we think."""


# ---------------------------------------------------------------- pure helpers

def unescape_token(token: str) -> str:
    return token.replace(SPACE_ESCAPE, SPACE) if SPACE_ESCAPE in token else token


def escape_line(tokens: Sequence[str]) -> str:
    """The tokens as one line for sentencepiece (``▁`` escaped); refuses tokens it could not give back."""
    line = " ".join(tokens)
    if line.split() != list(tokens):   # an empty token or whitespace inside one
        bad = next(t for t in tokens if not t or any(ch.isspace() for ch in t))
        raise ValueError(f"token {bad!r} is empty or contains whitespace")
    if SPACE_ESCAPE in line:
        bad = next(t for t in tokens if SPACE_ESCAPE in t)
        raise ValueError(f"token {bad!r} contains the reserved escape {SPACE_ESCAPE!r}")
    return line.replace(SPACE, SPACE_ESCAPE) if SPACE in line else line


def group_pieces(pieces: Sequence[str], n_words: int) -> list[list[str]]:
    """Split a line's pieces into words at word-start (``▁``) pieces, checking there are ``n_words``."""
    words: list[list[str]] = []
    current: list[str] = []
    for piece in pieces:
        if piece[:1] == SPACE:
            current = [piece]
            words.append(current)
        elif not words:
            raise SubwordCountError(f"the first piece {piece!r} does not start a word")
        else:
            current.append(piece)
    if len(words) != n_words:
        raise SubwordCountError(f"{len(words)} word-start pieces for {n_words} words")
    return words


def project_factors(rows: Sequence[Sequence[str]], words: Sequence[Sequence[str]], iob: str = "copy",
                    tag_index: int | None = None) -> list[list[str]]:
    """Token-major factor rows + each word's pieces -> piece-major rows (the piece replaces the surface).

    ``iob="bio"``: pieces after the first of a word get tag ``I`` (``O`` stays ``O``).
    """
    if iob not in IOB_MODES:
        raise ValueError(f"iob mode {iob!r} is not one of {', '.join(IOB_MODES)}")
    if len(rows) != len(words):
        raise SubwordCountError(f"{len(words)} segmented words for {len(rows)} tokens")
    if not rows:
        return []
    n = len(rows[0])
    tag = None
    if iob == "bio":
        tag = n - 1 if tag_index is None else (tag_index if tag_index >= 0 else n + tag_index)
        if not 1 <= tag < n:
            raise ValueError(f"tag factor index {tag_index} is not a non-surface factor of {n}-factor tokens")
    out: list[list[str]] = []
    append = out.append
    for k, (row, pieces) in enumerate(zip(rows, words), 1):
        if len(row) != n:
            raise ValueError(f"token {k} has {len(row)} factors, token 1 has {n}")
        if tag is not None and tag_base(row[tag]) not in ("B", "I", "O"):
            raise ValueError(f"token {k} has tag {row[tag]!r} in factor {tag + 1}; iob mode bio needs B, I or O "
                             "(optionally with a confidence bucket: B2, I2)")
        if len(pieces) == 1:
            append([pieces[0], *row[1:]])
            continue
        rest = list(row[1:])
        append([pieces[0], *rest])
        if tag is not None and tag_base(row[tag]) == "B":
            rest[tag - 1] = "I" + row[tag][1:]
        for piece in pieces[1:]:
            append([piece, *rest])
    return out


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _proto_fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of a protobuf message: just enough to read a model's specs without protobuf."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            yield number, value
        elif wire == 2:
            size, pos = _varint(buf, pos)
            yield number, buf[pos:pos + size]
            pos += size
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def model_spec(model_bytes: bytes) -> dict[str, object]:
    """Model type, normalization rule and byte fallback read from a serialized sentencepiece model."""
    spec: dict[str, object] = {"model_type": "unigram", "normalization": "nmt_nfkc", "byte_fallback": False}
    for number, value in _proto_fields(model_bytes):
        if number == 2 and isinstance(value, bytes):      # TrainerSpec
            for n2, v2 in _proto_fields(value):
                if n2 == 3 and isinstance(v2, int):
                    spec["model_type"] = _PROTO_MODEL_TYPES.get(v2, str(v2))
                elif n2 == 35 and isinstance(v2, int):
                    spec["byte_fallback"] = bool(v2)
        elif number == 3 and isinstance(value, bytes):    # NormalizerSpec
            for n2, v2 in _proto_fields(value):
                if n2 == 1 and isinstance(v2, bytes):
                    spec["normalization"] = v2.decode("utf-8")
    return spec


# ---------------------------------------------------------------- the model

class SubwordModel:
    """A sentencepiece model used on pretokenized text: tokens in, pieces out, and back exactly."""

    def __init__(self, model_bytes: bytes, path: str | Path | None = None):
        import sentencepiece as spm

        if not model_bytes:  # sentencepiece accepts an empty proto and fails later, on the first line
            raise ValueError("the model file is empty")
        self._bytes = model_bytes
        self._path = Path(path) if path is not None else None
        self._training: dict | None = None  # how `train` made it, for the manifest `save` writes
        self._sp = spm.SentencePieceProcessor(model_proto=model_bytes)
        self._spec = model_spec(model_bytes)
        if self._spec["normalization"] != "identity":
            log.warning("%s uses normalization %r, not identity: decoding may not restore the input exactly",
                        path or "model", self._spec["normalization"])
        self._byte_ids = {i for i in range(self._sp.get_piece_size()) if self._sp.is_byte(i)}

    # -- construction
    @classmethod
    def train(cls, inputs: Sequence[str | Path], vocab_size: int = 8000,
              model_type: str = "bpe", seed: int = 1, character_coverage: float = 1.0,
              input_sentence_size: int = 0, factored: bool = False, *, byte_fallback: bool = True,
              num_threads: int = 1, split_by_unicode_script: bool = True,
              user_defined_symbols: Sequence[str] = (), word_pieces: Sequence[str] = (),
              progress: bool = False) -> SubwordModel:
        """Train one model on all ``inputs`` (joint when they are both sides of a corpus).

        Nothing is written: `save` writes the model with its vocabulary and training manifest.
        ``factored=True`` trains on the surface (first) factor of ``w|f1|f2`` tokens.
        ``input_sentence_size`` > 0 trains on that many lines sampled with ``seed``.
        ``split_by_unicode_script`` (sentencepiece's default) keeps ``_`` and punctuation out of
        letter pieces, so ``walked_off`` -> ``▁walked _ off``; False lets BPE merge across them.
        ``user_defined_symbols`` (e.g. a ``<BT>`` tag) are always whole pieces, like the factor escapes.
        ``word_pieces`` are whole *tokens* that always become one word-start piece: a joined MWE
        ``take_care_of`` is segmented ``▁take_care_of`` (sentencepiece would otherwise split it at
        every ``_``); `frequent_mwe_tokens` chooses them. They are user-defined symbols with the
        word-boundary mark in front, so they match only at the start of a token (``retake_care_of``
        is segmented as usual); a longer token that starts with one (``take_care_of_it``) gets it
        as its first piece.
        """
        if model_type not in MODEL_TYPES:
            raise MwemtError(f"model type {model_type!r} is not one of {', '.join(MODEL_TYPES)}")
        if vocab_size < 10 or vocab_size > MAX_VOCAB_SIZE:
            raise MwemtError(f"vocabulary size {vocab_size}: expected 10 to {MAX_VOCAB_SIZE:,} pieces (a text rarely "
                             "supports more than a few tens of thousands)")
        if not 0.0 < character_coverage <= 1.0:
            raise MwemtError(f"character coverage {character_coverage} is not in (0, 1]")
        if not inputs:
            raise MwemtError("no training input given")
        extra = [u for u in user_defined_symbols if u not in USER_SYMBOLS]
        bad = next((u for u in extra if not u or any(ch.isspace() for ch in u) or SPACE in u), None)
        if bad is not None:
            raise MwemtError(f"user-defined symbol {bad!r} is empty or contains whitespace or {SPACE}")
        bad = next((w for w in word_pieces if not w or any(ch.isspace() for ch in w) or SPACE in w), None)
        if bad is not None:
            raise MwemtError(f"word piece {bad!r} is empty or contains whitespace or {SPACE}")
        extra += [SPACE + w for w in word_pieces]
        if any(str(p) == "-" for p in inputs):
            raise MwemtError("training reads files (their hashes go into the manifest), not standard input")
        sentences, n_read = sample_stream(training_sentences(inputs, factored=factored, progress=progress),
                                         input_sentence_size, seed)
        if not sentences:
            raise InputError("no non-empty lines to train on", inputs[0])
        # a vocabulary too small for the text's characters: sentencepiece's own count, in mwemt's words
        # (`sentencepiece_failure`); counting it here beforehand came out up to 4 pieces too high on some texts
        options = {
            "vocab_size": vocab_size, "model_type": model_type, "character_coverage": character_coverage,
            "normalization_rule_name": "identity", "byte_fallback": byte_fallback,
            "user_defined_symbols": [*USER_SYMBOLS, *dict.fromkeys(extra)], "split_by_whitespace": True,
            "split_by_unicode_script": split_by_unicode_script,
            "add_dummy_prefix": True, "remove_extra_whitespaces": True, "hard_vocab_limit": False,
            "num_threads": num_threads,
        }
        try:  # in a child process: sentencepiece's C++ training would hold off Ctrl-C until it ends
            model_bytes = call_in_child(_train_sentencepiece, sentences, seed, options)
        except RuntimeError as exc:
            raise MwemtError(sentencepiece_failure(str(exc), vocab_size)) from None
        model = cls(model_bytes)
        if model.vocab_size < vocab_size:
            log.warning("asked for %d pieces, but the training text supports only %d: the model has %d "
                        "(sentencepiece found nothing more to merge)", vocab_size, model.vocab_size, model.vocab_size)
        model._training = {
            "inputs": [str(p) for p in inputs], "seed": seed, "sentences_read": n_read,
            "sentences_trained": len(sentences),
            "config": {"inputs": [str(p) for p in inputs], "factored": factored,
                       "input_sentence_size": input_sentence_size, **options},
        }
        return model

    def save(self, prefix: str | Path, manifest_fields: dict | None = None) -> Path:
        """Write ``<prefix>.model``, ``<prefix>.vocab`` and ``<prefix>.manifest.json`` atomically;
        returns the model path (which `path` then names). The manifest records how the model was
        trained when `train` made it."""
        from mwemt.provenance import manifest, write_json

        prefix = Path(prefix)
        model_path = prefix.parent / (prefix.name + ".model")
        with atomic_write(model_path, "wb") as fh:
            fh.write(self._bytes)
        with atomic_write(prefix.parent / (prefix.name + ".vocab")) as fh:
            for i, piece in enumerate(self.pieces):
                fh.write(f"{piece}\t{self._sp.get_score(i):g}\n")
        self._path = model_path
        training = self._training or {}
        inputs = training.get("inputs", [])
        write_json(prefix.parent / (prefix.name + ".manifest.json"), manifest(
            "subword-model", inputs={f"input{i}": p for i, p in enumerate(inputs)}, config=training.get("config"),
            seed=training.get("seed"),
            **{k: training[k] for k in ("sentences_read", "sentences_trained") if k in training},
            model={"path": str(model_path), "sha256": self.sha256, "vocab_size": self.vocab_size},
            **(manifest_fields or {})))
        return model_path

    @classmethod
    def load(cls, model_path: str | Path) -> SubwordModel:
        path = Path(model_path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise InputError("model file not found", path, expected="a sentencepiece .model file") from None
        except IsADirectoryError:
            raise InputError("is a directory", path, expected="a sentencepiece .model file") from None
        try:
            return cls(data, path)
        except (RuntimeError, ValueError, IndexError) as exc:
            raise InputError(f"not a sentencepiece model ({exc})", path,
                             expected="a .model file written by 'mwemt subword train'") from None

    # -- properties for manifests
    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def vocab_size(self) -> int:
        return self._sp.get_piece_size()

    @property
    def model_type(self) -> str:
        return str(self._spec["model_type"])

    @property
    def byte_fallback(self) -> bool:
        return bool(self._spec["byte_fallback"])

    @property
    def pieces(self) -> list[str]:
        """The vocabulary in id order (control, byte and user-defined pieces included)."""
        return [self._sp.id_to_piece(i) for i in range(self.vocab_size)]

    @property
    def sha256(self) -> str:
        import hashlib

        return hashlib.sha256(self._bytes).hexdigest()

    def describe(self) -> dict[str, object]:
        return {"path": str(self._path) if self._path else None, "sha256": self.sha256,
                "vocab_size": self.vocab_size, "model_type": self.model_type,
                "byte_fallback": self.byte_fallback}

    # -- segmentation
    def encode_words(self, tokens: Sequence[str]) -> list[list[str]]:
        """The pieces of each token (raises `SubwordCountError` if they do not start one word each)."""
        if not tokens:
            return []
        return group_pieces(self._sp.encode(escape_line(tokens), out_type=str), len(tokens))

    def encode_tokens(self, tokens: Sequence[str]) -> list[str]:
        """The pieces of a token list, checked to hold one word-start piece per token."""
        if not tokens:
            return []
        pieces = self._sp.encode(escape_line(tokens), out_type=str)
        # tokens hold no ▁ (escaped) and pieces never cross a space, so ▁ only ever starts a piece
        starts = "".join(pieces).count(SPACE)
        if starts != len(tokens) or pieces[0][:1] != SPACE:
            group_pieces(pieces, len(tokens))   # raises with the details
            raise SubwordCountError(f"{starts} word boundaries for {len(tokens)} words")
        return pieces

    def encode_factored(self, rows: Sequence[Sequence[str]], iob: str = "copy",
                        tag_index: int | None = None) -> list[list[str]]:
        """Token-major factors (first = surface) -> piece-major factors (first = piece)."""
        words = self.encode_words([row[0] for row in rows])
        return project_factors(rows, words, iob=iob, tag_index=tag_index)

    def decode(self, pieces: Sequence[str]) -> list[str]:
        """Pieces -> tokens; byte pieces are reassembled (invalid UTF-8 from a model becomes U+FFFD)."""
        parts: list[str] = []
        pending = bytearray()
        for piece in pieces:
            if _BYTE_PIECE.fullmatch(piece) and self._sp.piece_to_id(piece) in self._byte_ids:
                pending.append(int(piece[3:5], 16))
                continue
            if pending:
                parts.append(pending.decode("utf-8", errors="replace"))
                pending.clear()
            parts.append(piece)
        if pending:
            parts.append(pending.decode("utf-8", errors="replace"))
        text = "".join(parts)
        if SPACE_ESCAPE in text:
            return [unescape_token(t) for t in text.split(SPACE) if t]
        return [t for t in text.split(SPACE) if t]


def frequent_mwe_tokens(inputs: Sequence[str | Path], min_count: int, max_pieces: int, *,
                        factored: bool = False) -> list[tuple[str, int]]:
    """The joined MWE tokens (``take_care_of``: tokens holding the words-with-spaces join ``_``) of
    ``inputs`` seen at least ``min_count`` times, the ``max_pieces`` most frequent first (ties in
    alphabetical order), with their counts: the `word_pieces` that make each one a single piece.

    A literal underscore is written ``&#95;`` by `mwemt annotate`, so every ``_`` in a token is a
    join. ``factored``: read the surface factor of ``w|f1|f2`` tokens.
    """
    from collections import Counter

    from mwemt.preprocess.encode import JOIN

    if min_count < 1 or max_pieces < 1:
        raise MwemtError(f"min_count and max_pieces must be at least 1, not {min_count} and {max_pieces}")
    counts: Counter = Counter()
    for line in training_sentences(inputs, factored=factored):
        counts.update(t for t in line.split() if JOIN in t.strip(JOIN))
    ranked = sorted(((t, n) for t, n in counts.items() if n >= min_count), key=lambda x: (-x[1], x[0]))
    return ranked[:max_pieces]


_SPM_TOO_SMALL = re.compile(r"Vocabulary size is smaller than required_chars\. (\d+) vs (\d+)")


def sentencepiece_failure(message: str, vocab_size: int) -> str:
    """sentencepiece's training error in mwemt's terms (its own names options mwemt does not have)."""
    m = _SPM_TOO_SMALL.search(message)
    if m:
        return (f"vocabulary size {vocab_size} is too small for this text: sentencepiece needs at least {m.group(2)} "
                "pieces (control and byte-fallback pieces, user-defined symbols and every distinct character); ask "
                f"for at least {m.group(2)} (subword.vocab_size in a config, --vocab-size of `mwemt subword train`), "
                "or lower --character-coverage")
    first = message.splitlines()[0] if message else ""
    return f"sentencepiece training failed: {first}"


def _train_sentencepiece(sentences: list[str], seed: int, options: dict) -> bytes:
    """The serialized model sentencepiece trains on ``sentences`` (run in a child process)."""
    import sentencepiece as spm

    spm.set_random_generator_seed(seed)
    writer = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(sentences), model_writer=writer, minloglevel=2,
                                   **options)
    return writer.getvalue()


MAX_SENTENCE_BYTES = 4192  # sentencepiece's max_sentence_length: a longer training line is skipped


def training_sentences(inputs: Sequence[str | Path], *, factored: bool = False,
                       progress: bool = False) -> Iterator[str]:
    """Non-empty lines of the inputs as sentencepiece will see them (surface factor, ``▁`` escaped).
    A line over sentencepiece's `MAX_SENTENCE_BYTES` is an error naming it, before training starts."""
    for path in inputs:
        n_factors = None
        with _progress(path, f"reading {Path(path).name}", progress) as bar:
            for lineno, line in enumerate(iter_lines(path), 1):
                bar.update(1)
                if not line.strip():
                    continue
                if factored:
                    rows = parse_factored(line, n_factors, path=path, lineno=lineno)
                    n_factors = len(rows[0])
                    tokens = [r[0] for r in rows]
                else:
                    tokens = line.split()
                try:
                    escaped = escape_line(tokens)
                except ValueError as exc:
                    raise InputError(str(exc), path, lineno) from None
                size = len(escaped.encode("utf-8"))
                if size > MAX_SENTENCE_BYTES:  # sentencepiece would drop it silently, or fail with no line
                    raise InputError(f"a line of {size:,} bytes (as sentencepiece reads it) is longer than "
                                     f"sentencepiece's limit of {MAX_SENTENCE_BYTES:,} bytes", path, lineno,
                                     expected=f"lines of at most {MAX_SENTENCE_BYTES:,} bytes: split or drop "
                                              "longer ones")
                yield escaped


# ---------------------------------------------------------------- files

@dataclass
class SubwordStats:
    lines: int = 0
    empty_lines: int = 0
    words: int = 0
    pieces: int = 0

    @property
    def pieces_per_word(self) -> float:
        return self.pieces / self.words if self.words else 0.0

    def as_dict(self) -> dict[str, float]:
        return {"lines": self.lines, "empty_lines": self.empty_lines, "words": self.words,
                "pieces": self.pieces, "pieces_per_word": round(self.pieces_per_word, 4)}


def _progress(path: str | Path, desc: str, progress: bool):
    from tqdm import tqdm

    show = progress and str(path) != "-"
    total = count_lines(path) if show and not str(path).endswith(".gz") else None
    return tqdm(total=total, desc=desc, unit=" lines", disable=not show,
                dynamic_ncols=True)


def apply_file(model: SubwordModel, in_path: str | Path, out_path: str | Path, *, factors: int = 1,
               iob: str = "copy", tag_index: int | None = None, progress: bool = True) -> SubwordStats:
    """Segment a pretokenized file (``factors`` > 1: factored ``w|f1|...`` tokens) line by line.

    Empty lines stay empty so parallel files stay aligned. Every line is checked: one word-start
    piece per word and the same number of factors on every output piece.
    """
    if factors < 1:
        raise MwemtError(f"factors must be at least 1, not {factors}")
    if iob not in IOB_MODES:
        raise MwemtError(f"iob mode {iob!r} is not one of {', '.join(IOB_MODES)}")
    if iob == "bio" and factors < 2:
        raise MwemtError("iob mode bio needs factored input (factors 2 or more)")
    label = "<stdin>" if str(in_path) == "-" else str(in_path)
    stats = SubwordStats()
    with atomic_write(out_path) as out, _progress(in_path, "subword apply", progress) as bar:
        for lineno, line in enumerate(iter_lines(in_path, name=label, allow_empty_file=False), 1):
            bar.update(1)
            stats.lines += 1
            if not line.strip():
                stats.empty_lines += 1
                out.write("\n")
                continue
            try:
                if factors == 1:
                    tokens = line.split()
                    pieces = model.encode_tokens(tokens)
                    n_words, text = len(tokens), " ".join(pieces)
                else:
                    rows = parse_factored(line, factors, path=label, lineno=lineno)
                    piece_rows = model.encode_factored(rows, iob=iob, tag_index=tag_index)
                    bad = next((k for k, r in enumerate(piece_rows, 1) if len(r) != factors), None)
                    if bad is not None:
                        raise ValueError(f"output piece {bad} has {len(piece_rows[bad - 1])} factors")
                    n_words, pieces, text = len(rows), piece_rows, format_factored(piece_rows)
            except SubwordCountError as exc:
                raise InputError(str(exc), label, lineno, expected="one word-start piece per token") from None
            except ValueError as exc:   # the message says what was expected
                raise InputError(str(exc), label, lineno) from None
            stats.words += n_words
            stats.pieces += len(pieces)
            out.write(text)
            out.write("\n")
    return stats


def looks_factored(pieces: Sequence[str]) -> int:
    """The number of ``|``-separated factors every piece has (2 or more, none empty), else 0.

    Plain pieces never look like this: a ``|`` of the text is its own piece unless the model was
    trained to let pieces cross script boundaries, and then not on every piece with one count."""
    if not pieces or "|" not in pieces[0]:
        return 0
    n = pieces[0].count("|") + 1
    for piece in pieces:
        fields = piece.split("|")
        if len(fields) != n or not all(fields):
            return 0
    return n


def decode_factored(model: SubwordModel, rows: Sequence[Sequence[str]]) -> list[list[str]]:
    """Factored pieces (first factor: the piece) -> factored tokens: each word's pieces decoded into the
    word, with the other factors of the word's first piece (what `apply` gave every piece of the word,
    the tag of ``bio`` continuation pieces aside)."""
    words = group_pieces([r[0] for r in rows], sum(1 for r in rows if r[0][:1] == SPACE))
    out: list[list[str]] = []
    k = 0
    for pieces in words:
        tokens = model.decode(pieces)
        if len(tokens) != 1:
            raise SubwordCountError(f"the pieces {' '.join(pieces)!r} decode to {len(tokens)} tokens, not one word")
        out.append([tokens[0], *rows[k][1:]])
        k += len(pieces)
    return out


def decode_file(model: SubwordModel, in_path: str | Path, out_path: str | Path, *, factors: int | None = None,
                progress: bool = True) -> SubwordStats:
    """Pieces (one line of space-separated pieces per sentence) back to pretokenized text.

    ``factors``: None refuses a line whose every piece holds ``|``-separated factors (the output of
    ``apply --factors N``), which plain decoding would glue into one nonsense word (``H|hi|Oi|hi|O``);
    1 decodes every line as plain pieces; N >= 2 decodes factored pieces into factored words
    (`decode_factored`), so ``decode --factors N`` inverts ``apply --factors N``.
    """
    if factors is not None and factors < 1:
        raise MwemtError(f"factors must be at least 1, not {factors}")
    label = "<stdin>" if str(in_path) == "-" else str(in_path)
    stats = SubwordStats()
    with atomic_write(out_path) as out, _progress(in_path, "subword decode", progress) as bar:
        for lineno, line in enumerate(iter_lines(in_path, name=label, allow_empty_file=False), 1):
            bar.update(1)
            stats.lines += 1
            pieces = line.split()
            if not pieces:
                stats.empty_lines += 1
            if factors is None and (n := looks_factored(pieces)):
                raise InputError(f"every piece holds {n} '|'-separated factors (e.g. {pieces[0]!r}): these are "
                                 "factored pieces, and decoding them as plain pieces would glue the factors into "
                                 "the words", label, lineno,
                                 expected=f"plain pieces; give --factors {n} to decode factored pieces into factored "
                                          "words, or --factors 1 if the '|' belong to the text")
            if factors is not None and factors > 1 and pieces:
                rows = parse_factored(line, factors, path=label, lineno=lineno)
                try:
                    words = decode_factored(model, rows)
                except SubwordCountError as exc:
                    raise InputError(str(exc), label, lineno,
                                     expected="factored pieces as 'subword apply --factors N' writes them") from None
                text, n_words = format_factored(words), len(words)
            else:
                tokens = model.decode(pieces)
                text, n_words = " ".join(tokens), len(tokens)
            stats.pieces += len(pieces)
            stats.words += n_words
            out.write(text)
            out.write("\n")
    return stats
