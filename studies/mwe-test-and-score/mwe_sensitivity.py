#!/usr/bin/env python
"""Does the MWE score move with translation quality? Checkpoints of one training run (issue 29, item 6).

A model directory whose training kept interval checkpoints (``train.extra_args:
[--save-interval-updates, N, --keep-interval-updates, -1]``: fairseq writes
``checkpoints/checkpoint_EPOCH_UPDATES.pt`` every N updates) holds the same model at several stages
of training. Each checkpoint translates the MWE test set's sources (as `mwemt run` translates a
test: the raw source of each item, `mwemt.nmt.translate.Translator`), and every translation is
scored with BLEU, chrF and the MWE score against the plain reference; with ``--mwe-table`` (or a
test set whose items carry ``alternatives``) also with the MWE score that credits every acceptable
translation (metric ``mwe-alts``). Later checkpoints translate better, so a score that can see
an effect must rise with BLEU.

The verdict (`rise_verdict`) combines:

- the rank agreement of the MWE score with BLEU over the checkpoints (Kendall tau-b and Spearman
  rho; tau = 1 means every pair of checkpoints is ordered the same way by both), and
- the difference between the first and the last checkpoint, with a 95% paired bootstrap interval
  (the project's bootstrap, `mwemt.evaluate.bootstrap`: the same resampled sentences for every
  checkpoint and metric; the percentile interval of the resampled differences) and the p-value of
  the project's paired test (the first checkpoint is the baseline).

"yes": tau = 1 and the first-to-last rise's interval lies above 0; "partly": tau > 0 and the rise's
interval lies above 0; "no" otherwise.

Translations are cached per checkpoint in OUT/hyps/NAME.txt with OUT/hyps/NAME.json (the hashes
of the checkpoint and the test set, the decoding settings): a rerun translates only what changed,
and an interrupted run resumes. Writes OUT/results.md (the table, signatures, verdict) and
OUT/report.json (everything, with provenance), and prints the table.

    python studies/mwe-test-and-score/mwe_sensitivity.py --model runs/sensitivity/model \
        --testset results/cpu-science/refs/tatoeba-mwe.jsonl --ref results/cpu-science/refs/tatoeba-mwe.txt \
        --mwe-table runs/sensitivity/table/mwe-table.jsonl --out runs/sensitivity/tatoeba-mwe
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from mwemt.cli.argtypes import float_range, positive_int, seed, workers
from mwemt.errors import InputError, MwemtError
from mwemt.evaluate.bootstrap import BootstrapSettings, resample_indices, resampled_scores
from mwemt.evaluate.inputs import load_score_inputs
from mwemt.evaluate.meta_eval import percentile_ci
from mwemt.evaluate.registry import MetricOptions, build_metric
from mwemt.evaluate.scoring import MetricResults, score_metric
from mwemt.fileio import read_lines, sha256_file, write_lines, write_text
from mwemt.provenance import manifest, portable_path, write_json

INTERVAL = re.compile(r"^checkpoint_(\d+)_(\d+)\.pt$")
LAST = "checkpoint_last.pt"
MWE_ALT = "mwe-alts"   # the alternatives-aware MWE score (`mwemt.evaluate.mwe_alts`)


@dataclass(frozen=True)
class Checkpoint:
    name: str       # file name in MODEL/checkpoints
    updates: int    # training updates when it was saved


def checkpoint_updates(path: Path) -> int:
    """The number of updates a fairseq checkpoint was saved at (its optimizer history)."""
    import mwemt.nmt.fairseq_plugin  # noqa: F401  (registers what the checkpoint's pickle names)
    from mwemt.nmt.modeldir import read_checkpoint

    state = read_checkpoint(path, path.parent.parent)
    history = state.get("optimizer_history") or []
    if not history or "num_updates" not in history[-1]:
        raise InputError("no optimizer history with num_updates", path,
                         expected="a checkpoint written by fairseq-train (`mwemt train`)")
    return int(history[-1]["num_updates"])


def find_checkpoints(model_dir: Path, names: list[str] | None = None) -> list[Checkpoint]:
    """The interval checkpoints of MODEL/checkpoints in training order (by updates, not by name), and
    checkpoint_last.pt when it is later than all of them; ``names`` picks checkpoints by file name."""
    ckpt_dir = model_dir / "checkpoints"
    if not ckpt_dir.is_dir():
        raise MwemtError(f"{ckpt_dir} not found: --model must be a model directory written by `mwemt train`")
    if names:
        out = []
        for name in names:
            p = ckpt_dir / name
            if not p.is_file():
                raise InputError("checkpoint not found", p, expected=f"a .pt file in {ckpt_dir}")
            m = INTERVAL.match(name)
            out.append(Checkpoint(name, int(m.group(2)) if m else checkpoint_updates(p)))
        return sorted(out, key=lambda c: c.updates)
    out = [Checkpoint(p.name, int(INTERVAL.match(p.name).group(2)))
           for p in ckpt_dir.iterdir() if INTERVAL.match(p.name)]
    out.sort(key=lambda c: c.updates)
    if (ckpt_dir / LAST).is_file():
        last = checkpoint_updates(ckpt_dir / LAST)
        if not out or last > out[-1].updates:
            out.append(Checkpoint(LAST, last))
    if len(out) < 2:
        raise MwemtError(f"{ckpt_dir} holds {len(out)} checkpoint(s) of distinct updates; the comparison needs two "
                         "or more: train with train.extra_args [--save-interval-updates, N, --keep-interval-updates, -1]")
    return out


def translate_cached(model_dir: Path, ckpt: Checkpoint, sources: list[str], source_sha: str, out_dir: Path, *,
                     beam: int, batch_size: int, threads: int) -> Path:
    """OUT/hyps/NAME.txt: the checkpoint's translations of ``sources``, reused when the checkpoint, the
    sources and the decoding settings are those recorded in OUT/hyps/NAME.json."""
    import json

    hyp = out_dir / "hyps" / f"{Path(ckpt.name).stem}.txt"
    meta_path = hyp.with_suffix(".json")
    ckpt_path = model_dir / "checkpoints" / ckpt.name
    key = {"checkpoint": ckpt.name, "checkpoint_sha256": sha256_file(ckpt_path), "updates": ckpt.updates,
           "source_sha256": source_sha, "lines": len(sources), "beam": beam, "batch_size": batch_size}
    if hyp.is_file() and meta_path.is_file():
        try:
            if json.loads(meta_path.read_text(encoding="utf-8")) == key and len(read_lines(hyp)) == len(sources):
                print(f"  {ckpt.name}: cached {portable_path(hyp)}", file=sys.stderr)
                return hyp
        except json.JSONDecodeError:
            pass
    from mwemt.nmt.translate import Translator

    print(f"  {ckpt.name}: translating {len(sources)} sentences ...", file=sys.stderr)
    translator = Translator.load(model_dir, checkpoint=ckpt.name, threads=threads)
    hyps = translator.translate(sources, beam=beam, batch_size=batch_size)
    write_lines(hyp, [" ".join(h.split()) for h in hyps])   # as the run's translate stage writes them
    write_json(meta_path, key)                              # after the translations: a cache entry is whole
    return hyp


def kendall_spearman(x: list[float], y: list[float]) -> tuple[float, float]:
    """Kendall tau-b and Spearman rho of two score lists (nan when either is constant)."""
    from scipy import stats as sps

    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return float("nan"), float("nan")
    return float(sps.kendalltau(x, y).statistic), float(sps.spearmanr(x, y).statistic)


def rise_verdict(bleu: list[float], mwe: list[float], diff_ci: tuple[float, float]) -> dict:
    """Whether ``mwe`` rises with ``bleu`` over checkpoints in training order; ``diff_ci`` is the 95%
    interval of mwe[-1] - mwe[0]. See the module docstring for the rule."""
    tau, rho = kendall_spearman(bleu, mwe)
    significant = bool(diff_ci[0] > 0)
    if not math.isnan(tau) and tau >= 1 - 1e-12 and significant:
        verdict = "yes"
    elif not math.isnan(tau) and tau > 0 and significant:
        verdict = "partly"
    else:
        verdict = "no"
    return {"kendall_tau": tau, "spearman_rho": rho, "rise": mwe[-1] - mwe[0], "rise_ci95": list(diff_ci),
            "rise_significant": significant, "verdict": verdict}


def first_last_difference(res: MetricResults, settings: BootstrapSettings) -> tuple[float, tuple[float, float], float]:
    """last - first checkpoint's score, its 95% paired bootstrap percentile interval and the paired
    test's p-value, from the resamples `mwemt.evaluate.bootstrap.paired_bootstrap` draws."""
    obs, ci = difference(res, 0, len(res.scores) - 1, settings)
    p = res.bootstrap[-1].p_value if res.bootstrap else None
    return obs, ci, float(p) if p is not None else float("nan")


