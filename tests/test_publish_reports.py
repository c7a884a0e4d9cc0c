"""`--publish` copies the comparison reports this invocation wrote, and nothing an earlier invocation left in
RUN/report: cpu-science-3 turned reports off in its config, yet its publish copied an earlier run's stale
RUN/report whole (it had to be removed by hand first)."""

from __future__ import annotations

import json

from mwemt.experiments.publish import publish_run


def _run_dir(tmp_path):
    run = tmp_path / "run"
    for test in ("fresh", "stale"):
        (run / "report" / test).mkdir(parents=True)
        (run / "report" / test / "index.html").write_text(f"<p>{test}</p>\n")
        (run / "report" / test / "report.json").write_text("{}\n")
    (run / "results.md").write_text("# Results\n")
    return run


def test_only_this_invocations_reports_are_published(tmp_path):
    run = _run_dir(tmp_path)
    out = tmp_path / "published"
    manifest = publish_run(run, out, {}, reports={"fresh": "report/fresh/index.html"})
    assert (out / "report" / "fresh" / "index.html").read_text() == "<p>fresh</p>\n"
    assert (out / "report" / "fresh" / "report.json").is_file()
    assert not (out / "report" / "stale").exists()
    assert set(manifest["files"]) == {"results.md", "report/fresh/index.html", "report/fresh/report.json"}


def test_reports_off_publish_none_and_a_republish_removes_earlier_ones(tmp_path):
    run = _run_dir(tmp_path)
    out = tmp_path / "published"
    publish_run(run, out, {}, reports={"fresh": "report/fresh/index.html", "stale": "report/stale/index.html"})
    assert (out / "report" / "stale" / "index.html").is_file()
    publish_run(run, out, {})   # a later invocation with reports turned off
    assert not (out / "report").exists()
    assert json.loads((out / "publish.json").read_text())["files"].keys() == {"results.md"}
