"""The model- and decoding-side MWE methods (issue 30): the MWE-weighted loss and lexically constrained
decoding with the MWE translation table, plus the convergence settings of training."""

from __future__ import annotations

import pytest

from mwemt.errors import MwemtError
from tests.conftest import FIXTURES, requires_nmt
from tests.test_nmt_plugin import SRC3, TGT, setup, write_pair

pytestmark = [requires_nmt, pytest.mark.nmt]

NMT = FIXTURES / "nmt"
FLAGS = [1, 0, 1, 0]          # sentences 1 and 3 of SRC3 "have an MWE"


@pytest.fixture
def flagged(tmp_path):
    """SRC3/TGT binarized with one MWE flag per training sentence."""
    from mwemt.nmt.prepare import prepare

    pair = write_pair(tmp_path, "train", SRC3, TGT)
    (tmp_path / "train.flags").write_text("".join(f"{f}\n" for f in FLAGS), encoding="utf-8")
    prepare({"train": pair, "valid": pair}, tmp_path / "bin", src_lang="en", tgt_lang="it", progress=False,
            mwe_flags={"train": tmp_path / "train.flags"})
    return tmp_path / "bin"


def weighted_setup(data_dir, weight, *extra):
    task, cfg = setup(data_dir, "--arch", "factored_transformer_tiny", "--encoder-embed-dim", "32",
                      "--decoder-embed-dim", "32", "--criterion", "mwe_weighted_label_smoothed_cross_entropy",
                      "--label-smoothing", "0.1", "--mwe-loss-weight", str(weight), *extra)
    task.load_dataset("train")
    ds = task.dataset("train")
    model = task.build_model(cfg.model)
    model.eval()                              # no dropout: every pass sees the same network
    return task, model, task.build_criterion(cfg.criterion), ds.collater([ds[i] for i in range(len(ds))])


def per_sentence_stock_losses(task, model, batch):
    """fairseq's own label-smoothed loss, summed per sentence of the batch (rows in batch order)."""
    from fairseq.criterions.label_smoothed_cross_entropy import LabelSmoothedCrossEntropyCriterion

    stock = LabelSmoothedCrossEntropyCriterion(task, False, 0.1)
    net_output = model(**batch["net_input"])
    loss, _ = stock.compute_loss(model, net_output, batch, reduce=False)
    return loss.view(batch["target"].shape).sum(dim=1)   # padding positions contribute 0


def test_weighted_loss_is_the_weighted_sum_of_sentence_losses(flagged):
    import torch

    task, model, crit, batch = weighted_setup(flagged, 3.0)
    task.attach_mwe_flags(batch, crit)
    # the flags follow the batch's own (length-sorted) order, looked up by sentence id
    assert batch["mwe_flags"].tolist() == [FLAGS[i] for i in batch["id"].tolist()]
    assert batch["id"].tolist() != list(range(len(FLAGS)))          # the batch really is reordered

    model.zero_grad()
    loss, size, log = crit(model, batch)
    loss.backward()
    ours = [p.grad.clone() for p in model.parameters()]

    model.zero_grad()
    per_sentence = per_sentence_stock_losses(task, model, batch)
    weights = torch.tensor([3.0 if FLAGS[i] else 1.0 for i in batch["id"].tolist()])
    expected = (weights * per_sentence).sum()
    expected.backward()
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    assert loss.item() > per_sentence.sum().item() * 1.5          # the flagged sentences count three times
    assert all(torch.allclose(a, p.grad, atol=1e-5) for a, p in zip(ours, model.parameters()))
    assert size == batch["ntokens"]
    # the NLL (perplexity) is not weighted
    net_output = model(**batch["net_input"])
    from fairseq.criterions.label_smoothed_cross_entropy import LabelSmoothedCrossEntropyCriterion

    _, nll = LabelSmoothedCrossEntropyCriterion(task, False, 0.1).compute_loss(model, net_output, batch)
    assert float(log["nll_loss"]) == pytest.approx(nll.item(), rel=1e-5)


