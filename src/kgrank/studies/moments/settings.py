"""What the rule file reads at parse time (its commands read their settings through
``--settings``: kgrank.workflow.settings). Kept free of pandas, numpy and the plotting
stack, which every Snakemake call would otherwise load."""

from __future__ import annotations

# The study's hook for systems from outside (kgrank.studies.external_parts): none, since it
# reads the datasets' splits only, never a system's ranks.
EXTERNAL_PARTS: dict[str, str | None] = {}
