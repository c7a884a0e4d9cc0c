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
"""

# no `from __future__ import annotations`: fairseq reads the config dataclass field types at run time
import torch
from fairseq.criterions import register_criterion
from fairseq.criterions.label_smoothed_cross_entropy import (
    LabelSmoothedCrossEntropyCriterion,
    LabelSmoothedCrossEntropyCriterionConfig,
)


class LabelSmoothedNLL(torch.autograd.Function):
    """``(loss, nll)`` summed over rows of ``logits`` (N, V) for targets (N,), with fairseq's smoothing.

    The forward pass keeps only the log-probabilities (one fp32 tensor); the backward pass turns
    them into the gradient in place: ``c1 * softmax - c2 * onehot - c3``. So the graph can be
    differentiated once (as training does); ``retain_graph`` for a second backward is refused by
    autograd's in-place check.
    """

    @staticmethod
    def forward(ctx, logits, target, epsilon):
        vocab = logits.size(-1)
        eps_i = epsilon / (vocab - 1)
        wide = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
        lprobs = torch.log_softmax(wide, dim=-1)
        nll = -lprobs.gather(-1, target.unsqueeze(-1)).sum()
        smooth = -lprobs.sum()
        ctx.save_for_backward(lprobs, target)
        ctx.epsilon, ctx.dtype = epsilon, logits.dtype
        return (1.0 - epsilon - eps_i) * nll + eps_i * smooth, nll

    @staticmethod
    def backward(ctx, grad_loss, grad_nll):
        lprobs, target = ctx.saved_tensors
        vocab = lprobs.size(-1)
        eps = ctx.epsilon
        eps_i = eps / (vocab - 1)
        zero = torch.zeros((), dtype=lprobs.dtype)
        g_loss = zero if grad_loss is None else grad_loss
        g_nll = zero if grad_nll is None else grad_nll
        # d nll / dz = p - onehot;  d smooth / dz = V p - 1
        on_target = g_loss * (1.0 - eps - eps_i) + g_nll
        grad = lprobs.exp_()          # the saved log-probabilities are not needed again
        grad.mul_(on_target + g_loss * eps_i * vocab).sub_(g_loss * eps_i)
        grad.scatter_add_(-1, target.unsqueeze(-1), (-on_target).expand(target.size(0), 1))
        return grad.to(ctx.dtype), None, None


def label_smoothed_nll(logits: torch.Tensor, target: torch.Tensor, epsilon: float):
    """The summed label-smoothed loss and NLL of rows of logits; see `LabelSmoothedNLL`."""
    return LabelSmoothedNLL.apply(logits, target, epsilon)


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
