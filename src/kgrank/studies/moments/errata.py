"""Published closed forms (unified-framework paper, Appendix B; ambiguity paper) vs simulation.

Each entry evaluates an expression exactly as printed (../shared/reference/published-formulas.md)
and the corrected one, and compares both with the quantity simulated from the random
model, at a constant N (where the starred special cases apply) and, for the general
forms, at varying N_i. A published value farther than ``tolerance_z`` standard errors
from the simulation is a disagreement; the errata table lists those with the evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kgrank.evaluation.moments import harmonic_number, log_expected_power, sample_mean_variance, sample_ranks
from kgrank.evaluation.stats import seed_stream

# The errata's report table (Markdown) prints its floats with this format.
ERRATA_FLOATFMT = ".6g"


@dataclass(frozen=True, kw_only=True)
class Formula:
    """A published expression, and its correction only where the printed one is wrong."""

    equation: str
    quantity: str
    published: str
    published_value: Callable[[np.ndarray, int], float]
    statistic: Callable[[np.ndarray, np.ndarray, int], np.ndarray]
    # what to simulate: the "mean" or the "variance" of the statistic over replicates
    moment: str = "mean"
    constant_n: bool = False
    # For a statistic printed in place of a metric: the corrected statistic, simulated too.
    corrected_statistic: Callable[[np.ndarray, np.ndarray, int], np.ndarray] | None = None
    corrected: str | None = None
    corrected_value: Callable[[np.ndarray, int], float] | None = None


def _mr(ranks, n_i, k):
    return ranks.mean(axis=-1)


def _mrr(ranks, n_i, k):
    return (1.0 / ranks).mean(axis=-1)


def _hits(ranks, n_i, k):
    return (ranks <= k).mean(axis=-1)


def _first_rank(ranks, n_i, k):
    return ranks[..., 0]


def _first_reciprocal(ranks, n_i, k):
    return 1.0 / ranks[..., 0]


def _gmr(ranks, n_i, k):
    return np.exp(np.log(ranks).mean(axis=-1))


def _amr_constant_printed(ranks, n_i, k):
    big_n = n_i[0]
    return 2.0 / (big_n * (big_n - 1)) * ranks.sum(axis=-1)


def _amri_ambiguity_printed(ranks, n_i, k):
    return 2.0 * (ranks - 1).sum(axis=-1) / n_i.sum()


def _amr_constant_corrected(ranks, n_i, k):
    return 2.0 / (len(n_i) * (n_i[0] + 1)) * ranks.sum(axis=-1)


def _amri_corrected(ranks, n_i, k):
    return 1.0 - 2.0 * (ranks - 1).sum(axis=-1) / (n_i - 1).sum()


def _amr_ambiguity_printed(ranks, n_i, k):
    return 2.0 * ranks.sum(axis=-1) / (n_i + 1).sum()


def _constant(value: float) -> Callable[[np.ndarray, int], float]:
    return lambda n_i, k: value


def formulas() -> list[Formula]:
    h1 = lambda n: harmonic_number(np.asarray(n, dtype=float), 1)  # noqa: E731
    h2 = lambda n: harmonic_number(np.asarray(n, dtype=float), 2)  # noqa: E731
    p = lambda n_i, k: np.minimum(k, n_i) / n_i  # noqa: E731
    return [
        Formula(
            equation="4",
            quantity="E[r_i]",
            published="(N_i + 1) / 2",
            published_value=lambda n_i, k: (n_i[0] + 1) / 2,
            statistic=_first_rank,
        ),
        Formula(
            equation="5",
            quantity="Var[r_i]",
            published="(N_i^2 - 1) / 12",
            published_value=lambda n_i, k: (n_i[0] ** 2 - 1) / 12,
            moment="variance",
            statistic=_first_rank,
        ),
        Formula(
            equation="6",
            quantity="E[MR]",
            published="(1/n) sum_i (N_i + 1)/2",
            published_value=lambda n_i, k: np.mean((n_i + 1) / 2),
            statistic=_mr,
        ),
        Formula(
            equation="7",
            quantity="Var[MR]",
            published="(1/(12 n^2)) sum_i (N_i^2 - 1)",
            published_value=lambda n_i, k: np.sum(n_i**2 - 1) / (12 * len(n_i) ** 2),
            moment="variance",
            statistic=_mr,
        ),
        Formula(
            equation="7 (*)",
            quantity="Var[MR]",
            published="(N^2 - 1) / (12 n)",
            published_value=lambda n_i, k: (n_i[0] ** 2 - 1) / (12 * len(n_i)),
            moment="variance",
            statistic=_mr,
            constant_n=True,
        ),
        Formula(
            equation="8 (*)",
            quantity="E[AMR] (AMR as printed must have expectation 1)",
            published="2 / (N (N - 1)) * sum_i r_i",
            corrected="2 / (n (N + 1)) * sum_i r_i",
            published_value=_constant(1.0),
            corrected_value=_constant(1.0),
            statistic=_amr_constant_printed,
            constant_n=True,
            corrected_statistic=_amr_constant_corrected,
        ),
        Formula(
            equation="11",
            quantity="E[1/r_i]",
            published="H(N_i) / N_i",
            published_value=lambda n_i, k: h1(n_i[0]) / n_i[0],
            statistic=_first_reciprocal,
        ),
        Formula(
            equation="12",
            quantity="E[MRR]",
            published="(1/n) sum_i H(N_i) / N_i",
            published_value=lambda n_i, k: np.mean(h1(n_i) / n_i),
            statistic=_mrr,
        ),
        Formula(
            equation="13",
            quantity="Var[1/r_i]",
            published="(N_i H_2(N_i) - H(N_i)^2) / N_i^2",
            published_value=lambda n_i, k: (n_i[0] * h2(n_i[0]) - h1(n_i[0]) ** 2) / n_i[0] ** 2,
            moment="variance",
            statistic=_first_reciprocal,
        ),
        Formula(
            equation="14",
            quantity="Var[MRR]",
            published="(1/n^2) sum_i (N_i H_2(N_i) - H(N_i)^2) / N_i^2",
            published_value=lambda n_i, k: np.sum((n_i * h2(n_i) - h1(n_i) ** 2) / n_i**2) / len(n_i) ** 2,
            moment="variance",
            statistic=_mrr,
        ),
        Formula(
            equation="14 (*)",
            quantity="Var[MRR]",
            published="(N H_2(N) - H(N)^2) / (n N^2)",
            published_value=lambda n_i, k: (n_i[0] * h2(n_i[0]) - h1(n_i[0]) ** 2) / (len(n_i) * n_i[0] ** 2),
            moment="variance",
            statistic=_mrr,
            constant_n=True,
        ),
        Formula(
            equation="19",
            quantity="E[H_k]",
            published="(1/n) sum_i p_i",
            published_value=lambda n_i, k: np.mean(p(n_i, k)),
            statistic=_hits,
        ),
        Formula(
            equation="19 (*)",
            quantity="E[H_k]",
            published="min(k/N, 1)",
            published_value=lambda n_i, k: min(k / n_i[0], 1.0),
            statistic=_hits,
            constant_n=True,
        ),
        Formula(
            equation="20",
            quantity="Var[H_k]",
            published="(1/n^2) sum_i p_i (1 - p_i)",
            published_value=lambda n_i, k: np.sum(p(n_i, k) * (1 - p(n_i, k))) / len(n_i) ** 2,
            moment="variance",
            statistic=_hits,
        ),
        Formula(
            equation="20 (*)",
            quantity="Var[H_k]",
            published="k (N - k) / (n^2 N^2) if k <= N, else 0",
            corrected="k (N - k) / (n N^2) if k <= N, else 0",
            published_value=lambda n_i, k: k * (n_i[0] - k) / (len(n_i) ** 2 * n_i[0] ** 2),
            corrected_value=lambda n_i, k: k * (n_i[0] - k) / (len(n_i) * n_i[0] ** 2),
            moment="variance",
            statistic=_hits,
            constant_n=True,
        ),
        Formula(
            equation="23-24",
            quantity="E[GMR]",
            published="prod_i E[r_i^(1/n)], log E[r^(1/n)] = -log N + logsumexp_k (log k / n)",
            published_value=lambda n_i, k: float(np.exp(log_expected_power(n_i, 1 / len(n_i)).sum())),
            statistic=_gmr,
        ),
        # Eq. 7 of the ambiguity paper: "(1/n) sum_{i=1}^{|S|} i = (|S| + 1)/2", with n the
        # number of tasks elsewhere in the paper; the sum over one task's positions needs
        # 1/|S|. Evaluated as printed it is |S| (|S| + 1) / (2 n), right only when n = |S|.
        Formula(
            equation="ambiguity: Eq. 7",
            quantity="E[r_i]",
            published="(1/n) sum_{j=1}^{#S} j",
            corrected="(1/#S) sum_{j=1}^{#S} j = (#S + 1) / 2",
            published_value=lambda n_i, k: n_i[0] * (n_i[0] + 1) / (2 * len(n_i)),
            corrected_value=lambda n_i, k: (n_i[0] + 1) / 2,
            statistic=_first_rank,
            constant_n=True,
        ),
        Formula(
            equation="ambiguity: E[MR]",
            quantity="E[MR]",
            published="(1/(2n)) sum_i (#S_i + 1)",
            published_value=lambda n_i, k: np.sum(n_i + 1) / (2 * len(n_i)),
            statistic=_mr,
        ),
        Formula(
            equation="ambiguity: AMR",
            quantity="E[AMR] (must be 1)",
            published="2 sum_i r_i / sum_i (#S_i + 1)",
            published_value=_constant(1.0),
            statistic=_amr_ambiguity_printed,
        ),
        Formula(
            equation="ambiguity: AMRI",
            quantity="E[AMRI] (must be 0)",
            published="2 sum_i (r_i - 1) / sum_i #S_i",
            corrected="1 - 2 sum_i (r_i - 1) / sum_i (#S_i - 1)",
            published_value=_constant(0.0),
            corrected_value=_constant(0.0),
            statistic=_amri_ambiguity_printed,
            corrected_statistic=_amri_corrected,
        ),
    ]


def check_formulas(
    *,
    constant_candidates: int = 50,
    num_ranks: int = 20,
    k: int = 10,
    replicates: int = 200_000,
    seed: int = 0,
    tolerance_z: float = 5.0,
) -> pd.DataFrame:
    """Every formula at a constant N and (general forms) at varying N_i, against simulation.

    For statistics printed in place of a metric (Eq. 8's AMR, the ambiguity paper's
    AMRI), the simulated mean of the printed statistic, and of the corrected one, is
    compared with the expectation the metric must have (1 for AMR, 0 for AMRI).
    """
    generator = seed_stream(seed)
    settings = {
        f"constant N={constant_candidates}, n={num_ranks}": np.full(num_ranks, constant_candidates),
        f"varying N_i in [2, {2 * constant_candidates}], n={num_ranks}": generator.integers(
            2, 2 * constant_candidates + 1, size=num_ranks
        ),
    }
    rows = []
    for setting, n_i in settings.items():
        ranks = sample_ranks(seed_stream(seed + 1), n_i.astype(float), replicates)
        constant = np.all(n_i == n_i[0])
        for formula in formulas():
            if formula.constant_n and not constant:
                continue
            if not constant and formula.equation in {"4", "5", "11", "13"}:
                continue  # single-task quantities: the constant setting covers them
            simulated, error = _simulated_moment(formula.statistic(ranks, n_i, k), formula.moment)
            corrected_simulated, corrected_error = simulated, error
            if formula.corrected_statistic is not None:
                corrected_simulated, corrected_error = _simulated_moment(
                    formula.corrected_statistic(ranks, n_i, k), formula.moment
                )
            published = float(formula.published_value(n_i, k))
            corrected = np.nan if formula.corrected_value is None else float(formula.corrected_value(n_i, k))
            rows.append(
                {
                    "equation": formula.equation,
                    "quantity": formula.quantity,
                    "setting": setting,
                    "published": formula.published,
                    "corrected": formula.corrected or "",
                    "published_value": published,
                    "corrected_value": corrected,
                    "simulated": simulated,
                    "simulation_error": error,
                    "z_published": _z(published, simulated, error),
                    "z_corrected": np.nan
                    if formula.corrected is None
                    else _z(corrected, corrected_simulated, corrected_error),
                    "replicates": replicates,
                }
            )
    table = pd.DataFrame(rows)
    table["published_holds"] = table["z_published"].abs() < tolerance_z
    # Only a corrected form can hold or fail; rows without one leave the verdict empty.
    table["corrected_holds"] = (table["z_corrected"].abs() < tolerance_z).where(
        table["corrected"] != "", None
    )
    return table


def _z(value: float, simulated: float, error: float) -> float:
    """Distance in standard errors; a degenerate simulation (no spread) agrees only exactly."""
    if error > 0:
        return (value - simulated) / error
    return 0.0 if np.isclose(value, simulated, rtol=1e-12, atol=0.0) else np.inf


def _simulated_moment(sample: np.ndarray, moment: str) -> tuple[float, float]:
    """The simulated mean or variance of a statistic, with its standard error."""
    mean, variance = sample_mean_variance(sample)
    chosen = mean if moment == "mean" else variance
    return chosen.estimate, chosen.error


def errata(check: pd.DataFrame) -> pd.DataFrame:
    """The rows where a published expression disagrees with the simulation, in the columns
    of :func:`check_formulas` from ``equation`` to ``z_corrected``."""
    return check.loc[~check["published_holds"], "equation":"z_corrected"].reset_index(drop=True)
