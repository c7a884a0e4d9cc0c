"""MQM error spans -> MWE verdicts (`mwemt.evaluate.mqm_mwe`), on a hand-made MQM file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mwemt.evaluate.mqm_mwe import (
    LineErrors,
    MqmMweRules,
    mqm_judgements,
    source_annotator,
    token_offsets,
    verdict_of,
    write_judgements,
)
from mwemt.judgements import marked_spans, read_mqm_ratings

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment"
SRC1 = "We saw the Eiffel Tower in Paris ."
SRC2 = "Please keep in touch with Maria ."
ROWS = [
    f"ref\ttalk\t1\t1\tr1\t{SRC1}\tWir sahen den Eiffel Tower in Paris .\tNo-error\tNo-error\t",
    f"ref\ttalk\t1\t2\tr1\t{SRC2}\tBitte bleib mit Maria in Kontakt .\tNo-error\tNo-error\t",
    # A: an accuracy error on the MWE's words -> N
    f"A\ttalk\t1\t1\tr1\t{SRC1}\tWir sahen den <v>Eiffel Tower</v> in Paris .\tAccuracy/Mistranslation\tMajor\t",
    # B: only a style error on them -> left out (whitespace variant of the text on purpose)
    f"B\ttalk\t1\t1\tr2\t{SRC1}\tWir sahen  den <v>Eiffel Tower</v> in Paris .\tStyle/Awkward\tMinor\t",
    # C: a fluency error elsewhere in the line -> Y
    f"C\ttalk\t1\t1\tr1\t{SRC1}\tWir sahen den Eiffel Tower in <v>Pariss</v> .\tFluency/Spelling\tMinor\t",
    # D: no error -> Y
    f"D\ttalk\t1\t1\tr2\t{SRC1}\tWir sahen den Eiffel Tower in Paris .\tNo-error\tNo-error\t",
    # A, segment 2: the MWE omitted, the omission marked in the source -> N
    "A\ttalk\t1\t2\tr1\tPlease <v>keep in touch</v> with Maria .\tBitte mit Maria .\tAccuracy/Omission\tMajor\t",
    f"B\ttalk\t1\t2\tr2\t{SRC2}\tBitte bleib mit Maria in Kontakt .\tNo-error\tNo-error\t",
    f"C\ttalk\t1\t2\tr1\t{SRC2}\tBitte bleib mit Maria in Kontakt .\tNo-error\tNo-error\t",
    f"D\ttalk\t1\t2\tr2\t{SRC2}\tBitte bleib mit Maria in Kontakt .\tNo-error\tNo-error\t",
]


@pytest.fixture
def mqm(tmp_path: Path) -> tuple[Path, Path]:
    path = tmp_path / "mqm.tsv"
    path.write_text("\n".join([HEADER, *ROWS]) + "\n", encoding="utf-8")
    lexicon = tmp_path / "lex.txt"
    lexicon.write_text("eiffel tower\nkeep in touch\n", encoding="utf-8")
    return path, lexicon


def test_marked_spans_count_non_whitespace_characters():
    text, spans = marked_spans("Wir  sahen <v>den Turm</v> .")
    assert text == "Wir  sahen den Turm ."
    assert spans == ((8, 15),)   # "Wirsahen" = 8 characters before; "denTurm" = 7
    assert marked_spans("a <v>b c")[1] == ((1, 3),)   # left open: to the end
    assert marked_spans("a </v>b")[1] == ()            # a close without an open is dropped
    assert marked_spans("<v>x</v> y <v>z</v>")[1] == ((0, 1), (2, 3))


def test_reader_keeps_the_spans(mqm):
    path, _ = mqm
    ratings = {(r.system, r.segment): r for r in read_mqm_ratings(path)}
    a1 = ratings[("A", "1")]
    assert "<v>" not in a1.target and a1.target_spans == ((11, 22),) and a1.source_spans == ()
    assert ratings[("A", "2")].source_spans == ((6, 17),)   # "keepintouch" after "Please"
    assert ratings[("D", "1")].target_spans == ()


def test_token_offsets_survive_whitespace_and_rewrites():
    assert token_offsets("Wir  sahen den", ["Wir", "sahen", "den"]) == [(0, 3), (3, 8), (8, 11)]
    assert token_offsets("l'uomo va", ["l'", "uomo", "va"]) == [(0, 2), (2, 6), (6, 8)]
    assert token_offsets("a b", ["a", "&quot;", "b"]) == [(0, 1), None, (1, 2)]


def test_verdict_rules():
    rules = MqmMweRules()
    words, source = [(10, 15)], [(3, 8)]
    assert verdict_of(LineErrors([("Accuracy/Mistranslation", (), ((12, 20),))], {"r"}), words, source, rules)[0] == "N"
    assert verdict_of(LineErrors([("Fluency/Grammar", (), ((0, 11),))], {"r"}), words, source, rules)[0] == "N"
    assert verdict_of(LineErrors([("Fluency/Grammar", (), ((15, 20),))], {"r"}), words, source, rules) == ("Y", "")
    assert verdict_of(LineErrors([], {"r"}), words, source, rules) == ("Y", "")
    other = LineErrors([("Terminology/Inappropriate for context", (), ((10, 12),))], {"r"})
    assert verdict_of(other, words, source, rules) == (None, "other errors only")
    assert verdict_of(other, words, source, MqmMweRules(other_errors="Y"))[0] == "Y"
    # no aligned words: left out, unless an omission span covers the MWE's source words
    assert verdict_of(LineErrors([], {"r"}), [], source, rules) == (None, "no aligned words")
    omitted = LineErrors([("Accuracy/Omission", ((4, 6),), ())], {"r"})
    assert verdict_of(omitted, [], source, rules)[0] == "N"


def test_mqm_file_to_verdicts(mqm, tmp_path):
    path, lexicon = mqm
    j = mqm_judgements(path, source_annotator(lexicon), tgt_lang="de")
    assert j.counts["reference_system"] == "ref" and j.counts["mwes_with_reference"] == 2
    assert set(j.hyps) == {"A", "B", "C", "D"}   # the reference is not a judged system
    seg1 = {r.system: r for r in j.rows if r.group == "1"}
    assert seg1["A"].label == 0 and "Accuracy/Mistranslation" in seg1["A"].note
    assert "B" not in seg1                              # style only over the MWE: left out, counted
    assert j.counts["rows_left_out"]["other errors only"] == 1
    assert seg1["C"].label == 1 and seg1["D"].label == 1
    assert seg1["D"].note.split("\t")[0] == "Eiffel Tower"   # the aligned words of the MWE
    seg2 = {r.system: r for r in j.rows if r.group == "2"}
    assert seg2["A"].label == 0 and "Omission" in seg2["A"].note   # the omission span in the source
    item = j.items[seg1["D"].item]
    assert item.meta["seg_id"] == "1" and item.mwes[0].reference == "Eiffel Tower"
    assert j.counts["verdicts"] == {"N": 2, "Y": sum(r.label for r in j.rows)}
    paths = write_judgements(tmp_path / "out", j)
    lines = paths["verdicts"].read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("system\tseg_id") and len(lines) == len(j.rows) + 1
    assert (tmp_path / "out" / "hyp" / "A.txt").read_text(encoding="utf-8").count("\n") == len(j.items)


def test_cli_mwe_test(mqm, tmp_path):
    path, lexicon = mqm
    out = tmp_path / "cli"
    proc = subprocess.run([sys.executable, "-m", "mwemt", "meta-eval", "mwe-test", "--mqm", str(path),
                           "--lexicon", str(lexicon), "--lang", "de", "--out", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["verdicts"]["N"] == 2
    assert (out / "testset.jsonl").is_file()
    bad = subprocess.run([sys.executable, "-m", "mwemt", "meta-eval", "mwe-test", "--mqm", str(path),
                          "--out", str(tmp_path / "x")], capture_output=True, text=True)
    assert bad.returncode == 2 and "--lexicon" in bad.stderr
