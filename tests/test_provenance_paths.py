"""Nothing a run records or the repository publishes names the machine that made it (issue 32, "Also")."""

from __future__ import annotations

import re
from pathlib import Path

from mwemt.provenance import command_line, file_record, portable_path

REPO = Path(__file__).resolve().parents[1]
ABSOLUTE = re.compile(r"(?<![\w.:/])/(?:work|tmp|root|home|Users|mnt|srv)/[\w.-]")


def test_command_line_names_the_program_and_makes_paths_relative(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    argv = ["/some/venv/bin/mwemt", "run", str(tmp_path / "configs" / "a.yaml"), "--set",
            f"data.lexicon={tmp_path / 'lex.tsv'}", "--jobs", "2"]
    assert command_line(argv) == "mwemt run configs/a.yaml --set data.lexicon=lex.tsv --jobs 2"


def test_portable_path_is_never_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    outside = tmp_path.parent / "elsewhere" / "f.txt"
    assert portable_path(outside) == "../elsewhere/f.txt"
    assert portable_path("rel/x.txt") == "rel/x.txt"
    f = tmp_path / "x.txt"
    f.write_text("x\n")
    assert file_record(f)["path"] == "x.txt"


def test_no_committed_result_or_doc_records_an_absolute_path():
    offenders = []
    for path in sorted([*(REPO / "results").rglob("*"), *(REPO / "docs").rglob("*"), REPO / "README.md"]):
        if path.is_file() and path.suffix in {".json", ".md", ".html", ".csv", ".tsv", ".sh", ".txt"}:
            for lineno, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if ABSOLUTE.search(line):
                    offenders.append(f"{path.relative_to(REPO)}:{lineno}")
    assert not offenders, offenders[:10]