def difference(res: MetricResults, i: int, j: int, settings: BootstrapSettings) -> tuple[float, tuple[float, float]]:
    """Checkpoint j's score minus checkpoint i's, with the 95% percentile interval of the same
    difference over the resamples that `mwemt.evaluate.bootstrap.paired_bootstrap` draws."""
    stats = res.stats
    idxs = resample_indices(stats[i].rows.shape[0], settings.samples, settings.seed)
    diffs = resampled_scores(res.metric, stats[j].rows, idxs) - resampled_scores(res.metric, stats[i].rows, idxs)
    return float(res.scores[j].score - res.scores[i].score), percentile_ci(diffs)


def alternatives_mode(items, table: str | None) -> str:
    if table:
        return "table"
    if any(m.alternatives for it in items for m in it.mwes):
        return "testset"
    return "none"


def score_checkpoints(hyps: list[tuple[str, Path]], ref: Path, testset: Path, *, lang: str, lowercase: bool,
                      mwe_average: str, mwe_align: str, mwe_table: str | None, settings: BootstrapSettings,
                      mwe_precision: float | None = None) -> dict[str, MetricResults]:
    """BLEU, chrF and the MWE score (and the alternatives-aware one when there are alternatives) of
    every checkpoint's translations, each tested against the first checkpoint's."""
    inputs = load_score_inputs(hyps, ref=ref, testset=testset, lang=lang)
    base = MetricOptions(lang=lang, lowercase=lowercase, mwe_average=mwe_average, mwe_align=mwe_align,
                         mwe_precision=mwe_precision)
    metrics = {name: build_metric(name, base, inputs) for name in ("bleu", "chrf", "mwe")}
    mode = alternatives_mode(inputs.testset, mwe_table)
    if mode != "none":
        metrics[MWE_ALT] = build_metric(MWE_ALT, replace(base, mwe_table=mwe_table), inputs)   # mode: table, else testset
    return {key: score_metric(metric, inputs, bootstrap=settings) for key, metric in metrics.items()}


