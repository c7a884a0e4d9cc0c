"""The README was cut to a landing page (issue 43): every section of the README as it was at 8957f08 lives on in a
page of its own, every study has a page that answers the same questions, and the links between the pages lead
somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# `git show 8957f08:README.md | grep '^#'`, and the page each section moved to
OLD_SECTIONS = {
    "# mwemt": "README.md",
    "## Set up": "README.md",
    "## The pipeline": "docs/README.md",
    "## Worked examples (real output)": "docs/examples.md",
    "### Annotate": "docs/examples.md",
    "### Identification on PARSEME 1.1: filters learned from the training file": "docs/examples.md",
    "### Subwords with factors": "docs/examples.md",
    "### Prepare, train, translate (factored fairseq)": "docs/examples.md",
    "### Augment": "docs/examples.md",
    "### MWE test sets from parallel text": "docs/examples.md",
    "### Score": "docs/examples.md",
    "### Compare systems MWE by MWE": "docs/examples.md",
    "### Meta-evaluation from published MQM files": "docs/examples.md",
    "#### Measured: five metrics against expert MQM, with paired comparisons (one command per set)":
        "studies/meta-evaluation/README.md",
    "### Compositionality": "docs/examples.md",
    "### Experiments": "docs/examples.md",
    "### Experiments on a Slurm cluster": "docs/examples.md",
    "## Failure behavior": "docs/failures.md",
    "## Benchmarks": "docs/benchmarks.md",
    "## Layout": "docs/README.md",
    "## Data": "README.md",
}

# one page per study: beside its publication (results/NAME) or beside its analysis scripts (studies/NAME)
STUDIES = ("results/cpu-science", "results/cpu-science-2", "results/cpu-science-2-ladder", "results/cpu-science-3",
           "results/cpu-science-3-60000", "results/cpu-science-3-stopping", "results/compositionality",
           "studies/meta-evaluation", "studies/mwe-test-and-score", "studies/identification", "studies/augmentation",
           "studies/paper-small")

# the pages written for issue 43, whose links are checked
PAGES = ("README.md", "docs/README.md", "docs/examples.md", "docs/failures.md", "docs/benchmarks.md",
         "studies/README.md", *(f"{s}/README.md" for s in STUDIES))

HEADING = re.compile(r"^(#{1,6}) +(.*?) *$")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def headings(page: Path) -> list[str]:
    """The page's headings (their text, any level), outside code blocks."""
    found, fenced = [], False
    for line in page.read_text(encoding="utf-8").split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := HEADING.match(line)):
            found.append(m.group(2))
    return found


def slug(heading: str) -> str:
    """The anchor a Markdown renderer (GitHub's rule) gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("old,page", sorted(OLD_SECTIONS.items()))
def test_every_old_readme_section_has_a_home(old, page):
    text = HEADING.match(old).group(2)
    assert text in headings(ROOT / page), f"the README's section {old!r} is not a heading of {page}"


def test_the_readme_is_a_landing_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").split("\n")
    assert len(lines) - 1 <= 250
    for study in STUDIES:   # every study is one click away
        assert f"]({study}/README.md)" in "\n".join(lines), study


@pytest.mark.parametrize("study", STUDIES)
def test_every_study_page_answers_the_same_questions(study):
    page = ROOT / study / "README.md"
    text = page.read_text(encoding="utf-8")
    found = [h.lower() for h in headings(page)]
    assert any("question" in h for h in found), f"{study}: no question"
    assert any("found" in h for h in found), f"{study}: no 'what it found / did not find'"
    assert "did not" in text, f"{study}: says nothing of what it did not find"
    assert re.search(r"^\|.*\|\s*$\n^\|[-|: ]+\|\s*$", text, re.M), f"{study}: no results table"
    assert "`" in text and ("mwemt run" in text or "python " in text or ".sh" in text), f"{study}: no command"


@pytest.mark.parametrize("page", PAGES)
def test_links_lead_somewhere(page):
    """Every relative link of the page names a file or folder of the repository, and an anchor into a Markdown
    page names one of its headings."""
    path = ROOT / page
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue
        rel, _, anchor = target.partition("#")
        dest = (path.parent / rel).resolve() if rel else path
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in {slug(h) for h in headings(dest)}:
            broken.append(target)
    assert not broken, f"{page}: {broken}"


def test_slug():
    assert slug("Try it: `mwemt demo`") == "try-it-mwemt-demo"
    assert slug("Score a system's output on an MWE test") == "score-a-systems-output-on-an-mwe-test"
    assert slug("On a Slurm cluster (`--executor slurm`)") == "on-a-slurm-cluster---executor-slurm"