def test_weight_one_reproduces_the_stock_criterion_exactly(flagged):
    from mwemt.nmt.fairseq_plugin.criterion import FusedLabelSmoothedCrossEntropyCriterion

    task, model, weighted, batch = weighted_setup(flagged, 1.0)
    fused = FusedLabelSmoothedCrossEntropyCriterion(task, False, 0.1)   # what every other system trains with
    task.attach_mwe_flags(batch, weighted)
    results = []
    for crit in (fused, weighted):
        model.zero_grad()
        loss, size, log = crit(model, batch)
        loss.backward()
        results.append((loss.item(), float(log["nll_loss"]), size, [p.grad.clone() for p in model.parameters()]))
    (l1, n1, s1, g1), (l2, n2, s2, g2) = results
    assert (l1, n1, s1) == (l2, n2, s2)
    assert all((a == b).all() for a, b in zip(g1, g2))
    # and the same within rounding as fairseq's own criterion
    model.zero_grad()
    assert per_sentence_stock_losses(task, model, batch).sum().item() == pytest.approx(l1, rel=1e-5)


def test_validation_is_unweighted_and_missing_flags_are_refused(flagged, tmp_path):
    from mwemt.nmt.fairseq_plugin.criterion import FusedLabelSmoothedCrossEntropyCriterion
    from mwemt.nmt.prepare import prepare

    task, model, crit, batch = weighted_setup(flagged, 3.0)
    task.load_dataset("valid")
    assert "valid" not in task.mwe_flags       # validation loss compares with an unweighted model's
    _, _, log = task.valid_step(dict(batch), model, crit)
    _, _, plain = FusedLabelSmoothedCrossEntropyCriterion(task, False, 0.1)(model, batch)
    assert float(log["loss"]) == pytest.approx(float(plain["loss"]), rel=1e-6)
    plain = tmp_path / "plain"
    prepare({"train": write_pair(tmp_path, "p", SRC3, TGT)}, plain, src_lang="en", tgt_lang="it", progress=False)
    task2, model2, crit2, batch2 = weighted_setup(plain, 3.0)
    with pytest.raises(MwemtError, match="has no train MWE flags"):
        task2.attach_mwe_flags(batch2, crit2)


def test_prepare_checks_the_flags(tmp_path):
    from mwemt.errors import InputError
    from mwemt.nmt.prepare import prepare

    pair = write_pair(tmp_path, "train", SRC3, TGT)
    (tmp_path / "short.flags").write_text("1\n0\n", encoding="utf-8")
    with pytest.raises(InputError, match="2 MWE flags for 4 sentence pairs"):
        prepare({"train": pair}, tmp_path / "a", src_lang="en", tgt_lang="it", progress=False,
                mwe_flags={"train": tmp_path / "short.flags"})
    (tmp_path / "bad.flags").write_text("1\n0\nyes\n0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.flags:3.*bad MWE flag 'yes'"):
        prepare({"train": pair}, tmp_path / "b", src_lang="en", tgt_lang="it", progress=False,
                mwe_flags={"train": tmp_path / "bad.flags"})
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


# ---------------------------------------------------------------- constrained decoding

LINES = ["Anna thinks about the baby .",                                        # 1 constraint
         "By the way , anna takes care of the garden today .",                  # 3 (a gapped translation)
         "My sister looks at the house in the ivory tower .",                   # 1
         "The dog sleeps ."]                                                    # none
WANTED = [["soldi"], ["medico", "giardino", "libri"], ["cane"], []]     # matched casefolded (`has_word`)


