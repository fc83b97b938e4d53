"""What the rule file reads at parse time: the command-line arguments built from the
study's settings. Kept free of pandas, numpy and the plotting stack, which every
Snakemake call would otherwise load."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The study's hook for systems from outside (kgrank.studies.external_parts): none, since it
# reads the datasets' splits only, never a system's ranks.
EXTERNAL_PARTS: dict[str, str | None] = {}


def splits_arguments(settings: Mapping[str, Any]) -> str:
    """`--splits ...` of the lookup table, from ``studies.moments.splits``."""
    return "--splits " + " ".join(settings["splits"])


def montecarlo_arguments(settings: Mapping[str, Any]) -> str:
    """The Monte Carlo check's replicates and family-wise level, from
    ``studies.moments.montecarlo_replicates`` and ``.montecarlo_alpha``."""
    return (
        f"--montecarlo-replicates {settings['montecarlo_replicates']}"
        f" --montecarlo-alpha {settings['montecarlo_alpha']}"
    )


def errata_arguments(settings: Mapping[str, Any]) -> str:
    """The errata's replicates, from ``studies.moments.formula_montecarlo_replicates``."""
    return f"--formula-montecarlo-replicates {settings['formula_montecarlo_replicates']}"
