"""Back-translated target sentences that contain MWEs (Zaninello & Birch 2020, "MWE back-translation").

Monolingual target-language sentences are annotated with a *target* MWE lexicon by the same
`Annotator` every other stage uses; those with at least one MWE are visited in a seeded random
order and translated into the source language by a reverse model trained with `mwemt train`,
chunk by chunk, until enough translations survive the filters to reach the requested ratio. So
the ratio is met exactly whenever there are enough candidates, and no more sentences are
translated than needed (translation is the slow step).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

from tqdm import tqdm

from mwemt.augment.corpus import check_new_prefix, corpus_path, read_corpus, write_corpus
from mwemt.augment.ratio import achieved_ratio, check_ratio, requested_pairs
from mwemt.errors import InputError, MwemtError
from mwemt.fileio import iter_lines, iter_parallel
from mwemt.preprocess.annotate import Annotator, AnnotatorConfig, build_annotator
from mwemt.preprocess.tokenize import tokenize
from mwemt.provenance import file_record, manifest, portable_path, write_json


class ReverseTranslator(Protocol):
    """Translates target-language lines into the source language, one output line per input line.

    ``direction``: the (from, to) languages it translates, when it knows them (a model directory
    does), checked against the back-translation's before any work; None when unknown."""

    direction: tuple[str, str] | None

    def translate(self, lines: list[str]) -> list[str]: ...

    def describe(self) -> dict: ...


class NmtReverseModel:
    """A model directory written by `mwemt train`, decoded with beam search or top-k sampling."""

    def __init__(self, model_dir: str | Path, *, beam: int = 5, sampling: bool = False, topk: int = -1,
                 seed: int | None = None, batch_size: int = 32, expected: tuple[str, str] | None = None):
        """``expected``: the (from, to) languages the model must translate (the back-translation's
        target and source), refused before the model loads when its preprocess.json says otherwise."""
        from mwemt.nmt.modeldir import read_preprocess
        from mwemt.nmt.translate import Translator

        self.model_dir = Path(model_dir)
        pre = read_preprocess(self.model_dir)   # cheap: the direction is checked before the model loads
        self.direction = (str(pre["src_lang"]), str(pre["tgt_lang"]))
        if expected is not None:
            check_direction(self, expected)
        self.translator = Translator.load(self.model_dir)
        self.options = {"beam": beam, "sampling": sampling, "topk": topk, "seed": seed,
                        "batch_size": batch_size}

    def translate(self, lines: list[str]) -> list[str]:
        return list(self.translator.translate(lines, **self.options))

    def describe(self) -> dict:
        record = {"model_dir": portable_path(self.model_dir), "decoding": self.options,
                  "checkpoint": file_record(self.translator.checkpoint)}
        preprocess = self.model_dir / "preprocess.json"
        if preprocess.is_file():
            record["preprocess"] = file_record(preprocess)
        return record


class PrecomputedTranslations:
    """Back-translations made elsewhere (any external system), line-aligned with the monolingual file.

    Lets users back-translate once with a stronger or slower system and still get MWE selection,
    filtering, ratio and manifest from mwemt.
    """

    direction = None   # made elsewhere: the languages are the user's word

    def __init__(self, mono_path: str | Path, translations_path: str | Path):
        self.paths = {"monolingual": mono_path, "translations": translations_path}
        self.by_text: dict[str, str] = {}
        for mono, translation in iter_parallel(mono_path, translations_path, allow_empty=True):
            self.by_text.setdefault(" ".join(mono.split()), translation)

    def translate(self, lines: list[str]) -> list[str]:
        return [self.by_text[" ".join(line.split())] for line in lines]

    def describe(self) -> dict:
        return {"precomputed": {k: file_record(v) for k, v in self.paths.items()}}


def check_direction(translator: ReverseTranslator, expected: tuple[str, str]) -> None:
    """Refuse a reverse model that does not translate ``expected`` = (target, source) language: an EN->IT
    model given as the IT->EN reverse model would 'translate' Italian as if it were English."""
    direction = translator.direction
    if direction is None or tuple(direction) == tuple(expected):
        return
    model_dir = getattr(translator, "model_dir", None)
    raise InputError(f"the reverse model translates {direction[0]}->{direction[1]}, but back-translation into "
                     f"{expected[1]} needs a {expected[0]}->{expected[1]} model",
                     Path(model_dir) / "preprocess.json" if model_dir is not None else None,
                     expected=f"src_lang {expected[0]!r} and tgt_lang {expected[1]!r}: train the reverse model "
                              f"with src_lang {expected[0]} and tgt_lang {expected[1]}")