def constraint_table():
    from mwemt.testsets.mwe_table import MweTranslationTable

    table = MweTranslationTable()
    table.add("think about", ["soldi"], 3)
    table.add("think about", ["pensare", "a"], 1)          # less frequent: never the constraint
    table.add("by the way", ["medico"], 2)
    table.add("take care of", ["giardino", "...", "libri"], 2)
    table.add("ivory tower", ["cane"], 1)
    table.add("dog", ["gatto"], 5)                          # one word: not an MWE, never constrained
    return table


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """A tiny baseline trained for 4 updates: its outputs are poor, but constraints force tokens anyway."""
    from mwemt.experiments.experiment import train_system
    from tests.test_nmt_train import tiny_config

    return train_system(tiny_config("none"), "none", tmp_path_factory.mktemp("base"), progress=False)


def has_word(hyp: str, word: str) -> bool:
    # an undertrained model glues pieces onto a forced word ("medicoico"): match word starts
    return any(tok.lower().startswith(word) for tok in hyp.split())


def test_table_constraints_follow_the_source_mwes():
    from mwemt.nmt.translate import TableConstraints

    finder = TableConstraints(constraint_table(), lang="en")
    assert finder.phrases("By the way , anna takes care of the garden today .".split()) == [
        ("Medico",), ("giardino",), ("libri",)]                     # sentence-initial: capitalized
    assert finder.phrases("and by the way".split()) == [("medico",)]
    assert finder.phrases("She took good care of it .".split()) == []          # no gap allowed (max_gap 0)
    assert TableConstraints(constraint_table(), lang="en", max_gap=1).phrases(
        "She took good care of it .".split()) == [("giardino",), ("libri",)]
    assert finder.phrases("The dog sleeps .".split()) == []
    only_frequent = TableConstraints(constraint_table(), lang="en", min_count=2)
    assert only_frequent.phrases("the ivory tower".split()) == []
    assert only_frequent.phrases("I think about it".split()) == [("soldi",)]


def test_constraints_stay_with_their_sentence_in_a_sorted_batch(baseline):
    """fairseq's packing and collater with batch > 1, sentences of different lengths (so the collater
    reorders them) and different numbers of constraints: every output has its own constraints."""
    import torch
    from fairseq.token_generation_constraints import pack_constraints, unpack_constraints

    from mwemt.nmt.translate import Translator

    tr = Translator.load(baseline)
    phrases = tr.table_constraints(LINES, constraint_table())
    assert [[w.lower() for p in c for w in p] for c in phrases] == WANTED
    tokens = [tr._ids(tr.encode(line)) for line in LINES]          # input order: not sorted by length
    cons = [tr.constraint_ids(p) for p in phrases]
    ds = tr.task.build_dataset_for_inference(tokens, [len(t) for t in tokens], constraints=pack_constraints(cons))
    sample = ds.collater([ds[j] for j in range(len(ds))])
    order = sample["id"].tolist()
    assert order != list(range(len(LINES)))                         # the collater did reorder
    for row, sid in enumerate(order):
        got = unpack_constraints(sample["constraints"][row])
        assert [c.tolist() for c in got] == [c.tolist() for c in cons[sid]]
    gen = tr.task.build_generator([tr.model], __import__("argparse").Namespace(
        beam=4, max_len_a=1.2, max_len_b=10, nbest=1, constraints="unordered"))
    with torch.no_grad():
        hyps = tr.task.inference_step(gen, [tr.model], sample, constraints=sample["constraints"])
    for row, sid in enumerate(order):
        out = tr.decode_ids(hyps[row][0]["tokens"])
        for k, words in enumerate(WANTED):
            assert all(has_word(out, w) == (k == sid) for w in words), (sid, out)


@pytest.mark.parametrize("batch_size", [1, 2, 4])
def test_translate_with_table_constraints(baseline, batch_size):
    from mwemt.nmt.translate import Translator

    tr = Translator.load(baseline)
    plain = tr.translate(LINES, beam=4, batch_size=batch_size)
    assert not any(has_word(h, w) for h in plain for ws in WANTED for w in ws)   # the model alone never says them
    for order in ("unordered", "ordered"):
        hyps = tr.translate(LINES, beam=4, batch_size=batch_size, constraint_order=order,
                            constraints=tr.table_constraints(LINES, constraint_table()))
        for i, hyp in enumerate(hyps):
            for k, words in enumerate(WANTED):
                assert all(has_word(hyp, w) == (k == i) for w in words), (order, i, hyp)
    # a line without constraints is decoded apart, by plain beam search: as if it were translated alone
    assert hyps[3] == tr.translate(LINES[3:], beam=4)[0]


