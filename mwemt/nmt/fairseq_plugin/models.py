"""Factored encoders for fairseq: `factored_transformer` and `factored_lstm`.

Each source factor has its own embedding table; the per-token vectors are summed (``--factor-combine
sum``, the default: every table of the full size) or concatenated (``concat``, dims from
``--factor-embed-dims`` summing to the embedding size). Sum is the default because concatenation
takes the factors' dimensions from the words: with two extra factors a 128-dim encoder keeps 96 for
words, and a model whose factors are constant then scored 1.9 BLEU below the baseline (the cpu-science
IOB ablation, docs/experiments.md); with sum, constant factors only add a learned bias. The result
replaces the word embedding and everything after it (scaling, positions, layers) is the stock model.
With one factor nothing is replaced, so a one-factor model is the baseline parameter for parameter.
"""

from __future__ import annotations

import torch
from fairseq.models import register_model, register_model_architecture
from fairseq.models.lstm import LSTMEncoder, LSTMModel
from fairseq.models.lstm import base_architecture as lstm_base_architecture
from fairseq.models.transformer import TransformerConfig, TransformerEncoderBase, TransformerModel
from fairseq.models.transformer import base_architecture as transformer_base_architecture
from fairseq.models.transformer.transformer_base import Embedding
from torch import nn

from mwemt.errors import MwemtError

COMBINE = ("concat", "sum")


def add_factor_args(parser) -> None:
    parser.add_argument("--factor-combine", choices=COMBINE,
                        help="join factor embeddings by sum or by concatenation (default: sum)")
    parser.add_argument("--factor-embed-dims", type=str, metavar="D0,D1,...",
                        help="embedding size of each source factor, words first; with concat they must "
                             "sum to the encoder embedding size (default: embed/8 per extra factor, the "
                             "rest for words)")


