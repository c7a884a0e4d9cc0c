"""`label_smoothed_cross_entropy_fused`: fairseq's label-smoothed loss, computed the cheap way on CPU.

Why: with a small model most of a CPU training step is spent on the ``(target tokens x vocabulary)``
tensors of the output layer, not in the transformer. fairseq's criterion materializes log-softmax over
every (also padded) target position, gathers from it, and its backward pass allocates a zero tensor of
that size to scatter the gather's gradient into and adds it to the sum's gradient: four full passes over
a 60 MB tensor per step for a 128-dim model with an 8k vocabulary. This criterion computes the same loss:

- logits only for non-padding target positions (the decoder features are selected first);
- one log-softmax, kept for the backward pass, which turns it into the gradient in closed form
  (``c1 * softmax - c2 * onehot - c3``) in place: no zero tensor, scatter or sum of gradients.

The values are fairseq's ``label_smoothed_nll_loss`` (a test compares loss and gradients), so the
training curve, logs and checkpoints are those of ``label_smoothed_cross_entropy``; the logits are
cast to fp32 for the loss under bf16 autocast as fairseq's own log-softmax does. Models whose output
layer is not a plain projection (adaptive softmax) and ``--ignore-prefix-size`` use the stock code.

`mwe_weighted_label_smoothed_cross_entropy` is the same loss with a weight per training sentence
(`MweWeightedCriterion`: the MWE-weighted loss of Liu et al. 2023).
"""

# no `from __future__ import annotations`: fairseq reads the config dataclass field types at run time
from dataclasses import dataclass, field

import torch
from fairseq.criterions import register_criterion
from fairseq.criterions.label_smoothed_cross_entropy import (
    LabelSmoothedCrossEntropyCriterion,
    LabelSmoothedCrossEntropyCriterionConfig,
)

from mwemt.errors import MwemtError


class LabelSmoothedNLL(torch.autograd.Function):
    """``(loss, nll)`` summed over rows of ``logits`` (N, V) for targets (N,), with fairseq's smoothing.

    The forward pass keeps only the log-probabilities (one fp32 tensor); the backward pass turns
    them into the gradient in place: ``c1 * softmax - c2 * onehot - c3``. So the graph can be
    differentiated once (as training does); ``retain_graph`` for a second backward is refused by
    autograd's in-place check.
    """

    @staticmethod
    def forward(ctx, logits, target, epsilon, row_weight=None):
        vocab = logits.size(-1)
        eps_i = epsilon / (vocab - 1)
        wide = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
        lprobs = torch.log_softmax(wide, dim=-1)
        if row_weight is None:
            nll = -lprobs.gather(-1, target.unsqueeze(-1)).sum()
            smooth = -lprobs.sum()
            loss = (1.0 - epsilon - eps_i) * nll + eps_i * smooth
        else:   # each row's loss times its weight; the NLL stays unweighted (perplexity as usual)
            nll_rows = -lprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
            smooth_rows = -lprobs.sum(-1)
            w = row_weight.to(lprobs.dtype)
            loss = (((1.0 - epsilon - eps_i) * nll_rows + eps_i * smooth_rows) * w).sum()
            nll = nll_rows.sum()
        ctx.save_for_backward(lprobs, target, *(() if row_weight is None else (row_weight.to(lprobs.dtype),)))
        ctx.epsilon, ctx.dtype = epsilon, logits.dtype
        return loss, nll

    @staticmethod
    def backward(ctx, grad_loss, grad_nll):
        lprobs, target, *weight = ctx.saved_tensors
        vocab = lprobs.size(-1)
        eps = ctx.epsilon
        eps_i = eps / (vocab - 1)
        zero = torch.zeros((), dtype=lprobs.dtype)
        g_loss = zero if grad_loss is None else grad_loss
        g_nll = zero if grad_nll is None else grad_nll
        if weight:                     # a weighted row's loss gradient is scaled by its weight
            g_loss = g_loss * weight[0].unsqueeze(-1)
        # d nll / dz = p - onehot;  d smooth / dz = V p - 1
        on_target = g_loss * (1.0 - eps - eps_i) + g_nll
        grad = lprobs.exp_()          # the saved log-probabilities are not needed again
        grad.mul_(on_target + g_loss * eps_i * vocab).sub_(g_loss * eps_i)
        grad.scatter_add_(-1, target.unsqueeze(-1), (-on_target).expand(target.size(0), 1))
        return grad.to(ctx.dtype), None, None, None


def label_smoothed_nll(logits: torch.Tensor, target: torch.Tensor, epsilon: float,
                       row_weight: torch.Tensor | None = None):
    """The summed label-smoothed loss and NLL of rows of logits; see `LabelSmoothedNLL`.

    ``row_weight`` (N,): each row's loss is multiplied by its weight (the NLL is not)."""
    return LabelSmoothedNLL.apply(logits, target, epsilon, row_weight)


