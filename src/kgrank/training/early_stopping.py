"""Learning curves and early stopping on kgrank's own rank engine.

PyKEEN's early stopper evaluates through its ``RankBasedEvaluator``, which on FB15k-237
costs minutes per evaluation on a laptop; kgrank's rank engine gives the same ranks in
seconds (benchmarks/ranks.py), so validation can run every few epochs. The rule is
PyKEEN's: evaluate every ``frequency`` epochs; an evaluation improves when the metric
exceeds the best so far by more than ``relative_delta`` of it; stop after ``patience``
evaluations without improvement; keep the best model's weights, not the last ones.
The metric is the validation MRR, filtered (train, valid, test), realistic ranks, both
sides.
"""

from __future__ import annotations

import copy
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from pykeen.training.callbacks import TrainingCallback

from kgrank.errors import KgrankInputError


@dataclass(frozen=True, kw_only=True)
class EarlyStopping:
    """PyKEEN's early-stopping rule (frequency in epochs, patience in evaluations)."""

    frequency: int = 5
    patience: int = 2
    relative_delta: float = 0.002

    def __post_init__(self) -> None:
        if self.frequency < 1 or self.patience < 0 or self.relative_delta < 0:
            raise KgrankInputError(
                f"early stopping {self}: frequency must be at least 1, patience and relative_delta "
                "at least 0; correct budget.early_stopping"
            )


def validation_mrr(model: Any, factories: Any, known: Any, batch_size: int = 256) -> float:
    """Filtered validation MRR of realistic ranks, both sides, by kgrank's rank engine."""
    from kgrank.engine.ranks import compute_ranks

    was_training = model.training
    table = compute_ranks(
        model, factories.validation.mapped_triples, known, batch_size=batch_size, progress=False
    )
    model.train(was_training)
    return float(np.mean(1.0 / table["realistic"].to_numpy()))


@dataclass
class LearningCurve(TrainingCallback):
    """Records (epoch, seconds, loss, valid_mrr) after every epoch, validates every
    ``rule.frequency`` epochs (when a rule is given), keeps the best weights and asks
    PyKEEN's loop to stop once patience runs out."""

    factories: Any
    known: Any
    rule: EarlyStopping | None = None
    rows: list[dict[str, float]] = field(default_factory=list)
    best_mrr: float = -np.inf
    best_epoch: int | None = None
    best_state: dict[str, torch.Tensor] | None = None
    stopped_epoch: int | None = None
    _waited: int = 0
    _started: float = field(default_factory=time.perf_counter)
    _validation_seconds: float = 0.0

    def __post_init__(self) -> None:
        super().__init__()

    def post_epoch(self, epoch: int, epoch_loss: float, **kwargs: Any) -> None:
        # training seconds exclude the time spent validating
        row = {
            "epoch": epoch,
            "seconds": time.perf_counter() - self._started - self._validation_seconds,
            "loss": float(epoch_loss),
            "valid_mrr": float("nan"),
        }
        self.rows.append(row)
        if self.rule is None or epoch % self.rule.frequency:
            return
        started = time.perf_counter()
        mrr = validation_mrr(self.model, self.factories, self.known)
        self._validation_seconds += time.perf_counter() - started
        row["valid_mrr"] = mrr
        improved = self.best_epoch is None or mrr > self.best_mrr * (1.0 + self.rule.relative_delta)
        # progress in the job's log: what each evaluation found
        print(
            f"epoch {epoch}: validation MRR {mrr:.4f}"
            + (" (best)" if improved else f" (best {self.best_mrr:.4f})"),
            file=sys.stderr,
            flush=True,
        )
        if improved:
            self.best_mrr, self.best_epoch, self._waited = mrr, epoch, 0
            self.best_state = copy.deepcopy(self.model.state_dict())
            return
        self._waited += 1
        if self._waited >= self.rule.patience:
            self.stopped_epoch = epoch
            self.training_loop._should_stop = True

    def post_train(self, losses: list[float], **kwargs: Any) -> None:
        # the curve ends on a validated epoch even without early stopping
        if self.rows and np.isnan(self.rows[-1]["valid_mrr"]):
            self.rows[-1]["valid_mrr"] = validation_mrr(self.model, self.factories, self.known)

    def restore_best(self) -> None:
        """Load the best weights seen, if validation ran."""
        if self.best_state is not None:
            self.model.load_state_dict(self.best_state)
