"""Milliseconds of the LCWA loss, forward and backward: PyKEEN's on the dense label block
against kgrank's from the positives' indices (kgrank.training.lcwa_loss).

For each dataset's (batch x entities) score block (FB15k-237 14,505 entities, WN18RR
40,943; batch 512) and each loss with a fused form the configurations train with
(cross-entropy, BCE after a sigmoid and softplus, whose soft-hinge form with a margin adds
one pass, with label smoothing 0.1; the self-adversarial loss, which takes none, with
FB15k-237 RotatE's published margin and temperature), both sides start from the same scores and
the same positives (LCWA rows of FB15k-237 hold 1-4 tails typically; here 1-8 at random)
and end with the gradient of the scores. PyKEEN's side includes the scatter of the
positives into its dense label block, which kgrank's 1-N step no longer makes. Times are
medians of ``--repeats`` runs after one warm-up, in one process, so the ratio is the
measurement.

    python benchmarks/lcwa_loss.py [--repeats 7] [--threads 2] [--batch 512]

Prints one row per (entities, loss): PyKEEN ms, kgrank ms, PyKEEN / kgrank. Correctness
is in tests/test_lcwa_loss.py.
"""

from __future__ import annotations

import argparse
import functools
import statistics

import torch
from training import repeated_seconds, setting  # benchmarks/training.py

ENTITIES = {"fb15k237": 14505, "wn18rr": 40943}


def losses() -> tuple[tuple[str, dict, float], ...]:
    """(loss, its settings, label smoothing); the self-adversarial one with FB15k-237
    RotatE's published margin and temperature (config/hyperparameters)."""
    rotate, _ = setting("fb15k237", "rotate")
    return (
        ("crossentropy", {}, 0.1),
        ("bceaftersigmoid", {}, 0.1),
        ("softplus", {}, 0.1),
        ("nssa", rotate["loss_kwargs"], 0.0),
    )


def _time(function, repeats: int) -> float:
    return 1000 * statistics.median(repeated_seconds(function, repeats))


def _pykeen_step(loss, scores, rows, columns, label_smoothing: float) -> None:
    leaf = scores.clone().requires_grad_(True)
    labels = torch.zeros_like(scores)
    labels[rows, columns] = 1.0
    value = loss.process_lcwa_scores(
        predictions=leaf, labels=labels, label_smoothing=label_smoothing, num_entities=scores.shape[1]
    )
    value.backward()


def _fused_step(loss, scores, rows, columns, label_smoothing: float) -> None:
    from kgrank.training.lcwa_loss import lcwa_loss_from_positives

    leaf = scores.clone().requires_grad_(True)
    lcwa_loss_from_positives(loss, leaf, rows, columns, label_smoothing).backward()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=512)
    arguments = parser.parse_args()
    torch.set_num_threads(arguments.threads)
    from pykeen.losses import loss_resolver

    generator = torch.Generator().manual_seed(0)
    print("| dataset (entities) | loss | PyKEEN ms | kgrank ms | PyKEEN / kgrank |")
    print("|---|---|---|---|---|")
    for dataset, num_entities in ENTITIES.items():
        scores = torch.randn(arguments.batch, num_entities, generator=generator)
        # distinct positives per row (PyKEEN's dense labels would count a repeat once)
        positive = torch.rand(arguments.batch, num_entities, generator=generator).argsort(dim=1)
        counts = torch.randint(1, 9, (arguments.batch,), generator=generator)
        rows = torch.repeat_interleave(torch.arange(arguments.batch), counts)
        columns = torch.cat([positive[row, :count] for row, count in enumerate(counts.tolist())])
        for name, settings, label_smoothing in losses():
            loss = loss_resolver.make(name, **settings)
            pykeen = functools.partial(_pykeen_step, loss, scores, rows, columns, label_smoothing)
            fused = functools.partial(_fused_step, loss, scores, rows, columns, label_smoothing)
            pykeen_ms = _time(pykeen, arguments.repeats)
            fused_ms = _time(fused, arguments.repeats)
            print(
                f"| {dataset} ({num_entities:,}) | {name} | {pykeen_ms:.1f} | {fused_ms:.1f} | "
                f"{pykeen_ms / fused_ms:.2f}x |"
            )


if __name__ == "__main__":
    main()