@register_criterion("label_smoothed_cross_entropy_fused", dataclass=LabelSmoothedCrossEntropyCriterionConfig)
class FusedLabelSmoothedCrossEntropyCriterion(LabelSmoothedCrossEntropyCriterion):
    """fairseq's ``label_smoothed_cross_entropy`` without the vocabulary-sized intermediate tensors."""

    def forward(self, model, sample, reduce=True):
        decoder = getattr(model, "decoder", None)
        if (not reduce or self.ignore_prefix_size > 0 or self.report_accuracy or decoder is None
                or getattr(decoder, "adaptive_softmax", None) is not None):
            return super().forward(model, sample, reduce=reduce)
        features, _ = model.extract_features(**sample["net_input"])
        target = model.get_targets(sample, None)
        keep = target.ne(self.padding_idx)
        logits = model.output_layer(features[keep])
        loss, nll_loss = label_smoothed_nll(logits, target[keep], self.eps)
        sample_size = sample["target"].size(0) if self.sentence_avg else sample["ntokens"]
        logging_output = {"loss": loss.data, "nll_loss": nll_loss.data, "ntokens": sample["ntokens"],
                          "nsentences": sample["target"].size(0), "sample_size": sample_size}
        return loss, sample_size, logging_output


@dataclass
class MweWeightedCriterionConfig(LabelSmoothedCrossEntropyCriterionConfig):
    mwe_loss_weight: float = field(
        default=2.0, metadata={"help": "weight of the loss of a training sentence flagged as containing an "
                                       "(idiomatic) MWE (the data directory's TRAIN.SRC-TGT.mweflags.npy, "
                                       "written by `mwemt prepare`); other sentences weigh 1"})


@register_criterion("mwe_weighted_label_smoothed_cross_entropy", dataclass=MweWeightedCriterionConfig)
class MweWeightedCriterion(FusedLabelSmoothedCrossEntropyCriterion):
    """Label-smoothed cross-entropy in which training sentences with an (idiomatic) MWE weigh more.

    The loss is ``sum_s w_s * L_s`` over the batch's sentences, ``L_s`` a sentence's summed
    label-smoothed token losses, ``w_s = mwe_loss_weight`` for a flagged sentence and 1 otherwise
    (Liu et al. 2023 upweight idiomatic sentences this way); it is normalized by the batch's target
    tokens as usual, so flagged sentences pull harder and the rest exactly as before. The flags come
    with the batch (``sample["mwe_flags"]``, set by the `factored_translation` task in training only):
    validation is unweighted, so its loss and early stopping compare with an unweighted model's, and
    the logged NLL (perplexity) is never weighted. Without flags, or with weight 1, this is
    ``label_smoothed_cross_entropy_fused`` exactly.
    """

    needs_mwe_flags = True

    def __init__(self, task, sentence_avg, label_smoothing, ignore_prefix_size=0, report_accuracy=False,
                 mwe_loss_weight=2.0):
        super().__init__(task, sentence_avg, label_smoothing, ignore_prefix_size, report_accuracy)
        if not mwe_loss_weight > 0:
            raise MwemtError(f"--mwe-loss-weight {mwe_loss_weight}: the weight must be positive")
        self.mwe_loss_weight = float(mwe_loss_weight)

    def forward(self, model, sample, reduce=True):
        flags = sample.get("mwe_flags")
        if flags is None or self.mwe_loss_weight == 1.0:
            return super().forward(model, sample, reduce=reduce)
        decoder = getattr(model, "decoder", None)
        if (not reduce or self.ignore_prefix_size > 0 or self.report_accuracy or decoder is None
                or getattr(decoder, "adaptive_softmax", None) is not None):
            raise MwemtError("mwe_weighted_label_smoothed_cross_entropy supports neither --ignore-prefix-size, "
                             "--report-accuracy nor adaptive softmax")
        features, _ = model.extract_features(**sample["net_input"])
        target = model.get_targets(sample, None)
        keep = target.ne(self.padding_idx)
        sentence_weight = 1.0 + (self.mwe_loss_weight - 1.0) * flags.to(features.device, torch.float32)
        row_weight = sentence_weight.unsqueeze(1).expand_as(target)[keep]
        logits = model.output_layer(features[keep])
        loss, nll_loss = label_smoothed_nll(logits, target[keep], self.eps, row_weight)
        sample_size = sample["target"].size(0) if self.sentence_avg else sample["ntokens"]
        logging_output = {"loss": loss.data, "nll_loss": nll_loss.data, "ntokens": sample["ntokens"],
                          "nsentences": sample["target"].size(0), "sample_size": sample_size}
        return loss, sample_size, logging_output
