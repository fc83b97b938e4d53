"""Which parts of the workflow a system from outside joins, and which it skips and why.

A system kgrank did not train (``external_systems`` in the config) joins every table and
figure made from ranks or metric tables like a trained model. A PyKEEN folder also joins
the parts that rescore its model (fresh candidates, candidate subsets, ties, run lists of
every entity); a rank table or score matrix holds no model, so they leave it out. A part
that needs a training run leaves out every kind. This table says which, so that no
reader takes a missing row for an oversight.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from kgrank.data.datasets import sha256_of
from kgrank.errors import KgrankInputError
from kgrank.systems import PYKEEN_MODEL_FILE
from kgrank.workflow.parts import COMPARISON_PART, RESCORES_MODEL, SAMPLED_RANKS_PART, WHERE_RUN

KIND_LABELS = {"model": "PyKEEN pipeline folder", "ranks": "rank table", "scores": "score matrix"}

# The stages' parts: None when the part takes every external system, RESCORES_MODEL when
# it takes PyKEEN folders only, WHERE_RUN when it takes every system where it runs, else
# why it takes none.
# The studies' own parts are their hooks (kgrank.studies.external_parts): this module names
# no study.
STAGE_PARTS: dict[str, str | None] = {
    "metric tables (results/metrics)": None,
    SAMPLED_RANKS_PART: RESCORES_MODEL,
    COMPARISON_PART: WHERE_RUN,
}


def _status(skipped: str | None, kind: str, rescored: bool) -> str:
    if skipped == WHERE_RUN:
        return "joined" if rescored else "skipped: this configuration does not run the part"
    if skipped is None or (skipped == RESCORES_MODEL and kind == "model" and rescored):
        return "joined"
    if skipped == RESCORES_MODEL and kind == "model":
        return "skipped: this configuration does not run the part on it"
    if skipped == RESCORES_MODEL:
        return f"skipped: rescores the model, which a {KIND_LABELS[kind]} does not hold"
    return f"skipped: {skipped}"


def participation_table(
    systems: Mapping[str, Mapping[str, Mapping[str, str]]],
    study_parts: Iterable[tuple[str, str, str | None]],
    root: str | Path = ".",
    rescored: Mapping[str, Iterable[str]] | None = None,
) -> pd.DataFrame:
    """One row per external system and part of the run, the stages' parts first, then
    ``study_parts`` (the enabled studies' (study, part, None or why skipped)): dataset,
    system, kind, its files with their sha256, the part, and ``joined`` or the reason it
    was skipped. ``systems``: dataset -> name -> {kind: path} (``identifiers``, ``trusted`` and
    ``rescore`` ignored);
    ``root``: where relative paths start (the repository); ``rescored``: per part that
    rescores models (RESCORES_MODEL) or runs where configured (WHERE_RUN), the
    ``dataset/name`` of each system this configuration runs it on (where the part runs,
    and on which datasets, is the config's)."""
    rescored_in = {part: set(names) for part, names in (rescored or {}).items()}
    parts = [(part, skipped) for part, skipped in STAGE_PARTS.items()]
    parts += [(f"{study}: {part}", skipped) for study, part, skipped in study_parts]
    rows = []
    for dataset, entries in systems.items():
        for name, entry in entries.items():
            files = {
                key: Path(path)
                for key, path in entry.items()
                if key not in ("identifiers", "trusted", "rescore")
            }
            kinds = [key for key in KIND_LABELS if key in files]
            if not kinds:
                raise KgrankInputError(
                    f"external system {dataset}/{name}: none of {', '.join(KIND_LABELS)}; give one"
                )
            kind = kinds[0]
            # the paths as the config gives them (the table reads the same on every clone)
            shown = [file / PYKEEN_MODEL_FILE if key == "model" else file for key, file in files.items()]
            sources = "; ".join(f"{path} (sha256 {sha256_of(Path(root) / path)[:12]})" for path in shown)
            for part, skipped in parts:
                rows.append(
                    {
                        "dataset": dataset,
                        "system": name,
                        "kind": KIND_LABELS[kind],
                        "files": sources,
                        "part": part,
                        "status": _status(skipped, kind, f"{dataset}/{name}" in rescored_in.get(part, ())),
                    }
                )
    return pd.DataFrame(rows, columns=["dataset", "system", "kind", "files", "part", "status"])