@dataclass(frozen=True)
class BacktranslationConfig:
    ratio: float = 0.02
    seed: int = 1
    tag: str = ""
    max_length_ratio: float = 2.0
    max_tokens: int = 80
    chunk_size: int = 512
    lexicon_format: str = "auto"
    lexicon_side: str = "target"
    lemmatizer: str = "simplemma"
    max_gap: int = 0
    src_lang: str = "en"
    tgt_lang: str = "it"


@dataclass(frozen=True)
class Candidate:
    """A monolingual sentence with at least one target MWE, and its 1-based line in the input."""

    line: int
    text: str
    n_tokens: int
    mwes: tuple[str, ...]


@dataclass
class SelectionCounts:
    lines: int = 0
    empty: int = 0
    too_long: int = 0
    duplicate: int = 0
    in_training_target: int = 0
    without_mwe: int = 0
    with_mwe: int = 0


def select_candidates(lines: Iterable[tuple[int, str]], annotator: Annotator, max_tokens: int,
                      exclude: AbstractSet[str] = frozenset(), counts: SelectionCounts | None = None,
                      progress: bool = False) -> list[Candidate]:
    """Monolingual sentences worth back-translating: non-empty, not too long, new, with a target MWE."""
    counts = counts if counts is not None else SelectionCounts()
    seen: set[str] = set()
    out: list[Candidate] = []
    for lineno, raw in tqdm(lines, desc="selecting", unit="line", file=sys.stderr, disable=not progress):
        counts.lines += 1
        text = " ".join(raw.split())
        if not text:
            counts.empty += 1
            continue
        if text in seen:
            counts.duplicate += 1
            continue
        seen.add(text)
        if text in exclude:
            counts.in_training_target += 1
            continue
        tokens = annotator.tokens(text)
        if len(tokens) > max_tokens:
            counts.too_long += 1
            continue
        sent = annotator.annotate_tokens(tokens)
        if not sent.mwes:
            counts.without_mwe += 1
            continue
        counts.with_mwe += 1
        out.append(Candidate(lineno, text, len(sent.tokens), tuple(m.lemma for m in sent.mwes)))
    return out


def rejection(candidate: Candidate, translation: str, src_lang: str, max_length_ratio: float) -> str | None:
    """Why a back-translation is dropped (``empty``, ``length_ratio``, ``copy``), or None to keep it."""
    text = translation.strip()
    if not text:
        return "empty"
    n = len(tokenize(text, src_lang))
    if max(n, candidate.n_tokens) > max_length_ratio * min(n, candidate.n_tokens):
        return "length_ratio"
    if text.casefold() == candidate.text.casefold():
        return "copy"
    return None


def tag_source(text: str, tag: str) -> str:
    """Prefix the synthetic source with a tag such as ``<BT>`` (Caswell et al. 2019, tagged BT)."""
    text = " ".join(text.split())
    return f"{tag} {text}" if tag else text


@dataclass
class Synthetic:
    candidate: Candidate
    source: str


@dataclass
class TranslationCounts:
    translated: int = 0
    rejected: dict[str, int] = field(default_factory=lambda: {"empty": 0, "length_ratio": 0, "copy": 0})
    kept: int = 0
    unused: int = 0  # translated and acceptable, but the ratio was already reached