def analyse(ckpts: list[Checkpoint], results: dict[str, MetricResults], settings: BootstrapSettings) -> dict:
    """Per-checkpoint scores, first-to-last differences and the MWE verdict(s)."""
    scores = {k: [s.score for s in r.scores] for k, r in results.items()}
    total = ckpts[-1].updates
    rows = []
    for i, c in enumerate(ckpts):
        row = {"checkpoint": c.name, "updates": c.updates, "share": c.updates / total if total else float("nan")}
        for k, r in results.items():
            row[k] = scores[k][i]
            if r.bootstrap:
                row[f"{k}_ci95"] = r.bootstrap[i].ci
        rows.append(row)
    differences, verdicts = {}, {}
    for k, r in results.items():
        obs, ci, p = first_last_difference(r, settings)
        differences[k] = {"difference": obs, "ci95": list(ci), "p_value": p}
    steps = []   # each checkpoint against the one before: does every stretch of training move the scores?
    for i in range(1, len(ckpts)):
        step = {"from": ckpts[i - 1].name, "to": ckpts[i].name, "updates": [ckpts[i - 1].updates, ckpts[i].updates]}
        for k, r in results.items():
            obs, ci = difference(r, i - 1, i, settings)
            step[k] = {"difference": obs, "ci95": list(ci)}
        steps.append(step)
    for k in ("mwe", MWE_ALT):
        if k in results:
            verdicts[k] = rise_verdict(scores["bleu"], scores[k], tuple(differences[k]["ci95"]))
            verdicts[k]["kendall_tau_updates"], _ = kendall_spearman([c.updates for c in ckpts], scores[k])
    return {"rows": rows, "differences": differences, "steps": steps, "verdicts": verdicts,
            "signatures": {k: r.signature for k, r in results.items()}}


