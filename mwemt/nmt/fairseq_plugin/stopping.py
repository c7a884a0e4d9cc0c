"""Early stopping that a plateau or a tie does not end: ``--stop-min-improvement``, ``--stop-patience-updates``.

fairseq's ``--patience N`` stops after N validations whose metric is not *strictly* better than the
best so far: a gain of 0.001 in loss resets it, a tie does not, and an epoch-end validation counts as
much as one 200 updates after the previous one. Whether a seed stops early then turns on noise. The
task options (`mwemt.nmt.fairseq_plugin.task.FactoredTranslationConfig`) change the rule:

- ``--stop-min-improvement D``: a validation counts as an improvement only when it beats the best
  counted value by more than ``D`` (loss lower, or BLEU higher, by more than ``D``, absolute);
- ``--stop-patience-updates U``: stop at the first validation ``U`` or more updates after the last
  counted improvement (instead of after ``--patience`` validations).

Only the *stopping* changes: fairseq still saves ``checkpoint_best.pt`` at every new best (ties
included), whatever its margin, and it still saves the checkpoint of the validation that stops.

How: fairseq_cli.train's ``validate_and_save`` asks its module-level ``should_stop_early(cfg,
valid_loss)`` whether to stop, and saves the checkpoint when told so. `install` (run when fairseq
imports this plugin, in every training process: the main one and each spawned GPU worker) replaces
that function in the module that runs the training, and wraps ``validate_and_save`` to know the
update count. Without the two options it calls fairseq's own function: behaviour is unchanged.
Like fairseq's, the count starts afresh in a resumed run.
"""

from __future__ import annotations

import logging
import math
import sys
from dataclasses import dataclass

logger = logging.getLogger(__name__)

TRAIN_MODULE = "fairseq_cli.train"


@dataclass
class PlateauStop:
    """The stopping rule: feed each validation's metric and update count to `step`, which says
    whether to stop. ``patience``: validations (used when ``patience_updates`` is 0; < 1 = never)."""

    maximize: bool
    min_improvement: float = 0.0
    patience: int = 0
    patience_updates: int = 0
    best: float | None = None      # the last value that counted as an improvement
    best_updates: int = 0
    waited: int = 0                # validations since then
    reason: str = ""

    def improves(self, value: float) -> bool:
        if self.best is None:
            return not math.isnan(value)
        gain = value - self.best if self.maximize else self.best - value
        return gain > self.min_improvement

    def step(self, value: float | None, updates: int) -> bool:
        """Whether training should stop after a validation with this metric ``value`` at ``updates``."""
        if value is None:   # no validation this time
            return False
        value = float(value)
        if self.improves(value):
            self.best, self.best_updates, self.waited = value, updates, 0
            return False
        self.waited += 1
        margin = f" by more than {self.min_improvement:g}" if self.min_improvement else ""
        best = "none" if self.best is None else f"{self.best:.4f}"
        if self.patience_updates > 0:
            if updates - self.best_updates >= self.patience_updates:
                self.reason = (f"early stop since valid performance hasn't improved{margin} for "
                               f"{updates - self.best_updates} updates (patience {self.patience_updates} updates; "
                               f"best {best} at update {self.best_updates})")
                return True
            return False
        if 0 < self.patience <= self.waited:
            self.reason = (f"early stop since valid performance hasn't improved{margin} for last {self.waited} runs "
                           f"(best {best} at update {self.best_updates})")
            return True
        return False


def rule_of(cfg) -> PlateauStop | None:
    """The rule a fairseq config asks for, or None when it asks for fairseq's own (no option set)."""
    task = getattr(cfg, "task", None)
    min_improvement = float(getattr(task, "stop_min_improvement", 0.0) or 0.0)
    patience_updates = int(getattr(task, "stop_patience_updates", 0) or 0)
    if not min_improvement and not patience_updates:
        return None
    return PlateauStop(maximize=bool(cfg.checkpoint.maximize_best_checkpoint_metric),
                       min_improvement=min_improvement, patience=int(cfg.checkpoint.patience),
                       patience_updates=patience_updates)


class _State:
    rule: PlateauStop | None = None
    updates: int = 0


def install_into(module) -> None:
    """Replace ``should_stop_early`` (and wrap ``validate_and_save``) of one fairseq_cli.train module object."""
    if getattr(module, "_mwemt_stopping", False):
        return
    fairseq_rule = module.should_stop_early
    fairseq_validate_and_save = module.validate_and_save

    def validate_and_save(cfg, trainer, *args, **kwargs):
        _State.updates = trainer.get_num_updates()
        return fairseq_validate_and_save(cfg, trainer, *args, **kwargs)

    def should_stop_early(cfg, valid_loss):
        if _State.rule is None:
            _State.rule = rule_of(cfg)
        if _State.rule is None:
            return fairseq_rule(cfg, valid_loss)
        stop = _State.rule.step(valid_loss, _State.updates)
        if stop:
            logger.info(_State.rule.reason)
        return stop

    module.validate_and_save = validate_and_save
    module.should_stop_early = should_stop_early
    module._mwemt_stopping = True


def install() -> None:
    """`install_into` every loaded module that is fairseq_cli.train: itself, or ``__main__`` (and a
    spawned worker's ``__mp_main__``) when it runs as ``python -m fairseq_cli.train``."""
    for module in list(sys.modules.values()):
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.name == TRAIN_MODULE and hasattr(module, "should_stop_early") \
                and hasattr(module, "validate_and_save"):
            install_into(module)
