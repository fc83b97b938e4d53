"""Checks on the workflow configuration that must pass before any job runs.

Snakemake's ``validate`` fills defaults from the schema; these checks come first so
that a bad key ends the run with one line naming the key and the fix, and so that
every hyperparameter file is checked before the first model trains.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from kgrank.errors import KgrankInputError
from kgrank.hyperparameters import load_hyperparameters


def check_config(config: Mapping[str, Any], schema_path: str | Path, source: str = "the config") -> None:
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(dict(config))
    )
    if error is not None:
        key = ".".join(str(part) for part in error.absolute_path) or "(top level)"
        raise KgrankInputError(f"{source}: key {key}: {error.message}; see {schema_path} for what is allowed")


def hyperparameter_path(hyperparameters_dir: str | Path, dataset: str, model: str) -> Path:
    return Path(hyperparameters_dir) / dataset / f"{model}.yaml"


def check_pairs(
    datasets: Iterable[str], models: list[str], hyperparameters_dir: str | Path
) -> dict[tuple[str, str], dict[str, Any]]:
    """Load and validate the hyperparameter file of every (dataset, model) pair."""
    checked = {}
    for dataset in datasets:
        for model in models:
            path = hyperparameter_path(hyperparameters_dir, dataset, model)
            if not path.is_file():
                raise KgrankInputError(
                    f"{path}: no hyperparameters for model {model!r} on dataset {dataset!r}; "
                    f"add the file (see `kgrank import-hyperparameters`) or remove {model!r} "
                    f"from `models` / {dataset!r} from `datasets` in the config"
                )
            loaded = load_hyperparameters(path)
            for key, expected in (("dataset", dataset), ("model", model)):
                if loaded[key] != expected:
                    raise KgrankInputError(
                        f"{path}: key {key}: says {loaded[key]!r} but the file's place says {expected!r}; "
                        "move the file or correct the key"
                    )
            checked[(dataset, model)] = loaded
    return checked


def epoch_cap(budget: Mapping[str, Any], model: str) -> int | None:
    """The epoch cap of one model: its own entry in ``max_epochs_by_model``, else ``max_epochs``."""
    return (budget.get("max_epochs_by_model") or {}).get(model, budget.get("max_epochs"))


def budget_caption(budget: Mapping[str, Any], models: list[str]) -> str:
    """One sentence stating the training budget, for figure captions."""
    caps = {model: epoch_cap(budget, model) for model in models}
    if all(cap is None for cap in caps.values()):
        return "Training budget: the published number of epochs for every model."
    parts = [f"{model} {cap if cap is not None else 'published'}" for model, cap in caps.items()]
    return "Training budget (epochs, capped below the published 151-501): " + ", ".join(parts) + "."