@pytest.mark.parametrize("batch_size", [1, 3])
def test_constraints_longer_than_the_length_limit(baseline, batch_size):
    """The constrained search cannot end a hypothesis before its constraints are met; fairseq stopped with
    `AssertionError: 26 < 26` (cpu-science-2, on a dictionary example) when the output's length limit
    (max_len_a * source + max_len_b) came first. The limit now grows by the constraints' length."""
    from mwemt.nmt.translate import Translator

    tr = Translator.load(baseline)
    long_phrase = ("giardino libri soldi giardino libri soldi giardino libri".split(),)
    lines = ["It rains .", "The dog sleeps in the garden .", "Hello ."]
    cons = [[long_phrase[0]], [], [long_phrase[0][:3]]]
    hyps = tr.translate(lines, beam=2, batch_size=batch_size, max_len_a=0.0, max_len_b=2, constraints=cons)
    assert " ".join(long_phrase[0]) in hyps[0].lower()
    assert "giardino libri soldi" in hyps[2].lower()
    assert tr.unconstrained_lines == []


def test_translate_cli_constraints_and_errors(baseline, tmp_path, capsys):
    from mwemt.cli import main

    table = tmp_path / "table.jsonl"
    constraint_table().write(table)
    src = tmp_path / "in.en"
    src.write_text("".join(line + "\n" for line in LINES), encoding="utf-8")
    out = tmp_path / "out.it"
    assert main(["translate", "-m", str(baseline), "-i", str(src), "-o", str(out), "--beam", "3", "-q",
                 "--constraints", str(table), "--constraint-min-count", "2"]) == 0
    hyps = out.read_text(encoding="utf-8").splitlines()
    assert has_word(hyps[0], "soldi") and has_word(hyps[1], "libri") and not has_word(hyps[2], "cane")
    assert main(["translate", "-m", str(baseline), "-i", str(src), "--constraints", str(table), "--sampling",
                 "-q"]) == 2
    assert "cannot be combined with sampling" in capsys.readouterr().err
    table.write_text('{"format": "something else"}\n', encoding="utf-8")
    assert main(["translate", "-m", str(baseline), "-i", str(src), "--constraints", str(table), "-q"]) == 2
    assert f"{table}:1: not an MWE translation table header" in capsys.readouterr().err


def test_factored_batches_carry_constraints_in_their_sort_order(tmp_path):
    import torch
    from fairseq.token_generation_constraints import pack_constraints, unpack_constraints

    from mwemt.nmt.prepare import prepare

    pair = write_pair(tmp_path, "train", SRC3, TGT)
    prepare({"train": pair}, tmp_path / "bin", src_lang="en", tgt_lang="it", progress=False)
    task, _ = setup(tmp_path / "bin", "--arch", "factored_transformer_tiny")
    rows = [[tok.split("|") for tok in line.split()] for line in SRC3]
    tensors = [torch.tensor([[d.index(r[k]) for k, d in enumerate(task.factor_dicts)] for r in sent]
                            + [[d.eos() for d in task.factor_dicts]]) for sent in rows]
    cons = [[torch.tensor([5, 6])], [], [torch.tensor([7]), torch.tensor([8, 9, 10])], [torch.tensor([11])]]
    ds = task.build_dataset_for_inference(tensors, [len(t) for t in tensors], constraints=pack_constraints(cons))
    batch = ds.collater([ds[j] for j in range(len(ds))])
    assert batch["net_input"]["src_tokens"].dim() == 3
    assert batch["id"].tolist() != list(range(len(SRC3)))
    for row, sid in enumerate(batch["id"].tolist()):
        assert [c.tolist() for c in unpack_constraints(batch["constraints"][row])] == [c.tolist() for c in cons[sid]]
        words = batch["net_input"]["src_tokens"][row, :, 0]
        assert words[words.ne(task.source_dictionary.pad())].tolist() == tensors[sid][:, 0].tolist()


