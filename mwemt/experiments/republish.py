"""Write a published directory's results.json / .md / .csv / .png again, without training, decoding or scoring
MWEs: results.md gains what a newer mwemt reports (BLEU's brevity penalty and precisions, degenerate outputs,
the tests the baseline cannot translate, the seed section's rules) from the published files alone.

What it reads (a directory `mwemt run --publish` wrote, `mwemt.experiments.publish`):

- results.json: every score, p-value and signature, kept as they are;
- hyps/SYSTEM.TEST.txt.gz and refs/TEST.txt.gz: BLEU's parts are recomputed with sacrebleu under the settings of
  the column's signature (case, tokenizer), and each recomputed BLEU must equal the published score (else
  nothing is written): the parts are those of the published score, not of another one;
- the source text of each test, for the degenerate-output counts: ``sources`` (given; published here as
  refs/TEST.src.txt.gz), else refs/TEST.src.txt.gz, else the sources of the MWE test set refs/TEST.jsonl.gz;
  without any, only loops are counted for that test.

It rewrites results.json (the scores' ``extra`` gains BLEU's parts; ``degenerate``, ``bleu_differences`` and
``untranslatable`` are added), results.md, results.csv and results.png, and updates the hashes of those files
(and of a newly published source) in publish.json. rescore.sh is unchanged: it recomputes the same scores.

    python scripts/rewrite_results.py results/cpu-science-3-60000 \
        --source tatoeba=runs/cpu-science-3-60000/stages/testdata/tatoeba/HASH/source.txt
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.evaluate.degenerate import count_test
from mwemt.evaluate.sacrebleu_metrics import Bleu
from mwemt.evaluate.signature import Signature
from mwemt.experiments.publish import RESULT_FILES, hypothesis_copy, reference_copy, source_copy, testset_copy
from mwemt.experiments.results import add_analysis, write_results
from mwemt.fileio import read_lines, sha256_file
from mwemt.provenance import write_json

SCORE_TOLERANCE = 1e-6   # a recomputed BLEU must equal the published one (both from exact integer sums)


def _bleu_of(signature: str) -> Bleu:
    """The BLEU metric of a published BLEU signature (its case and tokenizer)."""
    sig = Signature.parse(signature)
    return Bleu(lowercase=sig.get("case") == "lc", tokenize=sig.get("tok") or None)


def add_bleu_parts(directory: Path, results: dict) -> int:
    """Recompute every BLEU column's parts from the published hypotheses and references into the score rows'
    ``extra``; returns how many rows were filled. An MwemtError when a recomputed score differs."""
    filled = 0
    for column in results["columns"]:
        if column["metric"] != "bleu":
            continue
        test = column["test"]
        refs = read_lines(directory / reference_copy(test))
        metric = _bleu_of(column["signature"])
        for system in results["systems"]:
            row = results["scores"][system][column["id"]]
            if row.get("score") is None:
                continue
            path = directory / hypothesis_copy(system, test)
            hyps = read_lines(path)
            if len(hyps) != len(refs):
                raise InputError(f"{len(hyps)} lines for {len(refs)} reference lines of {directory / reference_copy(test)}",
                                 path, expected="one hypothesis per reference line")
            score = metric.corpus_score(hyps, refs)
            if abs(score.score - row["score"]) > SCORE_TOLERANCE:
                raise MwemtError(f"{path}: BLEU recomputed from the published files is {score.score:.6f}, "
                                 f"results.json has {row['score']:.6f} for {system} on {test}; nothing written")
            row["extra"] = {**(row.get("extra") or {}), **score.extra}
            filled += 1
    return filled


def _source_lines(directory: Path, test: str, given: str | Path | None) -> list[str] | None:
    if given is not None:
        return read_lines(given)
    if (directory / source_copy(test)).is_file():
        return read_lines(directory / source_copy(test))
    if (directory / testset_copy(test)).is_file():
        from mwemt.formats import read_testset

        return [item.source for item in read_testset(directory / testset_copy(test))]
    return None


def _publish_source(src: Path, dst: Path) -> None:
    """``src`` as gzip at ``dst``, the same bytes every time (as publish writes its copies)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(f".{dst.name}.tmp")
    with open(src, "rb") as fin, open(tmp, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as fout:
            fout.write(fin.read())
    os.replace(tmp, dst)


RESULTS_EXPECTED = ('results.json as `mwemt run --publish` writes it: {"systems": [NAME, ...], "columns": [{"id", "test", '
                    '"metric", "signature"}, ...], "scores": {SYSTEM: {COLUMN: {...}}}, ...}')


def read_results(record: Path) -> dict:
    """A publication's results.json, its shape checked (an `InputError` naming the file otherwise)."""
    if not record.is_file():
        raise InputError("not found", record, expected="a directory `mwemt run --publish` wrote (with results.json)")
    try:
        results = json.loads(record.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(f"not JSON ({exc})", record) from None
    ok = (isinstance(results, dict) and isinstance(results.get("systems"), list)
          and isinstance(results.get("columns"), list) and isinstance(results.get("scores"), dict)
          and all(isinstance(c, dict) and {"id", "test", "metric", "signature"} <= set(c) for c in results["columns"]))
    if not ok:
        raise InputError("not a results record", record, expected=RESULTS_EXPECTED)
    missing = [(s, c["id"]) for s in results["systems"] for c in results["columns"]
               if not isinstance(results["scores"].get(s), dict) or c["id"] not in results["scores"][s]]
    if missing:
        raise InputError(f"no score of {missing[0][0]} in column {missing[0][1]} ({len(missing)} missing)", record,
                         expected=RESULTS_EXPECTED)
    return results


def read_manifest(path: Path) -> dict:
    """publish.json, checked to be an object whose ``files`` (if any) is an object."""
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(f"not JSON ({exc})", path) from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files", {}), dict):
        raise InputError("not a publication manifest", path, expected='{"files": {PATH: SHA256, ...}, "rescore": ...}')
    return manifest


def check_sources(out: Path, tests: list[str], sources: dict[str, Path]) -> None:
    """Before anything is written: every --source names a test of results.json, and has one line per reference
    line of that test."""
    unknown = sorted(set(sources) - set(tests))
    if unknown:
        raise MwemtError(f"--source for {', '.join(unknown)}: results.json has the tests {', '.join(tests)}")
    for test, path in sources.items():
        refs_path = out / reference_copy(test)
        n_src, n_ref = len(read_lines(path)), len(read_lines(refs_path))
        if n_src != n_ref:
            raise InputError(f"{n_src} source lines for {n_ref} reference lines of {refs_path}", path,
                             expected="the source text of this test, one line per reference line")


def rewrite_published(directory: str | Path, *, sources: dict[str, str | Path] | None = None,
                      plot: bool = True) -> dict[str, Path]:
    """Rewrite the results files of the published ``directory`` (see the module's docstring); ``sources``: test
    -> its source text (one line per reference line), published as refs/TEST.src.txt.gz. Returns the paths
    written."""
    out = Path(directory)
    results = read_results(out / "results.json")
    manifest_path = out / "publish.json"
    manifest = read_manifest(manifest_path) if manifest_path.is_file() else None   # checked before any write
    sources = {k: Path(v) for k, v in (sources or {}).items()}
    tests = list(dict.fromkeys(c["test"] for c in results["columns"]))
    check_sources(out, tests, sources)
    add_bleu_parts(out, results)
    degenerate = {}
    for test in tests:
        refs_path = out / reference_copy(test)
        refs, src = read_lines(refs_path), _source_lines(out, test, sources.get(test))
        if src is not None and len(src) != len(refs):
            where = sources.get(test, out / source_copy(test))
            raise InputError(f"{len(src)} source lines for {len(refs)} reference lines of {refs_path}", where,
                             expected="the source text of this test, one line per reference line")
        hyps = {}
        for system in results["systems"]:
            path = out / hypothesis_copy(system, test)
            hyps[system] = read_lines(path)
            if len(hyps[system]) != len(refs):
                raise InputError(f"{len(hyps[system])} lines for {len(refs)} reference lines of {refs_path}", path,
                                 expected="one hypothesis per reference line")
        degenerate[test] = count_test(src, refs, hyps)
    results["degenerate"] = degenerate
    add_analysis(results)
    written_sources = []
    for test, path in sources.items():
        _publish_source(path, out / source_copy(test))
        written_sources.append(source_copy(test))
    paths = write_results(out, results, plot=plot)
    if manifest is not None:
        files = manifest.setdefault("files", {})
        for rel in [*RESULT_FILES, *written_sources]:
            if (out / rel).is_file() and (rel in files or rel in written_sources):
                files[rel] = sha256_file(out / rel)
        write_json(manifest_path, manifest)
    return paths


# ---------------------------------------------------------------- scoring a publication again, with today's scorer


def _without_alignments(argv: list[str]) -> list[str]:
    """``argv`` without its ``--align FILE`` pairs: the published (eflomal) links are replaced by today's aligner."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--align":
            skip = True
        else:
            out.append(a)
    return out


def _updated_command(argv: list[str], add_metrics: tuple[str, ...], breakdown: str | None) -> list[str]:
    """A published `mwemt score` command as today's scorer runs it: no given alignments; ``add_metrics`` after
    the MWE metrics of a test that has them; ``--mwe-breakdown`` for the test's main command."""
    from mwemt.evaluate.registry import metric_class

    argv = _without_alignments(argv)
    k = argv.index("--metrics") + 1
    metrics = argv[k].split(",")
    if any(metric_class(m).uses_alignments for m in metrics):
        metrics += [m for m in add_metrics if m not in metrics]
    argv[k] = ",".join(metrics)
    if breakdown and "mwe" in metrics and "--mwe-breakdown" not in argv:
        at = argv.index("--json")
        argv[at:at] = ["--mwe-breakdown", breakdown]
    return argv


def _run_score(out: Path, argv: list[str], output: Path) -> dict:
    """One `mwemt score` command of a publication, run inside it, its JSON read back (without provenance)."""
    import subprocess
    import sys

    k = argv.index("-o") + 1
    cmd = [sys.executable, "-m", "mwemt", *argv[1:k], str(output), *argv[k + 1:]]
    done = subprocess.run(cmd, cwd=out, capture_output=True, text=True)
    if done.returncode != 0:
        raise MwemtError(f"rescoring {out} failed ({' '.join(argv[:3])} ... exit {done.returncode}):\n"
                         f"{done.stderr.strip()[-2000:]}")
    obj = json.loads(output.read_text(encoding="utf-8"))
    obj.pop("provenance", None)
    return obj


def rescore_published(directory: str | Path, *, add_metrics: tuple[str, ...] = ("mwe-verdict",),
                      sources: dict[str, str | Path] | None = None, plot: bool = True,
                      progress=None) -> dict[str, Path]:
    """Score the published ``directory`` again with today's scorer, without training or decoding: each test's
    command of publish.json (``rescore``, ``rescore_same_seed``) runs without the published alignments (today's
    aligner is line-stable and deterministic, so rescore.sh recomputes the same links from an empty cache),
    with ``add_metrics`` beside the MWE metrics of the tests that have them; results.json is built again from
    those scores (the run's seed groups, constraint counts and comparison reports kept), then rewritten with
    BLEU's parts and the degenerate-output counts (`rewrite_published`). publish.json and rescore.sh get the
    new commands; the published alignment files are removed from the publication (and the manifest).
    Returns the paths written."""
    import shutil
    import tempfile

    from mwemt.experiments.publish import write_rescore_script
    from mwemt.experiments.results import SetScores, build_results

    out = Path(directory)
    manifest_path, record = out / "publish.json", out / "results.json"
    for path in (manifest_path, record):
        if not path.is_file():
            raise InputError("not found", path, expected="a directory `mwemt run --publish` wrote")
    manifest, old = read_manifest(manifest_path), read_results(record)
    if not isinstance(manifest.get("rescore"), dict):
        raise InputError("no rescore commands", manifest_path, expected='{"rescore": {TEST: [ARGV...]}, ...}')
    argvs = [(t, a) for t, a in manifest["rescore"].items()]
    argvs += [(f"{t} (against {b})", a) for t, per in (manifest.get("rescore_same_seed") or {}).items()
              for b, a in (per.items() if isinstance(per, dict) else [("?", None)])]
    for test, argv in argvs:
        if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv) and argv[:2] == ["mwemt", "score"]
                and {"--metrics", "-o", "--json"} <= set(argv) and argv.index("--metrics") + 1 < len(argv)
                and argv.index("-o") + 1 < len(argv)):
            raise InputError(f"the rescore command of {test} is not a `mwemt score ... --metrics M --json -o FILE` "
                             "argument list", manifest_path, expected='{"rescore": {TEST: ["mwemt", "score", ...]}}')
    # --source is checked before anything is scored or written: rescoring rewrites results.json and removes the
    # published alignments, so a late refusal would leave the publication half rewritten
    check_sources(out, list(dict.fromkeys(c["test"] for c in old["columns"])),
                  {k: Path(v) for k, v in (sources or {}).items()})
    roles = {}
    for c in old["columns"]:
        if c["metric"] == "bleu" or c["test"] not in roles:
            roles[c["test"]] = c["role"] if c["metric"] in ("bleu", "chrf") else roles.get(c["test"], "general")
    commands, same_seed = {}, {}
    for test, argv in manifest["rescore"].items():
        table = f"refs/{test}.mwe-compositionality.tsv"
        commands[test] = _updated_command(list(argv), add_metrics, table if (out / table).is_file() else None)
    for test, per in (manifest.get("rescore_same_seed") or {}).items():
        same_seed[test] = {b: _updated_command(list(argv), add_metrics, None) for b, argv in per.items()}
    tests = []
    with tempfile.TemporaryDirectory(prefix="mwemt-rescore-") as tmp:
        for test, argv in commands.items():
            if progress:
                progress(f"{out.name}: scoring {test}")
            run = _run_score(out, argv, Path(tmp) / f"{test}.json")
            for baseline, seed_argv in same_seed.get(test, {}).items():
                if progress:
                    progress(f"{out.name}: scoring {test} against {baseline}")
                other = _run_score(out, seed_argv, Path(tmp) / f"{test}.vs-{baseline}.json")
                for key, m in other["metrics"].items():
                    for system, row in m["systems"].items():
                        if system != baseline:
                            run["metrics"][key]["systems"][system].update(
                                {"seed_baseline": baseline, "seed_p_value": row.get("p_value")})
            tests.append(SetScores(test, roles.get(test, "general"), run))
    meta = dict(old.get("meta") or {})
    meta["rescored"] = ("scored again from the published hypotheses with mwemt's line-stable aligner and "
                        f"{', '.join(add_metrics) or 'no new metric'} (mwemt.experiments.republish.rescore_published); "
                        "no training, no decoding")
    results = build_results(tests, name=old["name"], baseline=old["baseline"], meta=meta,
                            reports=old.get("reports"), seed_groups=old.get("seed_groups"),
                            seed_baselines=old.get("seed_baselines"), constraints=old.get("constraints"))
    write_json(record, results)
    # the publication's alignments were eflomal's links of the old scores: gone with them
    files = manifest.setdefault("files", {})
    for rel in sorted(r for r in files if r.startswith("alignments/")):
        (out / rel).unlink(missing_ok=True)
        del files[rel]
    if (out / "alignments").is_dir() and not any((out / "alignments").iterdir()):
        shutil.rmtree(out / "alignments")
    manifest["rescore"] = commands
    if same_seed:
        manifest["rescore_same_seed"] = same_seed
    write_rescore_script(out, commands, same_seed)
    files["rescore.sh"] = sha256_file(out / "rescore.sh") if "rescore.sh" in files else files.get("rescore.sh")
    files = {k: v for k, v in files.items() if v is not None}
    manifest["files"] = files
    write_json(manifest_path, manifest)
    return rewrite_published(out, sources=sources, plot=plot)
