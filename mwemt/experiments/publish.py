"""Publish a finished grid: its results and the files that reproduce every score, for a folder in git.

Why: a results table in a README is only as good as the way to check it. `mwemt run --publish DIR`
copies out of the run directory (whose stage directories are keyed by hashes and too big to commit)
exactly what a reader needs to recompute the table without training anything:

    DIR/results.md results.json results.csv results.png    as `mwemt run` wrote them
    DIR/hyps/SYSTEM.TEST.txt.gz                            every system's detokenized translations (gzip)
    DIR/refs/TEST.txt.gz                                   the references the run scored against (gzip)
    DIR/refs/TEST.src.txt.gz                               the source text the run translated (gzip), which
                                                           results.md's degenerate-output counts read
    DIR/refs/TEST.jsonl.gz                                 the MWE test set (MWE tests only; gzip)
    DIR/refs/TEST.README.md                                a built MWE test's report
    DIR/refs/TEST.mwe-compositionality.tsv                 the MWE compositionality of its tertile breakdown
    DIR/alignments/SYSTEM.TEST.align.gz                    the word alignments the MWE scores were computed from
    DIR/report/TEST/                                       comparison reports, when the run wrote them
    DIR/rescore.sh                                         one `mwemt score` per test set (and per same-seed
                                                           baseline of a grid with seed groups)
    DIR/publish.json                                       those commands as argument lists, the file hashes

Each command is derived from the test's score stage section (metrics, language, case, bootstrap
resamples and seed, MWE averaging), so `sh rescore.sh` inside DIR recomputes results.json's numbers
from the published files alone (tests/test_experiments_publish.py checks that it does). The MWE
scores read the published alignments (``--align``), so rescoring needs no aligner; the files name
their aligner, so the signatures are the run's (tests/test_publish_alignments.py rescores with an
empty alignment cache). The default aligner is line-stable and deterministic
(`mwemt.testsets.lexalign`: one model per test, learned from the published sources and references),
so `mwemt score` without ``--align`` gives the same links again; a run scored with eflomal (not
seeded) can be rescored only from its published links.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.evaluate.registry import metric_class
from mwemt.experiments.results import recorded_path
from mwemt.fileio import read_lines, refuse_unwritable, sha256_file, write_lines, write_text
from mwemt.formats import read_testset
from mwemt.provenance import write_json
from mwemt.testsets.mwe_table import mwe_key, type_key

RESULT_FILES = ("results.md", "results.json", "results.csv", "results.png")


@dataclass(frozen=True)
class PublishedTest:
    """One scored test set: its score stage section (`mwemt.experiments.stages.ScoreSection`) and inputs
    (``hyp.SYSTEM``, ``reference``, optionally ``testset``, ``compositionality``, ``target_lexicon``),
    the directory of its test-data stage (where a built test keeps its README.md), and the directory of
    the alignments its MWE scores were computed from (``alignments/SYSTEM.align.gz`` of the score stage;
    None when it scored no MWE metric, or was cached by an mwemt that kept none)."""

    section: object
    inputs: dict[str, Path]
    testdata_dir: Path | None = None
    alignments: Path | None = None


def table_copy(path: Path) -> str:
    """Where the run's MWE translation table (term use, mwe-alts in table mode) is published: under its own
    file name, which the scores' signatures name."""
    return f"refs/{Path(path).name}"


def hypothesis_copy(system: str, test: str) -> str:
    """Where ``system``'s translation of ``test`` is published (gzip: a grid's hypotheses are megabytes)."""
    return f"hyps/{system}.{test}.txt.gz"


def reference_copy(test: str) -> str:
    return f"refs/{test}.txt.gz"


def source_copy(test: str) -> str:
    """Where the source text of ``test`` is published (the degenerate-output counts of results.md read it)."""
    return f"refs/{test}.src.txt.gz"


def testset_copy(test: str) -> str:
    return f"refs/{test}.jsonl.gz"


def alignment_copy(system: str, test: str) -> str:
    """Where the alignments of ``system``'s translation of ``test`` are published."""
    return f"alignments/{system}.{test}.align.gz"