# ---------------------------------------------------------------- the weighted loss in the pipeline

LEXICON_RE = (r"\bby the way\b|\bivory tower\b|\b(take|takes|took|taking|taken) care of\b|"
              r"\b(think|thinks|thought|thinking) about\b")


def expected_flags(pattern: str) -> list[int]:
    import re

    lines = (NMT / "train.en").read_text(encoding="utf-8").splitlines()
    return [1 if re.search(pattern, line.lower()) else 0 for line in lines]


def test_weighted_system_trains_on_flags_of_the_lexicon_mwes(tmp_path):
    import json

    import numpy as np

    from mwemt.experiments.experiment import train_system
    from tests.test_nmt_train import tiny_config

    model = train_system(tiny_config("none", mwe_loss_weight=3.0), "none", tmp_path / "w", progress=False)
    flags_files = list((tmp_path / "w" / "stages" / "prepare").rglob("train.en-it.mweflags.npy"))
    assert len(flags_files) == 1
    flags = np.load(flags_files[0]).tolist()
    want = expected_flags(LEXICON_RE)
    assert flags == want and 0 < sum(want) < len(want)
    log = (model / "train.log").read_text(encoding="utf-8")
    assert "--criterion mwe_weighted_label_smoothed_cross_entropy" in log and "--mwe-loss-weight 3.0" in log
    summary = json.loads(next((tmp_path / "w" / "stages" / "mweflags").rglob("mwe_flags.json")).read_text())
    assert summary["flagged"] == sum(want) and summary["sentences"] == len(want)


def test_idiomatic_flags_use_the_compositionality_threshold(tmp_path):
    import numpy as np

    from mwemt.experiments.experiment import prepare_system
    from tests.test_nmt_train import tiny_config

    comp = tmp_path / "comp.tsv"
    comp.write_text("mwe\tcompositionality\nivory tower\t0.1\ntake care of\t0.3\nby the way\t0.9\n"
                    "think about\t0.8\n", encoding="utf-8")
    cfg = tiny_config("none", mwe_loss_weight=2.0, mwe_loss_sentences="idiomatic", mwe_loss_compositionality=str(comp),
                      mwe_loss_idiomatic_below=0.5)
    job, data_bin, _ = prepare_system(cfg, "none", tmp_path / "w", progress=False)
    assert job.train.mwe_loss_compositionality is None      # a file of the flags stage, not a training setting
    flags = np.load(data_bin / "train.en-it.mweflags.npy").tolist()
    assert flags == expected_flags(r"\bivory tower\b|\b(take|takes|took|taking|taken) care of\b")


def test_weighted_loss_config_errors(tmp_path):
    from mwemt.experiments.config import config_from_data
    from mwemt.schema import ConfigError
    from tests.test_nmt_train import tiny_config

    with pytest.raises(ConfigError, match="`idiomatic` needs train.mwe_loss_compositionality"):
        tiny_config("none", mwe_loss_weight=2.0, mwe_loss_sentences="idiomatic")
    with pytest.raises(ConfigError, match="mwe_loss_weight: must be more than 0"):
        tiny_config("none", mwe_loss_weight=0.0)
    data = {"data": {"train": str(NMT / "train"), "valid": str(NMT / "valid")},
            "systems": {"baseline": {}, "weighted": {"train": {"mwe_loss_weight": 2.0}}}}
    with pytest.raises(ConfigError, match="mwe_loss_weight needs data.lexicon"):
        config_from_data(data)


# ---------------------------------------------------------------- training to convergence

