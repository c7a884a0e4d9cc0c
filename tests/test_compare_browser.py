"""A real browser opens the comparison report: Chromium (Debian's ``chromium``) renders it headless.

Checks: the page renders to a PNG that is not blank; the page's scripts run without a JavaScript
error (the page records errors in ``#js-errors`` and marks ``<html data-js="ready">`` when its
sorting script has run; Chromium's console log must hold no uncaught error); clicking a column
header of the per-MWE table sorts it. A control page with a deliberate error proves the error
check can fail.

Run it alone with ``python -m pytest tests/test_compare_browser.py -v``; it needs ``chromium`` on
the PATH (``apt-get install -y chromium``; `.ci/run` installs it) and skips, saying so, without.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mwemt.evaluate.bootstrap import BootstrapSettings
from mwemt.evaluate.compare import CompareSettings, compare_systems, load_compare_inputs, write_report
from mwemt.evaluate.compare.html import ERROR_SCRIPT

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get install -y "
                                                          "chromium; .ci/run installs it)")
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "compare"
TIMEOUT = 180


def chromium(tmp: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    """One headless Chromium run with a fresh profile and nothing that reaches the network."""
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-default-apps", "--disable-extensions", f"--user-data-dir={profile}",
           "--enable-logging=stderr", "--v=0", *args, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)


def console_errors(stderr: str) -> list[str]:
    """Uncaught errors and console errors Chromium logged for the page."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line and re.search(r"Uncaught|Error", line)]


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    inputs = load_compare_inputs([(s, FIXTURE / f"{s}.it") for s in ("base", "mwe", "copy")],
                                 testset=FIXTURE / "testset.jsonl", lang="it", train_src=FIXTURE / "train.en",
                                 dictionary=FIXTURE / "dictionary.tsv",
                                 mwe_compositionality=FIXTURE / "compositionality.en.tsv")
    report = compare_systems(inputs, settings=CompareSettings(bootstrap=BootstrapSettings(100)))
    return write_report(tmp_path_factory.mktemp("browser") / "report", report)["index.html"]


def test_page_renders_to_a_png_that_is_not_blank(page, tmp_path):
    from PIL import Image

    shot = tmp_path / "page.png"
    done = chromium(tmp_path, page.as_uri(), f"--screenshot={shot}", "--window-size=1200,2000")
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.is_file() and shot.stat().st_size > 10_000
    with Image.open(shot) as im:
        assert im.size == (1200, 2000)
        rgb = im.convert("RGB")
        colors = rgb.getcolors(maxcolors=1 << 20)
        assert colors is not None and len(colors) > 50            # text, charts and swatches, not one flat color
        white = sum(n for n, c in colors if min(c) >= 250)
        assert white / (1200 * 2000) < 0.97                        # something was drawn
        # the chart colors of the first two systems are on screen (Okabe-Ito blue and orange)
        present = {c for _, c in colors}
        assert (0, 114, 178) in present and (230, 159, 0) in present
    assert console_errors(done.stderr) == []


def test_scripts_run_without_errors_and_sorting_works(page, tmp_path):
    probe = ("<script>var t=document.getElementById('per-mwe-table');t.tHead.rows[0].cells[0].click();"
             "document.documentElement.setAttribute('data-first',t.tBodies[0].rows[0].cells[0].textContent);"
             "t.tHead.rows[0].cells[0].click();"
             "document.documentElement.setAttribute('data-last',t.tBodies[0].rows[0].cells[0].textContent);</script>")
    copy = tmp_path / "probe.html"
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", probe + "</body>"), encoding="utf-8")
    done = chromium(tmp_path, copy.as_uri(), "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert 'data-js="ready"' in dom
    assert re.search(r'<p id="js-errors" hidden="">\s*</p>', dom), "the page recorded a JavaScript error"
    assert console_errors(done.stderr) == []
    # MWE column ascending, then descending
    assert 'data-first="cats and dogs"' in dom and 'data-last="take care of"' in dom


def test_control_page_with_an_error_is_caught(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text(f'<!DOCTYPE html><html><head><script>{ERROR_SCRIPT}</script></head><body>'
                   '<p id="js-errors" hidden></p><script>notAFunction();</script></body></html>', encoding="utf-8")
    done = chromium(tmp_path, bad.as_uri(), "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "JavaScript error" in done.stdout and "notAFunction" in done.stdout
    assert console_errors(done.stderr), "Chromium's console log did not show the error"
