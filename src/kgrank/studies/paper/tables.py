"""Tables 1-4 of the unified-framework paper: desiderata, definitions and power means from
the metric registry, and the dataset statistics from the prepared splits."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kgrank.io import write_report_table
from kgrank.labels import dataset_label
from kgrank.metrics import Metric, Variant, default_metrics, derived_values


def write_table4(stats: pd.DataFrame, markdown_path: str | Path, latex_path: str | Path) -> pd.DataFrame:
    """Dataset statistics, computed from the prepared splits (Table 4 of the paper)."""
    table = stats.assign(dataset=stats["dataset"].map(dataset_label))
    table = table.rename(
        columns={
            "dataset": "Dataset",
            "entities": "Entities",
            "relations": "Relations",
            "train": "Train",
            "valid": "Validation",
            "test": "Test",
        }
    )
    write_report_table(
        table,
        markdown_path,
        latex_path,
        caption="Dataset statistics, computed from the prepared splits.",
        label="tab:dataset-statistics",
    )
    return table


# --- Tables 1-3: generated from the metric registry -----------------------------------

# None is the base metric itself; Table 1 lists it before its derived variants.
TABLE1_VARIANTS: tuple[Variant | None, ...] = (None, *Variant)


def variant_name(variant: Variant | None) -> str:
    return "base" if variant is None else variant.value


def _variant_value(
    metric: Metric, variant: Variant | None, ranks: np.ndarray, num_candidates: np.ndarray
) -> float:
    value = metric.value(ranks)
    if variant is None:
        return float(value)
    return float(derived_values(metric, value, metric.moments(num_candidates))[variant].value)


def _is_better(metric: Metric, variant: Variant | None, new: float, old: float) -> bool:
    increasing = metric.increasing or variant in {Variant.INDEX, Variant.Z_SCORE}
    return new > old if increasing else new < old


def _variant_expectation(metric: Metric, variant: Variant | None, num_candidates: np.ndarray) -> float:
    """E of a variant under the random model: the variants are affine in the base metric,
    so E[variant] is the variant evaluated at M = E[M]."""
    moments = metric.moments(num_candidates)
    if variant is None:
        return moments.expectation
    return float(derived_values(metric, moments.expectation, moments)[variant].value)


def desiderata(
    metric: Metric, variant: Variant | None, *, num_ranks: int = 31, seed: int = 0
) -> dict[str, bool]:
    """The four desiderata of the paper's Table 1, each decided by evaluating the metric.

    - fixed optimum: all ranks 1 give the same value for N = 100, 1,000 and 100,000;
    - asymptotic pessimum: with all ranks N, the value is monotone in N over
      N = 10^2..10^5 and stays bounded (|v(10^5)| <= 2 |v(10^2)| + 1), so it converges;
      this separates a finite limit from growth like N or ln N;
    - strict anti-monotonicity: improving any single rank by one strictly improves it;
    - size-invariant expectation: E under the random model is the same for N = 100 and
      N = 1,000.
    """
    optimum = [
        _variant_value(metric, variant, np.ones(num_ranks), np.full(num_ranks, size))
        for size in (100, 1_000, 100_000)
    ]
    worst = np.array(
        [
            _variant_value(metric, variant, np.full(num_ranks, float(size)), np.full(num_ranks, size))
            for size in (100, 1_000, 10_000, 100_000)
        ]
    )
    steps = np.diff(worst)
    tolerance = 1e-12 * (1 + np.abs(worst).max())
    monotone = bool(np.all(steps >= -tolerance) or np.all(steps <= tolerance))
    bounded = bool(np.all(np.isfinite(worst)) and abs(worst[-1]) <= 2 * abs(worst[0]) + 1)
    generator = np.random.default_rng(seed)
    size = 50
    ranks = generator.integers(2, size + 1, num_ranks).astype(float)
    counts = np.full(num_ranks, size)
    before = _variant_value(metric, variant, ranks, counts)
    strict = True
    for index in range(num_ranks):
        improved = ranks.copy()
        improved[index] -= 1
        strict &= _is_better(metric, variant, _variant_value(metric, variant, improved, counts), before)
    expectations = [_variant_expectation(metric, variant, np.full(num_ranks, size)) for size in (100, 1_000)]
    return {
        "fixed optimum": bool(np.allclose(optimum, optimum[0])),
        "asymptotic pessimum": monotone and bounded,
        "strict anti-monotonicity": bool(strict),
        "size-invariant expectation": bool(np.isclose(expectations[0], expectations[1])),
    }


def table1(metrics: Sequence[Metric]) -> pd.DataFrame:
    rows = []
    for metric in metrics:
        if not metric.has_derived:
            continue
        for variant in TABLE1_VARIANTS:
            rows.append(
                {
                    "metric": metric.label,
                    "key": metric.key,
                    "variant": variant_name(variant),
                    **desiderata(metric, variant),
                }
            )
    return pd.DataFrame(rows)


def table2(metrics: Sequence[Metric], reference_candidates: np.ndarray) -> pd.DataFrame:
    """Definitions as f, M_p, g, with direction, optimum, range and how the moments are known."""
    rows = []
    for metric in metrics:
        method = metric.moments(reference_candidates).method
        rows.append(
            {
                "metric": metric.label,
                "key": metric.key,
                "f": metric.transform.text,
                "mean": metric.mean_text,
                "g": {"identity": "x", "reciprocal": "1/x"}[metric.post],
                "better": "higher" if metric.increasing else "lower",
                "optimum": "" if metric.optimum is None else f"{metric.optimum:g}",
                "range": f"[{metric.value_range[0]:g}, {metric.value_range[1]:g}]",
                "moments": method.split(" (R=")[0],
            }
        )
    return pd.DataFrame(rows)


def table3(metrics: Sequence[Metric]) -> pd.DataFrame:
    """The power means M_p and the rank metric each one gives."""
    names = {
        -np.inf: "minimum",
        -1.0: "harmonic",
        0.0: "geometric",
        1.0: "arithmetic",
        2.0: "quadratic",
        np.inf: "maximum",
    }
    rows = []
    for p, name in names.items():
        metric = (
            next(
                m
                for m in metrics
                if m.statistic == "power mean"
                and m.transform.text == "r"
                and m.power == p
                and m.post == "identity"
            )
            if p != -1.0
            else next(m for m in metrics if m.key == "harmonic_mean_rank")
        )
        formula = {-np.inf: "min_i x_i", 0.0: "exp((1/n) sum_i ln x_i)", np.inf: "max_i x_i"}.get(
            p, f"((1/n) sum_i x_i^{p:g})^(1/{p:g})"
        )
        rows.append(
            {"p": f"{p:g}", "mean": name, "M_p(x)": formula, "rank metric": metric.label, "key": metric.key}
        )
    return pd.DataFrame(rows)


def write_tables_1_to_3(out_dir: str | Path, num_candidates: int, num_ranks: int) -> None:
    """Tables 1-3; Table 2 states how each metric's moments are known for ``num_ranks``
    ranks with ``num_candidates`` candidates each (the method can depend on both)."""
    metrics = default_metrics()
    reference_candidates = np.full(num_ranks, num_candidates)
    captions = {
        "table1": "Desiderata, decided numerically for every metric and its adjusted variants.",
        "table2": "Metric definitions as g(M_p(f(r))), from kgrank's registry; moments as known for "
        f"{num_ranks:,} ranks with {num_candidates:,} candidates each.",
        "table3": "Power means and the rank-based metrics they give.",
    }
    tables = {
        "table1": table1(metrics),
        "table2": table2(metrics, reference_candidates),
        "table3": table3(metrics),
    }
    for name, table in tables.items():
        write_report_table(
            table,
            Path(out_dir) / f"{name}.md",
            Path(out_dir) / f"{name}.tex",
            caption=captions[name],
            label=f"tab:{name}",
        )
