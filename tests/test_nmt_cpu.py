"""CPU training settings: CPU detection, precision choice, the fused loss, bf16 autocast in the task."""

from __future__ import annotations

import pytest

from mwemt.nmt.cpu import CpuInfo, cpu_info, describe, resolve_precision
from tests.conftest import requires_nmt
from tests.test_nmt_plugin import data3, setup  # noqa: F401  (fixture)

AMX = CpuInfo("Sapphire", frozenset({"avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile"}), 2)
AVX2 = CpuInfo("Old", frozenset({"avx2", "fma"}), 4)


def test_cpu_info_reads_model_and_flags(tmp_path):
    p = tmp_path / "cpuinfo"
    p.write_text("processor\t: 0\nmodel name\t: Test CPU 9000\nflags\t\t: fpu avx2 avx512_bf16\n\n"
                 "processor\t: 1\nmodel name\t: Test CPU 9000\nflags\t\t: fpu avx2 avx512_bf16\n", encoding="utf-8")
    info = cpu_info.__wrapped__(p)
    assert info.model == "Test CPU 9000" and info.native_bf16 and "fpu" in info.flags
    line = describe(info)
    assert "Test CPU 9000" in line and "avx512_bf16=yes" in line and "amx_bf16=no" in line


def test_precision_auto_follows_the_cpu():
    assert resolve_precision("auto", "cpu", AMX)[0] == "bf16"
    precision, why = resolve_precision("auto", "cpu", AVX2)
    assert precision == "fp32" and "no avx512_bf16/amx_bf16" in why
    assert resolve_precision("fp32", "cpu", AMX)[0] == "fp32"
    precision, why = resolve_precision("bf16", "cpu", AVX2)
    assert precision == "bf16" and "emulated" in why
    assert resolve_precision("auto", "cuda", AMX)[0] == "fp32"
    with pytest.raises(ValueError):
        resolve_precision("fp16", "cpu", AMX)


def test_config_checks_precision_and_knows_the_small_preset(tmp_path):
    from mwemt.experiments.config import config_from_data
    from mwemt.schema import ConfigError

    (tmp_path / "c.en").write_text("a\n", encoding="utf-8")
    (tmp_path / "c.it").write_text("b\n", encoding="utf-8")
    base = {"data": {"train": "c", "valid": "c"}, "model": {"preset": "small"}, "systems": {"b": {}}}
    system = config_from_data(base, base_dir=tmp_path).systems["b"]
    assert system.train.precision == "auto" and system.model.arch == "factored_transformer_small"
    assert (system.train.lr, system.train.warmup_updates) == (1e-3, 300)
    with pytest.raises(ConfigError, match=r"train\.precision.*half"):
        config_from_data({**base, "train": {"precision": "half"}}, base_dir=tmp_path)


def train_job(**train):
    from mwemt.nmt.config import ModelConfig, TrainConfig, with_preset
    from mwemt.nmt.train import FairseqJob

    return FairseqJob(*with_preset(ModelConfig(), TrainConfig(**train)), "en", "it", factors=1, seed=1)


@requires_nmt
def test_train_args_use_fused_loss_and_autocast_only_for_bf16(tmp_path):
    from mwemt.nmt.train import fairseq_train_args

    for precision, expected in (("fp32", False), ("bf16", True)):
        args = fairseq_train_args(train_job(precision=precision), tmp_path, tmp_path, "cpu")
        assert args[args.index("--criterion") + 1] == "label_smoothed_cross_entropy_fused"
        assert ("--autocast-bf16" in args) is expected


@requires_nmt
@pytest.mark.parametrize("dtype", ["float64", "bfloat16"])
def test_fused_loss_equals_fairseq_label_smoothing(dtype):
    import torch
    from fairseq.criterions.label_smoothed_cross_entropy import label_smoothed_nll_loss

    from mwemt.nmt.fairseq_plugin.criterion import label_smoothed_nll

    torch.manual_seed(0)
    logits = torch.randn(40, 97, dtype=torch.float64) * 3
    target = torch.randint(0, 97, (40,))
    x = logits.to(getattr(torch, dtype))
    ref_in = x.detach().double().clone().requires_grad_()
    loss, nll = label_smoothed_nll_loss(torch.log_softmax(ref_in, -1), target, 0.1)
    (loss + 0.5 * nll).backward()
    ours_in = x.detach().clone().requires_grad_()
    loss2, nll2 = label_smoothed_nll(ours_in, target, 0.1)
    (loss2 + 0.5 * nll2).backward()
    tol = 1e-9 if dtype == "float64" else 1e-4
    assert abs(loss.item() - loss2.item()) <= tol * abs(loss.item())
    assert abs(nll.item() - nll2.item()) <= tol * abs(nll.item())
    assert ours_in.grad.dtype == ours_in.dtype
    assert torch.allclose(ours_in.grad.double(), ref_in.grad, atol=1e-9 if dtype == "float64" else 1e-2)


def tiny_model(data_dir, *extra):
    """Task, tiny model, fused criterion and one batch of the whole training split."""
    task, cfg = setup(data_dir, "--arch", "factored_transformer_tiny", "--encoder-embed-dim", "32",
                      "--decoder-embed-dim", "32", "--criterion", "label_smoothed_cross_entropy_fused",
                      "--label-smoothing", "0.1", *extra)
    task.load_dataset("train")
    ds = task.dataset("train")
    return (task, task.build_model(cfg.model), task.build_criterion(cfg.criterion),
            ds.collater([ds[i] for i in range(len(ds))]))


@requires_nmt
def test_fused_criterion_matches_stock_criterion_on_a_model(data3):  # noqa: F811
    import torch

    task, model, fused, batch = tiny_model(data3, "--share-decoder-input-output-embed")
    model.eval()                                   # no dropout: both passes see the same network
    from fairseq.criterions.label_smoothed_cross_entropy import LabelSmoothedCrossEntropyCriterion

    stock = LabelSmoothedCrossEntropyCriterion(task, False, 0.1)
    grads = []
    for crit in (stock, fused):
        model.zero_grad()
        loss, size, out = crit(model, batch)
        loss.backward()
        grads.append((loss.item(), float(out["nll_loss"]), size,
                      [p.grad.clone() for p in model.parameters() if p.grad is not None]))
    (l1, n1, s1, g1), (l2, n2, s2, g2) = grads
    assert s1 == s2 and l1 == pytest.approx(l2, rel=1e-5) and n1 == pytest.approx(n2, rel=1e-5)
    assert len(g1) == len(g2) and all(torch.allclose(a, b, atol=1e-5) for a, b in zip(g1, g2))


@requires_nmt
def test_autocast_bf16_trains_in_bf16_with_fp32_weights(data3):  # noqa: F811
    import torch
    from fairseq.modules.multihead_attention import MultiheadAttention

    task, model, crit, batch = tiny_model(data3, "--autocast-bf16")
    assert all(m.skip_embed_dim_check for m in model.modules() if isinstance(m, MultiheadAttention))
    seen = []
    hook = model.decoder.output_projection.register_forward_hook(lambda m, i, o: seen.append(o.dtype))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    class Backward:                                # the one optimizer method train_step calls
        def backward(self, loss):
            loss.backward()

    loss, _, _ = task.train_step(batch, model, crit, Backward(), 0)
    hook.remove()
    assert seen == [torch.bfloat16]
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert all(p.grad is None or p.grad.dtype == torch.float32 for p in model.parameters())
    assert torch.isfinite(loss)
    opt.step()