def score_command(test: str, section, inputs: dict[str, Path], out_dir: Path, *, aligned: bool = False,
                  systems: tuple[str, ...] | None = None, output: str | None = None) -> list[str]:
    """The `mwemt score` arguments that score ``test`` as the run's score stage did, on published files;
    ``aligned``: each system's MWE scores read its published alignments. ``systems`` (default: the
    section's, the baseline first) and ``output`` (default: rescored/TEST.json) for a same-seed test."""
    argv = ["mwemt", "score", "--metrics", ",".join(section.metrics), "--lang", section.lang,
            "--mwe-average", section.mwe_average, "--paired-bs", "--bs-samples", str(section.bootstrap),
            "--seed", str(section.bootstrap_seed), "--ref", reference_copy(test)]
    if section.lowercase:
        argv.append("--lowercase")
    if "testset" in inputs:
        argv += ["--testset", testset_copy(test)]
    if "compositionality" in inputs:
        argv += ["--compositionality", f"refs/{test}.compositionality.tsv"]
    if "mwe_compositionality" in inputs and "mwe" in section.metrics and "testset" in inputs and output is None:
        argv += ["--mwe-breakdown", f"refs/{test}.mwe-compositionality.tsv"]   # the breakdown of results.json
    if "target_lexicon" in inputs:   # shared data, not copied: its path as seen from DIR
        argv += ["--tesla-lexicon", os.path.relpath(Path(inputs["target_lexicon"]).resolve(), out_dir.resolve())]
    if "terms" in inputs:            # term use: the run's MWE translation table
        argv += ["--terms", table_copy(inputs["terms"])]
    if "mwe_table" in inputs:        # mwe-alts with score.mwe_alternatives: table
        argv += ["--mwe-table", table_copy(inputs["mwe_table"])]
    if "dictionary" in inputs:       # LiTER's dictionary: shared data, not copied
        argv += ["--dictionary", os.path.relpath(Path(inputs["dictionary"]).resolve(), out_dir.resolve()),
                 "--dictionary-format", getattr(section, "dictionary_format", "auto")]
    for system in systems or section.systems:
        argv += ["--hyp", f"{system}={hypothesis_copy(system, test)}"]
        if aligned:
            argv += ["--align", alignment_copy(system, test)]
    return argv + ["--json", "-o", output or f"rescored/{test}.json"]


def same_seed_commands(test: str, t: PublishedTest, out_dir: Path, aligned: bool) -> dict[str, list[str]]:
    """Same-seed baseline -> the `mwemt score` that tests its systems against it (the ``seed_p_value`` of
    results.json: `mwemt.experiments.stages` tests them by the same paired bootstrap)."""
    by_baseline: dict[str, list[str]] = {}
    for system, baseline in getattr(t.section, "seed_baselines", ()):
        by_baseline.setdefault(baseline, []).append(system)
    return {b: score_command(test, t.section, t.inputs, out_dir, aligned=aligned, systems=(b, *members),
                             output=f"rescored/{test}.vs-{b}.json") for b, members in by_baseline.items()}


def publish_run(run_dir: str | Path, out_dir: str | Path, tests: dict[str, PublishedTest],
                reports: Mapping[str, str] | None = None) -> dict:
    """Copy the results and every test's hypotheses and references of a finished run into ``out_dir``;
    returns the publish manifest (also written as DIR/publish.json). ``reports``: the comparison reports this
    invocation wrote (test -> its page relative to the run, as results.json's ``reports``): only their
    directories are published, not what an earlier invocation left in RUN/report."""
    run_dir, out = Path(run_dir), Path(out_dir)
    earlier = published_files(out)   # what an earlier publish wrote here; anything else in DIR is left alone
    files: dict[str, str] = {}

    def copy(src: Path, rel: str) -> None:
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(f".{dst.name}.tmp")
        if rel.endswith(".gz") and not str(src).endswith(".gz"):   # text published compressed (`mwemt score`
            with open(src, "rb") as fin, open(tmp, "wb") as raw:     # reads .gz): the same bytes every time
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as fout:
                    shutil.copyfileobj(fin, fout)
        else:
            shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
        files[rel] = sha256_file(dst)

    for name in RESULT_FILES:
        if (run_dir / name).is_file():
            copy(run_dir / name, name)
    commands, same_seed = {}, {}
    tables: dict[str, Path] = {}
    for test, t in tests.items():
        aligned = t.alignments is not None
        for system in t.section.systems:
            copy(t.inputs[f"hyp.{system}"], hypothesis_copy(system, test))
            if aligned:
                copy(Path(t.alignments) / f"{system}.align.gz", alignment_copy(system, test))
        if not aligned and any(metric_class(m).uses_alignments for m in t.section.metrics):
            logging.getLogger(__name__).warning(
                "publish: the score stage of test %s kept no alignments (cached by an earlier mwemt, which aligned "
                "with eflomal): its rescore command aligns again, with the line-stable aligner, so its MWE scores "
                "may differ; rerun the score stage (remove its directory under RUN/stages) to publish them", test)
        copy(t.inputs["reference"], reference_copy(test))
        if "testset" in t.inputs:
            copy(t.inputs["testset"], testset_copy(test))
        if "compositionality" in t.inputs:
            copy(t.inputs["compositionality"], f"refs/{test}.compositionality.tsv")
        if "mwe_compositionality" in t.inputs:   # the source MWEs' compositionality of the tertile breakdown
            copy(t.inputs["mwe_compositionality"], f"refs/{test}.mwe-compositionality.tsv")
        for key in ("terms", "mwe_table"):       # the run's one MWE translation table
            if key in t.inputs:
                tables.setdefault(table_copy(t.inputs[key]), t.inputs[key])
        if t.testdata_dir is not None and (t.testdata_dir / "source.txt").is_file():
            copy(t.testdata_dir / "source.txt", source_copy(test))
        if t.testdata_dir is not None and (t.testdata_dir / "README.md").is_file():
            copy(t.testdata_dir / "README.md", f"refs/{test}.README.md")
        commands[test] = score_command(test, t.section, t.inputs, out, aligned=aligned)
        if getattr(t.section, "seed_baselines", ()):
            same_seed[test] = same_seed_commands(test, t, out, aligned)
    # term use reads the table only for the types of the published tests' MWEs, so it is published with those
    # alone (the run's whole table is tens of MB); table alternatives (mwe-alts, `alts:table`) sign the whole
    # table's size, so with them it is copied whole
    whole = any("mwe_table" in t.inputs for t in tests.values())
    needed = {mwe_key(m) for t in tests.values() if "testset" in t.inputs
              for item in read_testset(t.inputs["testset"]) for m in item.mwes}
    for rel, src in tables.items():
        if whole:
            copy(src, rel)
            continue
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        lines = iter(read_lines(src))
        kept = [next(lines)] + [line for line in lines if type_key(json.loads(line)["key"]) in needed]
        write_lines(dst, kept)
        files[rel] = sha256_file(dst)
    for page in (reports or {}).values():
        folder = (run_dir / page).parent
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            copy(path, path.relative_to(run_dir).as_posix())
    write_rescore_script(out, commands, same_seed)
    manifest = {"run_directory": recorded_path(run_dir), "rescore": commands, "files": files}
    if same_seed:
        manifest["rescore_same_seed"] = same_seed
    write_json(out / "publish.json", manifest)
    for rel in sorted(earlier - set(files)):   # a republished run replaces what an earlier one left
        (out / rel).unlink(missing_ok=True)
        _remove_empty_parents(out / rel, out)
    return manifest


