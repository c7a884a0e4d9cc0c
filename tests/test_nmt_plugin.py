"""The fairseq plugin without training: factor dims, embeddings, batching, alignment checks, models."""

from __future__ import annotations

import pytest

from tests.conftest import requires_nmt

pytestmark = [requires_nmt, pytest.mark.nmt]

SRC3 = [
    "▁the|the|O ▁cat|cat|O ▁took|take_care_of|B ▁care|take_care_of|I ▁of|take_care_of|I ▁me|me|O",
    "▁a|a|O ▁dog|dog|O",
    "▁by|by_the_way|B ▁the|by_the_way|I ▁way|by_the_way|I ▁,|,|O ▁hi|hi|O",
    "▁the|the|O ▁ivory|ivory_tower|B ▁tower|ivory_tower|I",
]
TGT = ["▁il ▁gatto ▁si ▁è ▁preso ▁cura ▁di ▁me", "▁un ▁cane", "▁a ▁proposito , ▁ciao", "▁la ▁torre"]


def write_pair(tmp_path, name, src_lines, tgt_lines):
    (tmp_path / f"{name}.en").write_text("".join(s + "\n" for s in src_lines), encoding="utf-8")
    (tmp_path / f"{name}.it").write_text("".join(t + "\n" for t in tgt_lines), encoding="utf-8")
    return str(tmp_path / f"{name}.en"), str(tmp_path / f"{name}.it")


@pytest.fixture
def data3(tmp_path):
    from mwemt.nmt.prepare import prepare

    pair = write_pair(tmp_path, "train", SRC3, TGT)
    prepare({"train": pair, "valid": pair}, tmp_path / "bin", src_lang="en", tgt_lang="it", progress=False)
    return tmp_path / "bin"


@pytest.fixture
def data1(tmp_path):
    from mwemt.nmt.prepare import prepare

    words = [" ".join(t.split("|")[0] for t in s.split()) for s in SRC3]
    pair = write_pair(tmp_path, "plain", words, TGT)
    prepare({"train": pair, "valid": pair}, tmp_path / "bin1", src_lang="en", tgt_lang="it", progress=False)
    return tmp_path / "bin1"


def setup(data_dir, *extra):
    """Task and model built the way fairseq-train builds them, from a command line."""
    from fairseq import options, tasks
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    import mwemt.nmt.fairseq_plugin  # noqa: F401
    from mwemt.nmt.train import PLUGIN_DIR

    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, [str(data_dir), "--user-dir", str(PLUGIN_DIR), "--task",
                                                "factored_translation", "--cpu", *extra])
    cfg = convert_namespace_to_omegaconf(args)
    task = tasks.setup_task(cfg.task)
    return task, cfg


# ---------------------------------------------------------------- dims and embeddings

def test_factor_dims_defaults_and_checks():
    from mwemt.errors import MwemtError
    from mwemt.nmt.fairseq_plugin.models import factor_dims

    assert factor_dims("concat", None, 3, 64) == [48, 8, 8]
    assert factor_dims("concat", None, 1, 64) == [64]
    assert factor_dims("concat", "56,4,4", 3, 64) == [56, 4, 4]
    assert factor_dims("sum", None, 3, 64) == [64, 64, 64]
    with pytest.raises(MwemtError, match="sums to 72 but the encoder embedding size is 64"):
        factor_dims("concat", "56,8,8", 3, 64)
    with pytest.raises(MwemtError, match="gives 2 size"):
        factor_dims("concat", "56,8", 3, 64, ["word", "lemma", "tag"])
    with pytest.raises(MwemtError, match="sum needs every factor embedding to be 64"):
        factor_dims("sum", "64,8,8", 3, 64)


def test_factored_embedding_concat_and_sum():
    import torch
    from torch import nn

    from mwemt.nmt.fairseq_plugin.models import FactoredEmbedding

    tables = [nn.Embedding(10, 6, padding_idx=1), nn.Embedding(5, 2, padding_idx=1)]
    emb = FactoredEmbedding(tables, "concat")
    x = torch.tensor([[[2, 3], [4, 1]]])
    out = emb(x)
    assert out.shape == (1, 2, 8)
    assert torch.equal(out[0, 0, :6], tables[0].weight[2]) and torch.equal(out[0, 0, 6:], tables[1].weight[3])
    s = FactoredEmbedding([nn.Embedding(10, 4), nn.Embedding(5, 4)], "sum")
    assert torch.allclose(s(x)[0, 1], s.tables[0].weight[4] + s.tables[1].weight[1])