def factor_dims(combine: str, spec: str | None, n_factors: int, embed_dim: int,
                names: list[str] | None = None) -> list[int]:
    """The embedding size of each factor, checked against the encoder's embedding size."""
    names = names or [f"factor{k}" for k in range(n_factors)]
    if combine not in COMBINE:
        raise MwemtError(f"--factor-combine {combine!r}: choose one of {', '.join(COMBINE)}")
    dims: list[int] = []
    if spec:
        try:
            dims = [int(x) for x in str(spec).replace(" ", "").split(",") if x]
        except ValueError:
            raise MwemtError(f"--factor-embed-dims {spec!r} is not a comma-separated list of integers") from None
        if len(dims) != n_factors:
            raise MwemtError(f"--factor-embed-dims {spec} gives {len(dims)} size(s) but the data has "
                             f"{n_factors} source factor(s) ({', '.join(names)})")
        if any(d <= 0 for d in dims):
            raise MwemtError(f"--factor-embed-dims {spec}: every size must be positive")
    if combine == "sum":
        dims = dims or [embed_dim] * n_factors
        if any(d != embed_dim for d in dims):
            raise MwemtError(f"--factor-combine sum needs every factor embedding to be {embed_dim} "
                             f"(the encoder embedding size), got {','.join(map(str, dims))}")
        return dims
    if not dims:
        if n_factors == 1:
            return [embed_dim]
        each = max(4, embed_dim // 8)
        dims = [embed_dim - each * (n_factors - 1)] + [each] * (n_factors - 1)
        if dims[0] <= 0:
            raise MwemtError(f"encoder embedding size {embed_dim} is too small for {n_factors} factors; "
                             "set --factor-embed-dims")
    if sum(dims) != embed_dim:
        raise MwemtError(f"--factor-embed-dims {','.join(map(str, dims))} sums to {sum(dims)} but the encoder "
                         f"embedding size is {embed_dim}; with --factor-combine concat they must be equal")
    return dims


class FactoredEmbedding(nn.Module):
    """Embeds ``(batch, length, factors)`` token ids into ``(batch, length, dim)`` vectors."""

    def __init__(self, tables: list[nn.Embedding], combine: str):
        super().__init__()
        self.tables = nn.ModuleList(tables)
        self.combine = combine
        dims = [t.embedding_dim for t in tables]
        self.embedding_dim = sum(dims) if combine == "concat" else dims[0]
        self.padding_idx = tables[0].padding_idx
        self.num_embeddings = tables[0].num_embeddings
        self.bound: torch.Tensor | None = None  # full factor tensor for encoders that pass only words

    @property
    def n_factors(self) -> int:
        return len(self.tables)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.dim() == 2:
            if self.bound is None:
                raise MwemtError(f"this model has {self.n_factors} source factors but got source tokens "
                                 "without factors (a (batch, length) tensor)")
            tokens = self.bound
        if tokens.size(-1) != self.n_factors:
            raise MwemtError(f"this model has {self.n_factors} source factors but the input has {tokens.size(-1)}")
        parts = [table(tokens[..., k]) for k, table in enumerate(self.tables)]
        if self.combine == "concat":
            return torch.cat(parts, dim=-1)
        out = parts[0]
        for p in parts[1:]:
            out = out + p
        return out


def build_factored_embedding(args, task, word_table: nn.Embedding, embed_dim: int,
                             shared: bool) -> FactoredEmbedding:
    """Replace the word table by one table per factor; keep it as factor 0 when sizes allow."""
    combine = args.factor_combine
    dims = factor_dims(combine, args.factor_embed_dims, task.n_factors, embed_dim, task.factor_names)
    if dims[0] != word_table.embedding_dim and shared:
        raise MwemtError("--share-all-embeddings needs the word factor to keep the full embedding size: "
                         "use --factor-combine sum, or --factor-embed-dims with the embedding size first")
    first = word_table if dims[0] == word_table.embedding_dim else Embedding(
        len(task.factor_dicts[0]), dims[0], task.factor_dicts[0].pad())
    tables = [first] + [Embedding(len(d), dim, d.pad()) for d, dim in zip(task.factor_dicts[1:], dims[1:])]
    return FactoredEmbedding(tables, combine)


def _n_factors(task) -> int:
    return getattr(task, "n_factors", 1)


# ---------------------------------------------------------------- transformer

class FactoredTransformerEncoder(TransformerEncoderBase):
    """The stock transformer encoder fed with precomputed factor embeddings."""

    def __init__(self, cfg, dictionary, embed_tokens, return_fc=False):
        super().__init__(TransformerConfig.from_namespace(cfg), dictionary, embed_tokens, return_fc=return_fc)

    def forward(self, src_tokens, src_lengths=None, return_all_hiddens: bool = False, token_embeddings=None):
        if src_tokens.dim() == 3:
            if token_embeddings is None:
                token_embeddings = self.embed_tokens(src_tokens)
            src_tokens = src_tokens[..., 0]
        elif isinstance(self.embed_tokens, FactoredEmbedding) and token_embeddings is None:
            raise MwemtError(f"this model has {self.embed_tokens.n_factors} source factors but got "
                             "source tokens without factors")
        return super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings)


@register_model("factored_transformer")
class FactoredTransformerModel(TransformerModel):
    """A transformer whose encoder embeds several source factors."""

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        add_factor_args(parser)

    @classmethod
    def build_model(cls, args, task):
        factored_transformer(args)
        model = super().build_model(args, task)
        if _n_factors(task) > 1:
            model.encoder.embed_tokens = build_factored_embedding(
                args, task, model.encoder.embed_tokens, args.encoder_embed_dim, args.share_all_embeddings)
        return model

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return FactoredTransformerEncoder(args, src_dict, embed_tokens)


def _factor_defaults(args) -> None:
    args.factor_combine = getattr(args, "factor_combine", None) or "sum"
    args.factor_embed_dims = getattr(args, "factor_embed_dims", None)


@register_model_architecture("factored_transformer", "factored_transformer")
def factored_transformer(args):
    _factor_defaults(args)
    transformer_base_architecture(args)


