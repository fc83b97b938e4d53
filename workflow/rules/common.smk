# Helpers shared by every stage: configuration checks, the list of (dataset, model)
# pairs, and the paths every rule agrees on.
import os
import sys
from pathlib import Path

from snakemake.utils import validate

from kgrank.config import (
    budget_caption,
    check_budget,
    check_config,
    check_pairs,
    hyperparameter_path,
    pair_budget,
)


envvars:
    "PATH",


# Rules call the `kgrank` command. Put the interpreter running Snakemake first on PATH
# so that a virtual environment works without being activated; a rule's conda
# environment, when used, is activated later and takes precedence.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

CONFIG_SCHEMA = Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml"
check_config(config, CONFIG_SCHEMA, source=" + ".join(map(str, workflow.configfiles)) or "the config")
validate(config, CONFIG_SCHEMA)

DATASETS = list(config["datasets"])
# Datasets with `train: false` are prepared and enter the moments study and Table 4,
# but no model is trained on them.
TRAIN_DATASETS = [name for name in DATASETS if config["datasets"][name].get("train", True)]
MODELS = list(config["models"])
HYPERPARAMETERS_DIR = Path(workflow.basedir) / config["hyperparameters_dir"]
# Every hyperparameter file is checked here, at parse time, before any job runs.
HYPERPARAMETERS = check_pairs(TRAIN_DATASETS, MODELS, HYPERPARAMETERS_DIR)
check_budget(config["budget"], TRAIN_DATASETS, MODELS)
PUBLISHED_VALUES = config.get("published_values")


wildcard_constraints:
    dataset="|".join(DATASETS),
    model="|".join(MODELS),

RESULTS = "results"


def hyperparameters_file(wildcards):
    return hyperparameter_path(HYPERPARAMETERS_DIR, wildcards.dataset, wildcards.model)


def dataset_archive(wildcards):
    source = config["datasets"][wildcards.dataset]
    return [source["archive"]] if source["source"] == "archive" else []


def dataset_source_arguments(wildcards):
    source = config["datasets"][wildcards.dataset]
    if source["source"] != "archive":
        return ""
    arguments = f"--archive {source['archive']}"
    if "sha256" in source:
        arguments += f" --sha256 {source['sha256']}"
    return arguments


def budget_arguments(wildcards):
    budget = pair_budget(config["budget"], wildcards.dataset, wildcards.model)
    arguments = [
        f"--{key.replace('_', '-')} {value}" for key, value in budget.items() if value is not None
    ]
    return " ".join(arguments)


def all_pairs(pattern):
    return expand(pattern, dataset=TRAIN_DATASETS, model=MODELS)


def published_outputs():
    """The re-derivation of published values and the comparison with published results,
    when the config names the published tables."""
    outputs = (
        [f"{RESULTS}/tables/published_comparison.md", f"{RESULTS}/figures/published_comparison.pdf"]
        if config.get("published_results")
        else []
    )
    if not PUBLISHED_VALUES:
        return outputs
    return outputs + [
        f"{RESULTS}/tables/published_audit.md",
        f"{RESULTS}/figures/published_audit.pdf",
        f"{RESULTS}/figures/figure1_published.pdf",
        f"{RESULTS}/figures/figure1_published.png",
    ]