def test_right_align_moves_left_padding_of_every_factor():
    import torch

    from mwemt.nmt.fairseq_plugin.models import right_align

    pad = 1
    x = torch.tensor([[[1, 1], [1, 1], [5, 6], [2, 2]], [[7, 8], [9, 9], [5, 6], [2, 2]]])
    y = right_align(x, pad)
    assert y[0].tolist() == [[5, 6], [2, 2], [1, 1], [1, 1]]
    assert torch.equal(y[1], x[1])


# ---------------------------------------------------------------- task and batching

def test_task_counts_factors_and_batches_them_like_words(data3):
    import torch
    from fairseq.data.language_pair_dataset import collate

    task, _ = setup(data3, "--arch", "factored_transformer_tiny")
    assert task.n_factors == 3 and task.factor_names == ["word", "lemma", "tag"]
    task.load_dataset("train")
    ds = task.dataset("train")
    samples = [ds[i] for i in range(len(ds))]
    assert samples[0]["source"].shape == (7, 3)          # 6 tokens + EOS, 3 factors
    batch = ds.collater(samples)
    src = batch["net_input"]["src_tokens"]
    assert src.shape == (4, 7, 3)
    # the word column is exactly what the stock collater makes of the word stream
    stock = collate([dict(s, source=s["source"][:, 0]) for s in samples], 1, 2, left_pad_source=True)
    assert torch.equal(src[..., 0], stock["net_input"]["src_tokens"])
    assert torch.equal(batch["id"], stock["id"])
    # every factor is padded in the same slots (left padding) and ends with EOS where the words do
    pad = task.src_dict.pad()
    for k in range(3):
        assert torch.equal(src[..., k].eq(pad), src[..., 0].eq(pad))
        assert torch.equal(src[:, -1, k], torch.full((4,), task.factor_dicts[k].eos()))
    # the row of sentence 1 (2 tokens) holds its own factors
    row = batch["id"].tolist().index(1)
    tag = task.factor_dicts[2]
    assert [tag[i] for i in src[row, -3:-1, 2].tolist()] == ["O", "O"]


def test_misaligned_factor_stream_names_split_and_sentence(data3):
    """fairseq-preprocess never compares streams; the task must."""
    import torch
    from fairseq.data import indexed_dataset

    from mwemt.errors import MwemtError

    task, _ = setup(data3, "--arch", "factored_transformer_tiny")
    d = task.factor_dicts[1]
    prefix = str(data3 / "valid.en-it.en.factor1")
    b = indexed_dataset.make_builder(prefix + ".bin", "mmap", vocab_size=len(d))
    for k, line in enumerate(SRC3):
        lemmas = [t.split("|")[1] for t in line.split()]
        if k == 2:
            lemmas = lemmas[:-1]                        # one factor short on sentence id 2
        b.add_item(torch.IntTensor([d.index(x) for x in lemmas] + [d.eos()]))
    b.finalize(prefix + ".idx")
    with pytest.raises(MwemtError, match=r"split 'valid': sentence id 2 \(line 3\) has 6 word tokens but 5 'lemma'"):
        task.load_dataset("valid")


def test_one_factor_task_is_the_stock_dataset(data1):
    from fairseq.data import LanguagePairDataset

    task, _ = setup(data1, "--arch", "factored_transformer_tiny")
    task.load_dataset("train")
    assert task.n_factors == 1 and type(task.dataset("train")) is LanguagePairDataset


# ---------------------------------------------------------------- models

def test_one_factor_model_is_the_baseline_transformer(data1):
    """Same parameters, same outputs: the comparison with the baseline is fair."""
    import torch
    from fairseq import tasks
    from fairseq.models.transformer import TransformerModel

    task, cfg = setup(data1, "--arch", "factored_transformer_tiny", "--dropout", "0")
    factored = task.build_model(cfg.model)
    _, base_cfg = setup(data1, "--arch", "transformer_tiny", "--dropout", "0", "--encoder-ffn-embed-dim", "256")
    base_task = tasks.setup_task(base_cfg.task)
    baseline = base_task.build_model(base_cfg.model)
    assert isinstance(baseline, TransformerModel)
    baseline.load_state_dict(factored.state_dict(), strict=True)
    task.load_dataset("train")
    ds = task.dataset("train")
    batch = ds.collater([ds[i] for i in range(len(ds))])
    factored.eval()
    baseline.eval()
    with torch.no_grad():
        a = factored(**batch["net_input"])[0]
        b = baseline(**batch["net_input"])[0]
    assert torch.equal(a, b)


@pytest.mark.parametrize("arch,combine", [("factored_transformer_tiny", "concat"),
                                          ("factored_transformer_tiny", "sum"),
                                          ("factored_lstm", "concat")])