def _preset(args, dim: int, ffn: int, layers: int, heads: int) -> None:
    """Size defaults for a preset; anything given on the command line wins."""
    for name, value in (("encoder_embed_dim", dim), ("encoder_ffn_embed_dim", ffn), ("encoder_layers", layers),
                        ("encoder_attention_heads", heads), ("decoder_layers", layers),
                        ("decoder_attention_heads", heads)):
        setattr(args, name, getattr(args, name, value))
    factored_transformer(args)


@register_model_architecture("factored_transformer", "factored_transformer_tiny")
def factored_transformer_tiny(args):
    """For tests and the demo: 64-dim, 2+2 layers."""
    _preset(args, dim=64, ffn=256, layers=2, heads=2)


@register_model_architecture("factored_transformer", "factored_transformer_small")
def factored_transformer_small(args):
    """The CPU science size: 128-dim, 3+3 layers, FFN 512, 4 heads."""
    _preset(args, dim=128, ffn=512, layers=3, heads=4)


@register_model_architecture("factored_transformer", "factored_transformer_paper_small")
def factored_transformer_paper_small(args):
    """CPU-sized: 256-dim, 3+3 layers, FFN 1024, 4 heads."""
    _preset(args, dim=256, ffn=1024, layers=3, heads=4)


# ---------------------------------------------------------------- LSTM

class FactoredLSTMEncoder(LSTMEncoder):
    """The stock LSTM encoder; a factored batch is right-aligned here and embedded whole."""

    def forward(self, src_tokens, src_lengths, enforce_sorted: bool = True):
        if src_tokens.dim() == 2:
            return super().forward(src_tokens, src_lengths, enforce_sorted)
        if self.left_pad:
            src_tokens = right_align(src_tokens, self.padding_idx)
        left_pad, self.left_pad = self.left_pad, False
        self.embed_tokens.bound = src_tokens
        try:
            return super().forward(src_tokens[..., 0], src_lengths, enforce_sorted)
        finally:
            self.left_pad = left_pad
            self.embed_tokens.bound = None


def right_align(tokens: torch.Tensor, pad: int) -> torch.Tensor:
    """Move left padding to the right in a (batch, length, factors) tensor (padding is shared by factors)."""
    width = tokens.size(1)
    n_pad = tokens[..., 0].eq(pad).sum(dim=1, keepdim=True)
    index = (torch.arange(width, device=tokens.device).unsqueeze(0) + n_pad) % width
    return tokens.gather(1, index.unsqueeze(-1).expand_as(tokens))


@register_model("factored_lstm")
class FactoredLSTMModel(LSTMModel):
    """An attentional LSTM encoder-decoder whose encoder embeds several source factors."""

    @staticmethod
    def add_args(parser):
        LSTMModel.add_args(parser)
        add_factor_args(parser)

    @classmethod
    def build_model(cls, args, task):
        factored_lstm(args)
        model = super().build_model(args, task)
        if _n_factors(task) > 1:
            encoder = model.encoder
            encoder.embed_tokens = build_factored_embedding(
                args, task, encoder.embed_tokens, args.encoder_embed_dim, args.share_all_embeddings)
            encoder.__class__ = FactoredLSTMEncoder  # same state, factored forward
        return model


@register_model_architecture("factored_lstm", "factored_lstm")
def factored_lstm(args):
    """A shallow bidirectional RNN as in Zaninello & Birch (2020): 1 encoder and 1 decoder layer."""
    _factor_defaults(args)
    args.encoder_embed_dim = getattr(args, "encoder_embed_dim", 256)
    args.encoder_hidden_size = getattr(args, "encoder_hidden_size", 256)
    args.encoder_layers = getattr(args, "encoder_layers", 1)
    args.encoder_bidirectional = getattr(args, "encoder_bidirectional", True)
    args.decoder_embed_dim = getattr(args, "decoder_embed_dim", 256)
    args.decoder_hidden_size = getattr(args, "decoder_hidden_size", 512)
    args.decoder_layers = getattr(args, "decoder_layers", 1)
    args.decoder_out_embed_dim = getattr(args, "decoder_out_embed_dim", 256)
    args.dropout = getattr(args, "dropout", 0.2)
    lstm_base_architecture(args)
