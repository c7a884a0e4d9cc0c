"""Every page that shows console output is checked (issue 43): each ```console block with output on a Markdown page of
the checkout is an example that ``scripts/readme_examples.py --check`` runs, or a transcript whose marker says why it
cannot be re-run; a console session (``$`` commands) is never in a fence of another kind, where neither marker
applies; and every page with an example is one the script finds.

The rules themselves are tested on small pages written here, so that a page that breaks them is known to fail.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "readme_examples.py"


@pytest.fixture(scope="module")
def script():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import readme_examples
    finally:
        sys.path.pop(0)
    return readme_examples


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")


def _git_repo(path: Path, pages: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for rel, text in pages.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", "."], cwd=path, check=True)
    return path


UNMARKED = "Text.\n\n```console\n$ echo hi\nhi\n```\n"
COMMANDS_ONLY = "```console\n$ mwemt train --config c.yaml \\\n      --workdir runs/x\n\n$ ls\n```\n"
EXAMPLE = "<!-- example: hello -->\n```console\n$ echo hi\nhi\n```\n"
TRANSCRIPT = "<!-- transcript: a measurement: timings of a benchmark, machine-dependent -->\n```console\n$ b\n1.2x\n```\n"


# ---------------------------------------------------------------- the checkout's pages


def test_every_console_block_with_output_is_an_example_or_a_transcript(script):
    missing = [f"{rel}:{line}" for rel in script.markdown_files(ROOT)
               for line in script.unmarked_blocks(_lines(ROOT / rel))]
    assert not missing, ("console blocks with output but neither <!-- example: NAME --> nor <!-- transcript: REASON "
                         f"--> on the line before the fence: {missing}")


def test_no_console_session_hides_in_another_fence(script):
    found = [f"{rel}:{line}" for rel in script.markdown_files(ROOT)
             for line in script.plain_console_blocks(_lines(ROOT / rel))]
    assert not found, f"$ commands in a fence that is not ```console (make it one, with a marker): {found}"


def test_every_transcript_says_why(script):
    for rel in script.discover_pages(ROOT):
        for t in script.parse_transcripts(_lines(ROOT / rel), rel):   # refuses an empty reason
            assert len(t.reason.split()) >= 3, f"{rel}:{t.line}: say why the block is not run: {t.reason!r}"


def test_every_page_with_an_example_is_discovered_and_names_are_unique(script):
    pages = script.discover_pages(ROOT)
    with_examples = {rel for rel in script.markdown_files(ROOT)
                     if any(line.startswith("<!-- example:") for line in _lines(ROOT / rel))}
    assert with_examples <= set(pages), f"pages the script does not find: {sorted(with_examples - set(pages))}"
    assert pages[0] == "README.md"
    seen: dict[str, str] = {}
    for rel in pages:
        for e in script.parse(_lines(ROOT / rel), rel):
            assert e.name not in seen, f"{rel}: the example name {e.name} is also used in {seen[e.name]}"
            seen[e.name] = rel
            assert all(need in {x.name for x in script.parse(_lines(ROOT / rel), rel)} for need in e.needs), \
                f"{rel}: {e.name} needs a block of another page"


def test_list_shows_every_page_with_its_examples_and_transcripts(script):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--list"], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    for rel in script.discover_pages(ROOT):
        assert f"{rel}:\n" in proc.stdout
    assert "  (transcript)" in proc.stdout and "  demo-report " in proc.stdout


# ---------------------------------------------------------------- the rules, on pages written here


def test_an_unmarked_block_with_output_is_found(script, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(UNMARKED + COMMANDS_ONLY + EXAMPLE + TRANSCRIPT, encoding="utf-8")
    # only the first block: commands (with continuation and blank lines) show no output; the others are marked
    assert script.unmarked_blocks(_lines(page)) == [3]
    page.write_text(COMMANDS_ONLY + EXAMPLE + TRANSCRIPT, encoding="utf-8")
    assert script.unmarked_blocks(_lines(page)) == []
    # an HTML comment that is neither marker does not count
    page.write_text("<!-- a note -->\n" + UNMARKED.split("\n\n", 1)[1], encoding="utf-8")
    assert script.unmarked_blocks(_lines(page)) == [2]


def test_a_console_session_in_a_plain_fence_is_found(script, tmp_path):
    page = tmp_path / "page.md"
    plain = UNMARKED.replace("```console", "```")
    page.write_text(plain + "```text\n# a comment first\n$ ls\n```\n```python\nprint(1)\n```\n" + EXAMPLE,
                    encoding="utf-8")
    assert script.plain_console_blocks(_lines(page)) == [3, 7]
    assert script.unmarked_blocks(_lines(page)) == []     # not a console block: only the rule above sees it


def test_check_fails_on_an_unmarked_block_and_a_transcript_without_a_reason(script, tmp_path, monkeypatch, capsys):
    repo = _git_repo(tmp_path / "repo", {"README.md": TRANSCRIPT, "docs/page.md": UNMARKED,
                                         "docs/plain.md": UNMARKED.replace("```console", "```")})
    monkeypatch.setattr(script, "ROOT", repo)
    assert script.discover_pages(repo) == ["README.md"]        # a page with an unmarked block only is not a page
    assert script.main_pages(["--check"]) == 1
    err = capsys.readouterr().err
    assert "docs/page.md:3: a console block with output has neither" in err
    assert "docs/plain.md:3: a console session in a fence that is not ```console" in err
    (repo / "docs" / "plain.md").unlink()
    (repo / "docs" / "page.md").write_text(TRANSCRIPT, encoding="utf-8")
    assert script.main_pages(["--check"]) == 0
    assert script.main_pages(["--list"]) == 0
    out = capsys.readouterr().out
    assert "README.md:\n" in out and "docs/page.md:\n" in out and "a measurement: timings of a benchmark" in out
    for marker in ("<!-- transcript: -->", "<!-- transcript:   -->"):
        (repo / "docs" / "page.md").write_text(TRANSCRIPT.replace(TRANSCRIPT.split("\n")[0], marker),
                                               encoding="utf-8")
        with pytest.raises(SystemExit, match="docs/page.md:1: a transcript marker needs a reason"):
            script.main_pages(["--list"])
    (repo / "docs" / "page.md").write_text("<!-- transcript: no fence follows -->\ntext\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="not followed by a ```console fence"):
        script.parse_transcripts(_lines(repo / "docs" / "page.md"), "docs/page.md")


def test_example_names_are_unique_across_pages(script, tmp_path, monkeypatch, capsys):
    repo = _git_repo(tmp_path / "repo", {"README.md": EXAMPLE, "docs/a.md": EXAMPLE.replace("hello", "other"),
                                         "docs/b.md": EXAMPLE})
    monkeypatch.setattr(script, "ROOT", repo)
    assert script.discover_pages(repo) == ["README.md", "docs/a.md", "docs/b.md"]
    assert script.main_pages(["--list"]) == 2
    assert "the example name hello is used on two pages, README.md and docs/b.md" in capsys.readouterr().err
    (repo / "docs" / "b.md").write_text(EXAMPLE.replace("hello", "third"), encoding="utf-8")
    assert script.main_pages(["--list"]) == 0
    assert script.main_pages(["--list", "--only", "nope"]) == 2
    assert "no example named nope" in capsys.readouterr().err


def test_only_finds_the_page_of_a_name(script, tmp_path, monkeypatch, capsys):
    repo = _git_repo(tmp_path / "repo", {"README.md": EXAMPLE, "docs/a.md": EXAMPLE.replace("hello", "other")})
    monkeypatch.setattr(script, "ROOT", repo)
    assert script.main_pages(["--list", "--only", "other"]) == 0
    out = capsys.readouterr().out
    assert "docs/a.md:" in out and "README.md:" not in out


def test_a_comment_command_runs_nothing(script, tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- example: comment -->\n```console\n$ echo a\na\n$ # then b\n$ echo b\nb\n```\n",
                    encoding="utf-8")
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check", "--readme", str(page)], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