def test_factored_models_run_forward_and_generate(data3, arch, combine):
    from argparse import Namespace

    extra = ["--encoder-embed-dim", "32", "--decoder-embed-dim", "32"]
    if arch == "factored_lstm":
        extra += ["--encoder-hidden-size", "16", "--decoder-hidden-size", "32", "--decoder-out-embed-dim", "32"]
    task, cfg = setup(data3, "--arch", arch, "--factor-combine", combine, *extra)
    model = task.build_model(cfg.model)
    task.load_dataset("train")
    ds = task.dataset("train")
    batch = ds.collater([ds[i] for i in range(len(ds))])
    out = model(**batch["net_input"])[0]
    assert out.shape[:2] == batch["target"].shape
    model.eval()
    gen = task.build_generator([model], Namespace(beam=2, max_len_a=0, max_len_b=6))
    hyps = task.inference_step(gen, [model], batch)
    assert len(hyps) == 4 and all(h[0]["tokens"].dim() == 1 for h in hyps)


def test_concat_dims_must_sum_to_embed_dim(data3):
    from mwemt.errors import MwemtError

    task, cfg = setup(data3, "--arch", "factored_transformer_tiny", "--factor-combine", "concat",
                      "--factor-embed-dims", "40,8,8")
    with pytest.raises(MwemtError, match="sums to 56 but the encoder embedding size is 64"):
        task.build_model(cfg.model)


def test_factored_model_refuses_unfactored_input(data3):
    import torch

    from mwemt.errors import MwemtError

    task, cfg = setup(data3, "--arch", "factored_transformer_tiny")
    model = task.build_model(cfg.model)
    with pytest.raises(MwemtError, match="3 source factors"):
        model.encoder(torch.tensor([[4, 5, 2]]), torch.tensor([3]))


def test_batches_keep_every_sentence(data3):
    """fairseq-fixed drops up to 7 long sentences with a batch multiple of 8; the task forces 1."""
    task, _ = setup(data3, "--arch", "factored_transformer_tiny")
    task.load_dataset("valid")
    itr = task.get_batch_iterator(task.dataset("valid"), max_sentences=3, required_batch_size_multiple=8)
    ids = sorted(i for b in itr.next_epoch_itr(shuffle=False) for i in b["id"].tolist())
    assert ids == [0, 1, 2, 3]


# ---------------------------------------------------------------- prepare

def test_prepare_errors_name_file_and_line(tmp_path):
    from mwemt.errors import InputError
    from mwemt.nmt.prepare import prepare

    bad = list(SRC3)
    bad[1] = "▁a|a ▁dog|dog|O"
    pair = write_pair(tmp_path, "bad", bad, TGT)
    with pytest.raises(InputError, match=r"bad\.en:2: token 1 '▁a\|a' has 2 factors"):
        prepare({"train": pair}, tmp_path / "out", src_lang="en", tgt_lang="it", progress=False)
    pair = write_pair(tmp_path, "short", SRC3, TGT[:3])
    with pytest.raises(InputError, match="misaligned"):
        prepare({"train": pair}, tmp_path / "out", src_lang="en", tgt_lang="it", progress=False)
    assert not (tmp_path / "out").exists()


def test_prepare_joined_and_separate_dictionaries(tmp_path):
    from mwemt.nmt.prepare import prepare

    pair = write_pair(tmp_path, "train", SRC3, TGT)
    m = prepare({"train": pair}, tmp_path / "j", src_lang="en", tgt_lang="it", joined=True, progress=False)
    assert (tmp_path / "j" / "dict.en.txt").read_text() == (tmp_path / "j" / "dict.it.txt").read_text()
    assert m["config"]["factors"] == 3 and m["splits"]["train"]["sentences"] == 4
    prepare({"train": pair}, tmp_path / "s", src_lang="en", tgt_lang="it", joined=False, progress=False)
    assert "▁cura" not in (tmp_path / "s" / "dict.en.txt").read_text()
    assert "▁cura" in (tmp_path / "s" / "dict.it.txt").read_text()


def test_sum_combine_can_share_all_embeddings(data3):
    """With sum, the word table keeps the full size and is the decoder's embedding too."""
    task, cfg = setup(data3, "--arch", "factored_transformer_tiny", "--factor-combine", "sum",
                      "--share-all-embeddings")
    model = task.build_model(cfg.model)
    assert model.encoder.embed_tokens.tables[0] is model.decoder.embed_tokens
    task2, cfg2 = setup(data3, "--arch", "factored_transformer_tiny", "--factor-combine", "concat",
                        "--share-all-embeddings")
    from mwemt.errors import MwemtError

    with pytest.raises(MwemtError, match="share-all-embeddings needs the word factor to keep the full"):
        task2.build_model(cfg2.model)
