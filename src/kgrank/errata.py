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

from kgrank.moments import harmonic_number, log_expected_power, sample_mean_variance, sample_ranks


@dataclass(frozen=True)
class Formula:
    equation: str
    quantity: str
    published: str
    corrected: str
    published_value: Callable[[np.ndarray, int], float]
    corrected_value: Callable[[np.ndarray, int], float]
    # what to simulate: "mean" or "variance" of the statistic over replicates
    moment: str
    statistic: Callable[[np.ndarray, np.ndarray, int], np.ndarray]
    constant_n: bool = False
    # For a statistic printed in place of a metric: the corrected statistic, simulated too.
    corrected_statistic: Callable[[np.ndarray, np.ndarray, int], np.ndarray] | None = None


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
            "4",
            "E[r_i]",
            "(N_i + 1) / 2",
            "(N_i + 1) / 2",
            lambda n_i, k: (n_i[0] + 1) / 2,
            lambda n_i, k: (n_i[0] + 1) / 2,
            "mean",
            _first_rank,
        ),
        Formula(
            "5",
            "Var[r_i]",
            "(N_i^2 - 1) / 12",
            "(N_i^2 - 1) / 12",
            lambda n_i, k: (n_i[0] ** 2 - 1) / 12,
            lambda n_i, k: (n_i[0] ** 2 - 1) / 12,
            "variance",
            _first_rank,
        ),
        Formula(
            "6",
            "E[MR]",
            "(1/n) sum_i (N_i + 1)/2",
            "(1/n) sum_i (N_i + 1)/2",
            lambda n_i, k: np.mean((n_i + 1) / 2),
            lambda n_i, k: np.mean((n_i + 1) / 2),
            "mean",
            _mr,
        ),
        Formula(
            "7",
            "Var[MR]",
            "(1/(12 n^2)) sum_i (N_i^2 - 1)",
            "(1/(12 n^2)) sum_i (N_i^2 - 1)",
            lambda n_i, k: np.sum(n_i**2 - 1) / (12 * len(n_i) ** 2),
            lambda n_i, k: np.sum(n_i**2 - 1) / (12 * len(n_i) ** 2),
            "variance",
            _mr,
        ),
        Formula(
            "7 (*)",
            "Var[MR]",
            "(N^2 - 1) / (12 n)",
            "(N^2 - 1) / (12 n)",
            lambda n_i, k: (n_i[0] ** 2 - 1) / (12 * len(n_i)),
            lambda n_i, k: (n_i[0] ** 2 - 1) / (12 * len(n_i)),
            "variance",
            _mr,
            constant_n=True,
        ),
        Formula(
            "8 (*)",
            "E[AMR] (AMR as printed must have expectation 1)",
            "2 / (N (N - 1)) * sum_i r_i",
            "2 / (n (N + 1)) * sum_i r_i",
            _constant(1.0),
            _constant(1.0),
            "mean",
            _amr_constant_printed,
            constant_n=True,
            corrected_statistic=_amr_constant_corrected,
        ),
        Formula(
            "11",
            "E[1/r_i]",
            "H(N_i) / N_i",
            "H(N_i) / N_i",
            lambda n_i, k: h1(n_i[0]) / n_i[0],
            lambda n_i, k: h1(n_i[0]) / n_i[0],
            "mean",
            _first_reciprocal,
        ),
        Formula(
            "12",
            "E[MRR]",
            "(1/n) sum_i H(N_i) / N_i",
            "(1/n) sum_i H(N_i) / N_i",
            lambda n_i, k: np.mean(h1(n_i) / n_i),
            lambda n_i, k: np.mean(h1(n_i) / n_i),
            "mean",
            _mrr,
        ),
        Formula(
            "13",
            "Var[1/r_i]",
            "(N_i H_2(N_i) - H(N_i)^2) / N_i^2",
            "(N_i H_2(N_i) - H(N_i)^2) / N_i^2",
            lambda n_i, k: (n_i[0] * h2(n_i[0]) - h1(n_i[0]) ** 2) / n_i[0] ** 2,
            lambda n_i, k: (n_i[0] * h2(n_i[0]) - h1(n_i[0]) ** 2) / n_i[0] ** 2,
            "variance",
            _first_reciprocal,
        ),
        Formula(
            "14",
            "Var[MRR]",
            "(1/n^2) sum_i (N_i H_2(N_i) - H(N_i)^2) / N_i^2",
            "(1/n^2) sum_i (N_i H_2(N_i) - H(N_i)^2) / N_i^2",
            lambda n_i, k: np.sum((n_i * h2(n_i) - h1(n_i) ** 2) / n_i**2) / len(n_i) ** 2,
            lambda n_i, k: np.sum((n_i * h2(n_i) - h1(n_i) ** 2) / n_i**2) / len(n_i) ** 2,
            "variance",
            _mrr,
        ),
        Formula(
            "14 (*)",
            "Var[MRR]",
            "(N H_2(N) - H(N)^2) / (n N^2)",
            "(N H_2(N) - H(N)^2) / (n N^2)",
            lambda n_i, k: (n_i[0] * h2(n_i[0]) - h1(n_i[0]) ** 2) / (len(n_i) * n_i[0] ** 2),
            lambda n_i, k: (n_i[0] * h2(n_i[0]) - h1(n_i[0]) ** 2) / (len(n_i) * n_i[0] ** 2),
            "variance",
            _mrr,
            constant_n=True,
        ),
        Formula(
            "19",
            "E[H_k]",
            "(1/n) sum_i p_i",
            "(1/n) sum_i p_i",
            lambda n_i, k: np.mean(p(n_i, k)),
            lambda n_i, k: np.mean(p(n_i, k)),
            "mean",
            _hits,
        ),
        Formula(
            "19 (*)",
            "E[H_k]",
            "min(k/N, 1)",
            "min(k/N, 1)",
            lambda n_i, k: min(k / n_i[0], 1.0),
            lambda n_i, k: min(k / n_i[0], 1.0),
            "mean",
            _hits,
            constant_n=True,
        ),
        Formula(
            "20",
            "Var[H_k]",
            "(1/n^2) sum_i p_i (1 - p_i)",
            "(1/n^2) sum_i p_i (1 - p_i)",
            lambda n_i, k: np.sum(p(n_i, k) * (1 - p(n_i, k))) / len(n_i) ** 2,
            lambda n_i, k: np.sum(p(n_i, k) * (1 - p(n_i, k))) / len(n_i) ** 2,
            "variance",
            _hits,
        ),
        Formula(
            "20 (*)",
            "Var[H_k]",
            "k (N - k) / (n^2 N^2) if k <= N, else 0",
            "k (N - k) / (n N^2) if k <= N, else 0",
            lambda n_i, k: k * (n_i[0] - k) / (len(n_i) ** 2 * n_i[0] ** 2),
            lambda n_i, k: k * (n_i[0] - k) / (len(n_i) * n_i[0] ** 2),
            "variance",
            _hits,
            constant_n=True,
        ),
        Formula(
            "23-24",
            "E[GMR]",
            "prod_i E[r_i^(1/n)], log E[r^(1/n)] = -log N + logsumexp_k (log k / n)",
            "(as printed)",
            lambda n_i, k: float(np.exp(log_expected_power(n_i, 1 / len(n_i)).sum())),
            lambda n_i, k: float(np.exp(log_expected_power(n_i, 1 / len(n_i)).sum())),
            "mean",
            _gmr,
        ),
        Formula(
            "ambiguity: E[MR]",
            "E[MR]",
            "(1/(2n)) sum_i (#S_i + 1)",
            "(1/(2n)) sum_i (#S_i + 1)",
            lambda n_i, k: np.sum(n_i + 1) / (2 * len(n_i)),
            lambda n_i, k: np.sum(n_i + 1) / (2 * len(n_i)),
            "mean",
            _mr,
        ),
        Formula(
            "ambiguity: AMR",
            "E[AMR] (must be 1)",
            "2 sum_i r_i / sum_i (#S_i + 1)",
            "(as printed)",
            _constant(1.0),
            _constant(1.0),
            "mean",
            _amr_ambiguity_printed,
        ),
        Formula(
            "ambiguity: AMRI",
            "E[AMRI] (must be 0)",
            "2 sum_i (r_i - 1) / sum_i #S_i",
            "1 - 2 sum_i (r_i - 1) / sum_i (#S_i - 1)",
            _constant(0.0),
            _constant(0.0),
            "mean",
            _amri_ambiguity_printed,
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
    generator = np.random.default_rng(seed)
    settings = {
        f"constant N={constant_candidates}, n={num_ranks}": np.full(num_ranks, constant_candidates),
        f"varying N_i in [2, {2 * constant_candidates}], n={num_ranks}": generator.integers(
            2, 2 * constant_candidates + 1, size=num_ranks
        ),
    }
    rows = []
    for setting, n_i in settings.items():
        ranks = sample_ranks(np.random.default_rng(seed + 1), n_i.astype(float), replicates)
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
            corrected = float(formula.corrected_value(n_i, k))
            rows.append(
                {
                    "equation": formula.equation,
                    "quantity": formula.quantity,
                    "setting": setting,
                    "published": formula.published,
                    "corrected": formula.corrected,
                    "published_value": published,
                    "corrected_value": corrected,
                    "simulated": simulated,
                    "simulation_error": error,
                    "z_published": _z(published, simulated, error),
                    "z_corrected": _z(corrected, corrected_simulated, corrected_error),
                    "replicates": replicates,
                }
            )
    table = pd.DataFrame(rows)
    table["published_holds"] = table["z_published"].abs() < tolerance_z
    table["corrected_holds"] = table["z_corrected"].abs() < tolerance_z
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
    """The rows where a published expression disagrees with the simulation."""
    columns = [
        "equation",
        "quantity",
        "setting",
        "published",
        "corrected",
        "published_value",
        "corrected_value",
        "simulated",
        "simulation_error",
        "z_published",
        "z_corrected",
    ]
    return check.loc[~check["published_holds"], columns].reset_index(drop=True)