def test_the_summary_says_whether_training_converged_and_where_the_best_checkpoint_is():
    from mwemt.nmt.config import TrainConfig
    from mwemt.nmt.train import best_validation, converged

    history = [{"epoch": e, "updates": 68 * e, "valid_loss": v, "valid_bleu": None}
               for e, v in enumerate([6.1, 5.2, 4.9, 4.95, 4.9, 5.0, 5.1], 1)]
    best = best_validation(TrainConfig(early_stop="loss"), history)
    assert best == {"epoch": 5, "updates": 340, "valid_loss": 4.9, "validations_after": 2}
    assert best_validation(TrainConfig(early_stop="bleu"), history) is None
    assert converged("early stop since valid performance hasn't improved for last 3 runs")
    assert not converged("max_epoch reached")
    assert not converged("Stopping training due to num_updates: 4 >= max_update: 4")


def test_budget_in_epochs_and_patience_reach_fairseq(tmp_path):
    from mwemt.nmt.config import ModelConfig, TrainConfig, with_preset
    from mwemt.nmt.train import FairseqJob, fairseq_train_args

    model, train = with_preset(ModelConfig(preset="small"), TrainConfig(max_epoch=25, max_update=0, patience=3,
                                                                        early_stop="loss", mwe_loss_weight=2.0))
    args = fairseq_train_args(FairseqJob(model, train, "en", "it", 1, 1), tmp_path, tmp_path / "ckpt")
    assert args[args.index("--max-epoch") + 1] == "25" and "--max-update" not in args
    assert args[args.index("--patience") + 1] == "3" and "--eval-bleu" not in args
    assert args[args.index("--criterion") + 1] == "mwe_weighted_label_smoothed_cross_entropy"
    assert args[args.index("--mwe-loss-weight") + 1] == "2.0"


def test_constraint_pieces_come_from_the_target_dictionary(baseline):
    from mwemt.nmt.translate import Translator

    tr = Translator.load(baseline)
    d = tr.tgt_dict
    ids = tr.constraint_ids([("il", "cane")])[0].tolist()
    assert [d[i] for i in ids] == tr.tgt_subword.encode_tokens(["il", "cane"])     # the target subword model's
    assert d.eos() not in ids
    # greedy longest match over the dictionary when a piece is missing from it; <unk> is never forced
    text = "".join(tr.tgt_subword.encode_tokens(["cane", "il"]))
    whole = tr._dictionary_pieces(text)
    assert "".join(d[i] for i in whole) == text and d.unk() not in whole
    assert tr._dictionary_pieces("▁жж") == [d.unk()]
    assert tr.constraint_ids([("жж",), ("cane",)])[0].tolist() == tr.constraint_ids([("cane",)])[0].tolist()
    assert len(tr.constraint_ids([("жж",)])) == 0


def test_constrained_decoding_config_needs_a_table_and_counts_its_stage():
    from mwemt.experiments.config import config_from_data
    from mwemt.experiments.experiment import count_stages
    from mwemt.schema import ConfigError

    data = {"data": {"train": str(NMT / "train"), "valid": str(NMT / "valid")},
            "systems": {"baseline": {}, "constrained": {"model_of": "baseline",
                                                        "translate": {"constraints": "unordered"}}}}
    with pytest.raises(ConfigError, match="constrained decoding needs an MWE translation table"):
        config_from_data(data)
    data["data"].update(lexicon=str(NMT / "lexicon.txt"), lexicon_format="list")
    cfg = config_from_data(data)
    assert cfg.systems["constrained"].translate.constraints == "unordered"
    assert cfg.systems["constrained"].translate.constraint_sources == ("aligned", "dictionary")
    plain = config_from_data({**data, "systems": {"baseline": {}, "again": {"model_of": "baseline"}}})
    assert count_stages(cfg, list(cfg.systems)) == count_stages(plain, list(plain.systems)) + 1   # the table
    with pytest.raises(ConfigError, match="constraints"):
        config_from_data({**data, "systems": {"baseline": {"translate": {"constraints": "sometimes"}}}})