def write_rescore_script(out: Path, commands: Mapping[str, list[str]],
                         same_seed: Mapping[str, Mapping[str, list[str]]] | None = None) -> None:
    """DIR/rescore.sh: every test's `mwemt score` command, then the same-seed ones (publish.json's ``rescore`` and
    ``rescore_same_seed``)."""
    script = ["#!/bin/sh", "# Recompute results.json's scores from the published files (run inside this directory);",
              "# each test's scores land in rescored/TEST.json. Written by `mwemt run --publish`.", "set -e",
              "mkdir -p rescored"]
    script += [shlex.join(argv) for argv in commands.values()]
    if same_seed:
        script.append("# each system against the baseline trained with its seed (results.json: seed_p_value)")
        script += [shlex.join(argv) for per_test in same_seed.values() for argv in per_test.values()]
    write_text(out / "rescore.sh", "\n".join(script) + "\n")


def check_publish_target(out_dir: str | Path, run_dir: str | Path) -> None:
    """Refuse a `--publish DIR` that could not take the published files, before the run starts (a grid takes
    hours; publishing is its last step): DIR or a folder above it is a file, the folder DIR would be made in is
    not writable, DIR is the run directory or inside it (publishing copies out of the run: inside it, it would
    write into the run's own state, RUN/stages the stage cache), or DIR holds a damaged publish record."""
    out, run = Path(out_dir), Path(run_dir)
    where = f"--publish {out_dir}"
    resolved = out.resolve()
    run_resolved = run.resolve()
    if resolved == run_resolved or run_resolved in resolved.parents:
        raise MwemtError(f"{where}: that is inside the run directory {run_dir}, whose stages and results the run "
                         "itself writes; publish to a directory outside it, e.g. results/NAME")
    existing = next(p for p in (out, *out.absolute().parents) if p.exists() or p.is_symlink())
    if not existing.is_dir():
        what = "is a file" if existing == out else f"cannot be made: {existing} is a file"
        raise MwemtError(f"{where}: {what}, not a directory (publishing writes a directory: a new one, or one an "
                         "earlier publish wrote)")
    refuse_unwritable(out, "--publish")   # the one wording of an output that may not be written
    published_files(out)   # a damaged publish record is refused here too


def published_files(out: Path) -> set[str]:
    """The files (relative to ``out``) an earlier publish recorded in DIR/publish.json; only paths inside DIR."""
    record = out / "publish.json"
    if not record.is_file():
        return set()
    try:
        names = json.loads(record.read_text(encoding="utf-8")).get("files", {})
    except (OSError, ValueError, AttributeError) as exc:
        raise InputError(f"{record}: not a publish record ({exc}); move it away to publish here") from None
    inside = set()
    for rel in names:
        p = Path(rel)
        if not p.is_absolute() and ".." not in p.parts:
            inside.add(p.as_posix())
    return inside


def _remove_empty_parents(path: Path, top: Path) -> None:
    parent = path.parent
    while parent != top and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent
