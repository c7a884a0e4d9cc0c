"""sacrebleu's three-line "forgot to detokenize" warning (issue 37, item 12) no longer reaches stderr from every
score of the demo's own (tokenized) test sets; `mwemt score` says it in one line of its own."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOKENIZED = [f"Anna lavora oggi {i} ." for i in range(120)]


def test_bleu_on_tokenized_lines_logs_nothing(caplog):
    from mwemt.evaluate.sacrebleu_metrics import Bleu

    bleu = Bleu()
    with caplog.at_level(logging.DEBUG):
        stats = bleu.sentence_stats(TOKENIZED, TOKENIZED)
    assert round(bleu.corpus_score_from_stats(stats).score, 6) == 100.0
    assert not [r for r in caplog.records if "detokenize" in r.getMessage() or "tokenized period" in r.getMessage()]


def test_mwemt_score_says_it_once(tmp_path):
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("\n".join(TOKENIZED) + "\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "mwemt", "score", "--hyp", str(hyp), "--ref", str(hyp),
                          "--metrics", "bleu"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "forgot to detokenize" not in out.stderr
    assert out.stderr.count("tokenized period") == 1
