"""The several-stage progress display: stage output split into messages and bar states."""

from __future__ import annotations

import io

from mwemt.experiments.display import StageDisplay, split_output


def test_bars_are_status_and_messages_are_lines():
    text = ("INFO starting\n"
            "\rtrain:   0%|  | 0/5\rtrain:  20%|# | 1/5"     # a bar drawing itself
            "\r                    \repoch 1 | valid loss 5.2\n"  # tqdm.write: clear, message
            "\rtrain:  40%|## | 2/5\rtrain: 100%|###| 5/5\n"  # the bar closing (leave=True)
            "\rbinarize:  50%|# | 3/6")                       # another bar, still running
    messages, status, rest = split_output(text)
    assert messages == ["INFO starting", "epoch 1 | valid loss 5.2"]
    assert status == "binarize:  50%|# | 3/6"
    assert rest == "\rbinarize:  50%|# | 3/6"


def test_a_bar_drawn_once_then_closed_is_not_a_message():
    assert split_output("\rannotate: 100%|###| 9/9\n") == ([], "annotate: 100%|###| 9/9", "")


def test_not_live_prints_messages_of_a_stage_prefixed(tmp_path):
    log = tmp_path / "stage.log"
    log.write_text("\rbar 1/2\rbar 2/2\nINFO trained\nhalf a li")
    out = io.StringIO()
    display = StageDisplay(out, live=False)
    display.message("[1/1] train x running ...")
    display.start("k", "[1/1] train x", "  train x: ", log)
    display.finish("k")
    display.close()
    assert out.getvalue() == "[1/1] train x running ...\n  train x: INFO trained\n  train x: half a li\n"