def translate_until(candidates: Sequence[Candidate], n_requested: int, translator: ReverseTranslator,
                    config: BacktranslationConfig, counts: TranslationCounts,
                    progress: bool = True) -> list[Synthetic]:
    """Translate candidates in a seeded random order, chunk by chunk, until ``n_requested`` survive."""
    order = list(range(len(candidates)))
    random.Random(config.seed).shuffle(order)
    kept: list[Synthetic] = []
    pos = 0
    bar = tqdm(total=n_requested, desc="back-translating", unit="pair", file=sys.stderr, disable=not progress)
    while len(kept) < n_requested and pos < len(order):
        missing = n_requested - len(kept)
        size = min(config.chunk_size, max(missing + missing // 10 + 1, 1))
        chunk = [candidates[i] for i in order[pos:pos + size]]
        pos += len(chunk)
        outputs = translator.translate([c.text for c in chunk])
        if len(outputs) != len(chunk):
            raise MwemtError(f"the reverse model returned {len(outputs)} lines for {len(chunk)} inputs")
        counts.translated += len(chunk)
        for cand, out in zip(chunk, outputs):
            why = rejection(cand, out, config.src_lang, config.max_length_ratio)
            if why is not None:
                counts.rejected[why] += 1
            elif len(kept) < n_requested:
                kept.append(Synthetic(cand, tag_source(out, config.tag)))
                bar.update(1)
            else:
                counts.unused += 1
    bar.close()
    counts.kept = len(kept)
    kept.sort(key=lambda s: s.candidate.line)
    return kept


def target_annotator(paths: Sequence[str | Path], config: BacktranslationConfig) -> Annotator:
    """The annotator that finds target-language MWEs: one lexicon from one or more files (their union)."""
    annotator = build_annotator(AnnotatorConfig(lang=config.tgt_lang, lexicon=tuple(str(p) for p in paths),
                                                lexicon_format=config.lexicon_format,
                                                lexicon_side=config.lexicon_side, lemmatizer=config.lemmatizer,
                                                max_gap=config.max_gap))
    if annotator.lexicon is None or not annotator.lexicon.normalized:
        raise MwemtError(f"the target lexicon {', '.join(map(str, paths))} has no multiword entries to match")
    return annotator


def augment_with_backtranslation(mono_path: str | Path, lexicon_path: str | Path | Sequence[str | Path],
                                 train_prefix: str | Path,
                                 out_prefix: str | Path, translator: ReverseTranslator,
                                 config: BacktranslationConfig, progress: bool = True) -> dict:
    """Write ``OUT.{src,tgt}`` = training pairs + back-translated MWE sentences, and the manifest."""
    if config.max_length_ratio < 1:
        raise MwemtError(f"max_length_ratio must be at least 1, not {config.max_length_ratio}")
    if config.max_tokens < 1:
        raise MwemtError(f"max_tokens must be at least 1, not {config.max_tokens}: no sentence would be selected")
    check_ratio(config.ratio)
    check_direction(translator, (config.tgt_lang, config.src_lang))
    src_path, tgt_path = corpus_path(train_prefix, config.src_lang), corpus_path(train_prefix, config.tgt_lang)
    check_new_prefix(out_prefix, [src_path, tgt_path, mono_path], config.src_lang, config.tgt_lang)
    train = read_corpus(train_prefix, config.src_lang, config.tgt_lang)
    n_requested = requested_pairs(config.ratio, len(train))
    lexicon_paths = [lexicon_path] if isinstance(lexicon_path, (str, Path)) else list(lexicon_path)
    annotator = target_annotator(lexicon_paths, config)
    lexicon = annotator.lexicon
    sel = SelectionCounts()
    training_targets = {" ".join(t.split()) for _, t in train}
    candidates = select_candidates(enumerate(iter_lines(mono_path), 1), annotator, config.max_tokens,
                                   training_targets, sel, progress)
    if not candidates:
        raise MwemtError(f"no sentence of {mono_path} could be selected: of its {sel.lines} lines, {sel.empty} empty, "
                         f"{sel.duplicate} repeated, {sel.in_training_target} in the training targets, "
                         f"{sel.too_long} longer than max_tokens {config.max_tokens}, {sel.without_mwe} without an "
                         f"MWE of {lexicon.name} (expected new sentences of at most {config.max_tokens} tokens "
                         "with a target-lexicon MWE)")
    tr = TranslationCounts()
    synthetic = translate_until(candidates, n_requested, translator, config, tr, progress)
    pairs = train + [(s.source, s.candidate.text) for s in synthetic]
    outputs = write_corpus(out_prefix, pairs, config.src_lang, config.tgt_lang)
    first = len(train) + 1
    m = manifest(
        "augment.backtranslate",
        inputs={"monolingual": mono_path,
                **{"target_lexicon" + (f"_{k}" if k > 1 else ""): p for k, p in enumerate(lexicon_paths, 1)},
                "train_" + config.src_lang: src_path, "train_" + config.tgt_lang: tgt_path},
        seed=config.seed, config=asdict(config),
        reverse_model=translator.describe(),
        annotator=annotator.signature,
        counts={"selection": asdict(sel), "translation": asdict(tr), "synthetic_pairs": len(synthetic)},
        ratio={"definition": "synthetic pairs / original training pairs", "requested": config.ratio,
               "training_pairs": len(train), "requested_pairs": n_requested,
               "achieved": round(achieved_ratio(len(synthetic), len(train)), 6),
               "shortfall": n_requested - len(synthetic)},
        outputs=outputs,
        synthetic={"first_line": first, "last_line": len(pairs),
                   "fields": ["output_line", "monolingual_line", "target_mwes"],
                   "pairs": [[first + k, s.candidate.line, list(s.candidate.mwes)]
                             for k, s in enumerate(synthetic)]},
    )
    write_json(f"{out_prefix}.manifest.json", m)
    return m


def augment_with_real_translations(bt_manifest: str | Path, mono_source: str | Path, mono_path: str | Path,
                                   train_prefix: str | Path, out_prefix: str | Path, *, src_lang: str = "en",
                                   tgt_lang: str = "it", tag: str | None = None) -> dict:
    """The ``backtranslation-real`` control: the target sentences a back-translation run selected
    (its manifest's ``synthetic.pairs``, the same lines in the same order) paired with their *real*
    source sentences, read from ``mono_source``, the source side line-aligned with the monolingual
    text ``mono_path`` (e.g. the pairs `data.train_size` left out). So the control differs from
    back-translation only in where the source side comes from, real text instead of the reverse
    model's output.

    The monolingual file must be the one the back-translation read (same sha256 as its manifest
    records) and each selected line must hold the same text. ``tag`` (default: the back-translation's
    own) prefixes every source, as there. Writes ``OUT.{src,tgt}`` and ``OUT.manifest.json``.
    """
    import json

    from mwemt.fileio import read_lines, sha256_file

    try:
        bt = json.loads(Path(bt_manifest).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:   # ValueError: not JSON, or not UTF-8 text at all
        raise MwemtError(f"{bt_manifest}: not a back-translation manifest ({exc})") from None
    if not isinstance(bt, dict) or bt.get("kind") != "augment.backtranslate" or "synthetic" not in bt:
        kind = bt.get("kind") if isinstance(bt, dict) else None
        raise MwemtError(f"{bt_manifest}: not a back-translation manifest (kind {kind!r}; expected the "
                         "OUT.manifest.json of 'mwemt augment backtranslate')")
    recorded = (bt.get("inputs") or {}).get("monolingual") or {}
    if recorded.get("sha256") and recorded["sha256"] != sha256_file(mono_path):
        raise MwemtError(f"{mono_path} is not the monolingual text {bt_manifest} selected from "
                         f"(sha256 {recorded['sha256'][:12]}...)")
    src_path, tgt_path = corpus_path(train_prefix, src_lang), corpus_path(train_prefix, tgt_lang)
    check_new_prefix(out_prefix, [src_path, tgt_path, mono_path, mono_source], src_lang, tgt_lang)
    train = read_corpus(train_prefix, src_lang, tgt_lang)
    mono, sources = read_lines(mono_path), read_lines(mono_source)
    if len(mono) != len(sources):
        raise MwemtError(f"{mono_source} has {len(sources)} lines but {mono_path} has {len(mono)}: they must be "
                         "line-aligned (the two sides of the same pairs)")
    tag = (bt.get("config") or {}).get("tag", "") if tag is None else tag
    bt_train = (bt.get("ratio") or {}).get("training_pairs")
    if bt_train is not None and bt_train != len(train):
        raise MwemtError(f"{bt_manifest} added to {bt_train} training pairs, {train_prefix} has {len(train)}")
    synthetic: list[tuple[str, str]] = []
    origin = []
    for _, mono_line, mwes in bt["synthetic"]["pairs"]:
        if not 1 <= mono_line <= len(mono):
            raise MwemtError(f"{bt_manifest}: monolingual line {mono_line} is not in {mono_path}")
        text = " ".join(mono[mono_line - 1].split())
        source = " ".join(sources[mono_line - 1].split())
        if not source:
            raise MwemtError(f"{mono_source}:{mono_line}: empty source for the selected sentence {text!r}")
        synthetic.append((tag_source(source, tag), text))
        origin.append([len(train) + len(synthetic), mono_line, mwes])
    pairs = train + synthetic
    outputs = write_corpus(out_prefix, pairs, src_lang, tgt_lang)
    first = len(train) + 1
    m = manifest(
        "augment.backtranslate-real",
        inputs={"backtranslation_manifest": bt_manifest, "monolingual": mono_path, "monolingual_source": mono_source,
                "train_" + src_lang: src_path, "train_" + tgt_lang: tgt_path},
        config={"tag": tag, "src_lang": src_lang, "tgt_lang": tgt_lang},
        counts={"synthetic_pairs": len(synthetic), "backtranslated_pairs": bt["counts"]["synthetic_pairs"]},
        ratio={"definition": "synthetic pairs / original training pairs", "training_pairs": len(train),
               "achieved": round(achieved_ratio(len(synthetic), len(train)), 6)},
        outputs=outputs,
        synthetic={"first_line": first, "last_line": len(pairs),
                   "fields": ["output_line", "monolingual_line", "target_mwes"], "pairs": origin},
    )
    write_json(f"{out_prefix}.manifest.json", m)
    return m
