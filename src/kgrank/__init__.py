"""kgrank: reproducible rank-based evaluation of link prediction on knowledge graphs.

The public API (imported on first use, so that ``import kgrank`` stays light):

- :func:`evaluate`: every metric of one model's ranks, with its sampling interval and
  the random model's expectation, variance, adjusted index and z-score; the ranks as a
  vector, or a system as `kgrank evaluate` takes it (a PyKEEN folder, a rank file, a
  score matrix with its queries, a rank table) with its ``dataset``;
- :func:`load_system`: such a system's rank table in kgrank's format;
- :func:`lookup`: a metric or derived variant by any of its names (``mrr``, ``amrr``,
  ``z_mrr``, ``hits@10``, ``wgmr``, PyKEEN's keys), with its key, label and short name;
- :func:`evaluate_sampled`: what a sampled protocol (k random negatives per task) would
  report for a rank table, and each estimator of the full metric with its exact bias and
  spread over the draw;
- :func:`compare`: paired tests, bootstrap intervals and Holm's correction for any
  number of systems on one or more datasets, a combined test across datasets, and
  marks for systems not distinguishable from (or worse than) random; a long table of
  ranks, or ``{dataset: {system: source}}`` as `kgrank compare` takes them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"
__all__ = ["compare", "evaluate", "evaluate_sampled", "load_system", "lookup"]

_EXPORTS = {
    "compare": "kgrank.evaluation.comparison",
    "evaluate": "kgrank.api",
    "evaluate_sampled": "kgrank.api",
    "load_system": "kgrank.systems",
    "lookup": "kgrank.evaluation.metrics",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'kgrank' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
