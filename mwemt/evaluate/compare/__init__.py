"""`mwemt compare`: where each system gets MWEs right or wrong, against a baseline, as a report.

compare-mt (Neubig et al. 2019) and MT-Telescope show aggregate scores with bootstrap tests, word
accuracy by frequency and examples where systems differ; neither knows what an MWE is. This
package adds what an MWE method needs to be judged by: MWE hit rates bucketed by training
frequency, contiguity, category, compositionality and dictionary coverage, each with intervals and
paired tests; a per-MWE table; examples with the MWE marked in every text.

Layout: `inputs` (read and check), `analysis` (compute the report dictionary from statistics
extracted once), `html`, `markdown` and `svg` (render it), and `write_report` here (all three
files, into a directory that appears whole or not at all).
"""

from __future__ import annotations

from pathlib import Path

from mwemt.evaluate.compare.analysis import CompareSettings, compare_systems, default_metrics, hit_definition
from mwemt.evaluate.compare.inputs import CompareInputs, load_compare_inputs

__all__ = ["CompareInputs", "CompareSettings", "compare_systems", "default_metrics", "hit_definition",
           "load_compare_inputs", "publish_report", "write_report", "REPORT_FILES"]

REPORT_FILES = ("index.html", "report.md", "report.json")


def write_report(directory: str | Path, report: dict) -> dict[str, Path]:
    """Write index.html, report.md and report.json into ``directory``, atomically: the files are
    rendered into a temporary directory beside it that replaces ``directory`` only when all three
    are written (a failed render leaves any previous report as it was)."""
    from mwemt.evaluate.compare.html import render_html
    from mwemt.evaluate.compare.markdown import render_markdown
    from mwemt.provenance import write_json

    html, markdown = render_html(report), render_markdown(report)

    def fill(tmp: Path) -> None:
        (tmp / "index.html").write_text(html, encoding="utf-8")
        (tmp / "report.md").write_text(markdown, encoding="utf-8")
        write_json(tmp / "report.json", report)

    return _replace_directory(Path(directory), fill)


def publish_report(written: str | Path, directory: str | Path) -> dict[str, Path]:
    """Copy a report that `write_report` wrote (in ``written``) to ``directory``, which it replaces
    as a whole, atomically (`mwemt run` keeps reports in its stage cache and publishes them)."""
    import shutil

    written = Path(written)
    missing = [name for name in REPORT_FILES if not (written / name).is_file()]
    if missing:
        from mwemt.errors import MwemtError

        raise MwemtError(f"{written}: not a complete report ({', '.join(missing)} missing)")
    return _replace_directory(Path(directory),
                              lambda tmp: [shutil.copyfile(written / name, tmp / name) for name in REPORT_FILES])


def _replace_directory(directory: Path, fill) -> dict[str, Path]:
    from mwemt.fileio import atomic_directory

    _check_replaceable(directory)
    with atomic_directory(directory) as tmp:   # with the usual permissions: a report is meant to be shared
        fill(tmp)
    return {name: directory / name for name in REPORT_FILES}


def _check_replaceable(directory: Path) -> None:
    """Replacing ``directory`` must not destroy anything but an earlier report."""
    from mwemt.errors import MwemtError

    if directory.exists() and not directory.is_dir():
        raise MwemtError(f"{directory}: is a file (expected a report directory)")
    if directory.is_dir():
        from mwemt.fileio import refuse_replacing_input

        for name in REPORT_FILES:   # a report file that this process read as an input (a --hyp, a reference)
            refuse_replacing_input(directory / name)
        other = sorted(p.name for p in directory.iterdir() if p.name not in REPORT_FILES)
        if other:
            raise MwemtError(f"{directory}: the directory holds other files ({', '.join(other[:3])}); a report "
                             "replaces its whole directory, so choose a new or report-only directory")