LABELS = {"bleu": "BLEU", "chrf": "chrF", "mwe": "MWE score", MWE_ALT: "MWE score (alternatives)"}


def _fmt(x: float, width: int = 1) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{width}f}"


def markdown(analysis: dict, title: str) -> str:
    keys = [k for k in ("bleu", "chrf", "mwe", MWE_ALT) if k in analysis["signatures"]]
    out = [f"### {title}", "",
           "| checkpoint | updates | of training | " + " | ".join(LABELS[k] for k in keys) + " |",
           "|---|---:|---:|" + "---:|" * len(keys)]
    for row in analysis["rows"]:
        cells = [f"{row[k]:.1f} ± {row[f'{k}_ci95']:.1f}" if f"{k}_ci95" in row else f"{row[k]:.1f}" for k in keys]
        out.append(f"| {row['checkpoint']} | {row['updates']} | {row['share']:.0%} | " + " | ".join(cells) + " |")
    first, last = analysis["rows"][0], analysis["rows"][-1]
    cells = []
    for k in keys:
        d = analysis["differences"][k]
        cells.append(f"{d['difference']:+.1f} [{d['ci95'][0]:+.1f}, {d['ci95'][1]:+.1f}]")
    out.append(f"| last − first | {last['updates'] - first['updates']:+d} | | " + " | ".join(cells) + " |")
    if len(analysis["steps"]) > 1:
        for st in analysis["steps"]:
            cells = [f"{st[k]['difference']:+.1f} [{st[k]['ci95'][0]:+.1f}, {st[k]['ci95'][1]:+.1f}]" for k in keys]
            out.append(f"| step {st['updates'][0]} → {st['updates'][1]} | {st['updates'][1] - st['updates'][0]:+d} | | "
                       + " | ".join(cells) + " |")
    out += ["", "± is the 95% bootstrap half-width; last − first and each step: the difference with its 95% "
            "paired bootstrap interval (the same resampled sentences for both checkpoints).", ""]
    for k, v in analysis["verdicts"].items():
        d = analysis["differences"][k]
        out.append(f"- Does the {LABELS[k]} rise with BLEU? **{v['verdict']}**: Kendall τ with BLEU over the "
                   f"checkpoints {_fmt(v['kendall_tau'], 2)}, Spearman ρ {_fmt(v['spearman_rho'], 2)}; "
                   f"first → last {v['rise']:+.1f} [{v['rise_ci95'][0]:+.1f}, {v['rise_ci95'][1]:+.1f}], "
                   f"paired p = {_fmt(d['p_value'], 4)}.")
    out += ["", "Signatures:", ""]
    out += [f"- {LABELS[k]}: `{analysis['signatures'][k]}`" for k in keys]
    return "\n".join(out) + "\n"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, type=Path,
                   help="model directory (`mwemt train`'s WORKDIR/model, or a run's train stage's model/) "
                        "whose checkpoints/ holds interval checkpoints")
    p.add_argument("--testset", required=True, type=Path, help="MWE test set (JSONL)")
    p.add_argument("--ref", type=Path, help="plain reference, one line per item (default: the test set's)")
    p.add_argument("--out", required=True, type=Path, help="output directory (hyps/ cache, results.md, report.json)")
    p.add_argument("--checkpoints", help="comma-separated checkpoint file names (default: every interval "
                                         "checkpoint, and checkpoint_last.pt when later)")
    p.add_argument("--hyp", action="append", default=[], metavar="NAME:UPDATES=PATH",
                   help="score these translations instead of translating (repeatable, in training order); "
                        "--model is then not read")
    p.add_argument("--mwe-table", help="MWE translation table (`mwemt testset table`): adds the MWE score with "
                                       "--mwe-alternatives table")
    p.add_argument("--mwe-align", default="eflomal", choices=("eflomal", "none"),
                   help="MWE score: align hypotheses to the sources (default) or search the whole hypothesis")
    p.add_argument("--mwe-precision", type=float_range(0, 1), default=None, metavar="P",
                   help="MWE score: weight of precision, both MWE columns (default: the MWE score's)")
    p.add_argument("--lang", default="it", help="target language (default: it)")
    p.add_argument("--lowercase", action="store_true", help="BLEU/chrF case-insensitively")
    p.add_argument("--mwe-average", default="sentence", choices=("sentence", "mwe"))
    p.add_argument("--beam", type=positive_int(), default=5, help="beam size (default: 5, as the run)")
    p.add_argument("--batch-size", type=positive_int(), default=64, help="sentences per batch (default: 64)")
    p.add_argument("--threads", type=workers(), default=1, help="torch CPU threads (default: 1)")
    p.add_argument("--bootstrap", type=positive_int(), default=1000, help="bootstrap resamples (default: 1000)")
    p.add_argument("--seed", type=seed(), default=12345, help="bootstrap seed (default: 12345)")
    p.add_argument("--title", default=None, help="heading of the table (default: the test set's file name)")
    return p


def parse_hyp(spec: str) -> tuple[Checkpoint, Path]:
    m = re.match(r"^([^:=]+):(\d+)=(.+)$", spec)
    if not m:
        raise MwemtError(f"--hyp {spec!r}: expected NAME:UPDATES=PATH, e.g. checkpoint_1_475:475=hyps/a.txt")
    return Checkpoint(m.group(1), int(m.group(2))), Path(m.group(3))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except MwemtError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    from mwemt.formats import read_testset

    settings = BootstrapSettings(args.bootstrap, args.seed)
    items = read_testset(args.testset)
    if args.hyp:
        pairs = [parse_hyp(s) for s in args.hyp]
        if [c.updates for c, _ in pairs] != sorted(c.updates for c, _ in pairs):
            raise MwemtError("--hyp: give the translations in training order (increasing UPDATES)")
        ckpts, paths = [c for c, _ in pairs], [p for _, p in pairs]
    else:
        ckpts = find_checkpoints(args.model, args.checkpoints.split(",") if args.checkpoints else None)
        sources = [it.meta.get("raw_source") or it.source for it in items]
        source_sha = sha256_file(args.testset)
        print(f"{len(ckpts)} checkpoints: " + ", ".join(f"{c.name} ({c.updates})" for c in ckpts), file=sys.stderr)
        paths = [translate_cached(args.model, c, sources, source_sha, args.out, beam=args.beam,
                                  batch_size=args.batch_size, threads=args.threads) for c in ckpts]
    if len(ckpts) < 2:
        raise MwemtError("the comparison needs two or more checkpoints")
    if len({Path(c.name).stem for c in ckpts}) < len(ckpts):
        raise MwemtError("two checkpoints share a name")
    hyps = [(Path(c.name).stem, p) for c, p in zip(ckpts, paths)]
    results = score_checkpoints(hyps, args.ref, args.testset, lang=args.lang, lowercase=args.lowercase,
                                mwe_average=args.mwe_average, mwe_align=args.mwe_align, mwe_table=args.mwe_table,
                                settings=settings, mwe_precision=args.mwe_precision)
    analysis = analyse(ckpts, results, settings)
    table = markdown(analysis, args.title or args.testset.name)
    write_text(args.out / "results.md", table)
    inputs = {"testset": args.testset, **({"ref": args.ref} if args.ref else {}),
              **({"mwe_table": args.mwe_table} if args.mwe_table else {})}
    inputs.update({f"hyp:{name}": path for name, path in hyps})
    write_json(args.out / "report.json", {
        **analysis, "n_items": len(items), "bootstrap": {"resamples": settings.samples, "seed": settings.seed},
        "model": portable_path(args.model) if not args.hyp else None,
        "checkpoints": {c.name: c.updates for c in ckpts},
        "provenance": manifest("mwe-sensitivity", inputs=inputs, seed=settings.seed,
                               config={k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
                                       if k not in ("model", "testset", "ref", "out", "hyp", "mwe_table")})})
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
