# Helpers shared by every stage and study: configuration checks, the list of
# (dataset, model) pairs, the paths every rule agrees on, and TARGETS, the list that
# each study extends with its outputs and that `rule all` asks for.
import inspect
import json
import os
import sys
from pathlib import Path

from snakemake.utils import validate

from kgrank.cli.main import config_arguments
from kgrank.data.datasets import SPLITS
from kgrank.errors import KgrankInputError
from kgrank.studies import external_studies
from kgrank.systems import PYKEEN_MODEL_FILE
from kgrank.workflow.parts import COMPARISON_PART, SAMPLED_RANKS_PART
from kgrank.schemas import CONFIG_SCHEMA
from kgrank.workflow.settings import STUDY_SCHEMA_DIR, settings_json
from kgrank.workflow.config import (
    budget_caption,
    check_budget,
    check_config,
    check_datasets,
    check_sampled_candidates,
    check_external_systems,
    check_pairs,
    external_system_paths,
    EXTERNAL_KINDS,
    hyperparameter_path,
    known_entity_count,
    pair_budget,
    study_enabled,
    study_pairs,
    study_schemas,
    training_runs,
)


envvars:
    "PATH",


# Rules call the `kgrank` command. Put the interpreter running Snakemake first on PATH
# so that a virtual environment works without being activated; a rule's conda
# environment, when used, is activated later and takes precedence.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

STUDY_SCHEMAS = study_schemas(STUDY_SCHEMA_DIR)
# Errors name the config file(s) the keys came from.
CONFIG_SOURCE = " + ".join(map(str, workflow.configfiles)) or "the config"
check_config(config, CONFIG_SCHEMA, source=CONFIG_SOURCE, study_schema_dir=STUDY_SCHEMA_DIR)
validate(config, str(CONFIG_SCHEMA))
check_datasets(config["datasets"], source=CONFIG_SOURCE)
# Every study gets its settings with the schema's defaults, listed or not: a study that
# is not listed runs nothing of its own, but a listed one may need its rules.
for _study, _schema in STUDY_SCHEMAS.items():
    if config["studies"].get(_study) is None:
        config["studies"][_study] = {"enabled": _study in config["studies"]}
    validate(config["studies"][_study], str(_schema))

DATASETS = list(config["datasets"])
# Datasets with `train: false` are prepared and enter the moments study and Table 4,
# but no model is trained on them.
TRAIN_DATASETS = [name for name in DATASETS if config["datasets"][name].get("train", True)]
MODELS = list(config["models"])
HYPERPARAMETERS_DIR = Path(workflow.basedir) / config["hyperparameters_dir"]
# Every hyperparameter file is checked here, at parse time, before any job runs.
HYPERPARAMETERS = check_pairs(TRAIN_DATASETS, MODELS, HYPERPARAMETERS_DIR)
# Pairs a study trains beyond datasets x models (the `ir` study's extra systems).
STUDY_PAIRS = study_pairs(config)
for _dataset, _model in STUDY_PAIRS:
    HYPERPARAMETERS.update(check_pairs([_dataset], [_model], HYPERPARAMETERS_DIR))
check_budget(
    config["budget"],
    TRAIN_DATASETS,
    MODELS,
    STUDY_PAIRS,
    HYPERPARAMETERS_DIR,
    HYPERPARAMETERS,
    source=CONFIG_SOURCE,
)
TRAINED_MODELS = MODELS + sorted({model for _, model in STUDY_PAIRS} - set(MODELS))
# Systems kgrank did not train (`external_systems`), checked now: ranked on their
# dataset's test set and evaluated like the trained pairs (rules external_ranks and
# external_metrics), they join every table and figure made from ranks or metrics alone.
EXTERNAL_PAIRS = check_external_systems(
    config["external_systems"],
    config["datasets"],
    TRAINED_MODELS,
    Path(workflow.basedir),
    source=CONFIG_SOURCE,
)
EXTERNAL_NAMES = sorted({name for _, name in EXTERNAL_PAIRS})
# External systems given as PyKEEN folders: kgrank loads their model, so the rules that
# rescore a model (sampled candidates, candidate subsets, ties, the IR passes) take them
# too, beside every trained pair (SCORED_PAIRS); a rank table or score matrix cannot join.
RESCORED_PAIRS = [
    (dataset, name)
    for dataset, name in EXTERNAL_PAIRS
    if "model" in config["external_systems"][dataset][name]
    and config["external_systems"][dataset][name].get("rescore", True)
]
SCORED_PAIRS = [(dataset, model) for dataset in TRAIN_DATASETS for model in MODELS] + RESCORED_PAIRS
# the {model} of a rule that scores a trained model or a rescored PyKEEN folder
SCORED_MODEL = "|".join(TRAINED_MODELS + sorted({name for _, name in RESCORED_PAIRS}))
# Each trained pair's further training seeds (comparison.seeds): runs beside the one of
# `seed`, which every study reads; each is trained, ranked and evaluated under
# results/seeds/<seed>/ and enters the comparison as a run of its system.
TRAINING_RUNS = training_runs(
    config["comparison"], config["seed"], TRAIN_DATASETS, MODELS, source=CONFIG_SOURCE
)
RUN_PAIRS = [(dataset, model, run) for (dataset, model), runs in TRAINING_RUNS.items() for run in runs]
# A hook each .smk file fills for the external-systems table: each part that rescores
# models or runs where configured (its label there) -> the (dataset, name) pairs this
# configuration runs it on.
RESCORED_IN = {}


wildcard_constraints:
    dataset="|".join(DATASETS),
    model="|".join(TRAINED_MODELS),


RESULTS = "results"
# The targets of the default job; each study adds its outputs when it is switched on.
TARGETS = []
# The hooks each study fills from its own file, so that this file and the stages name no study:
# functions (dataset, model, trained pair, dataset size) -> estimated seconds of the
# study's long jobs that wait for the pair's training (a training's priority adds them);
AFTER_TRAINING_SECONDS = []
# a path under results/ (a file, or a folder for every file below it) -> function (path) ->
# whether this configuration writes it (the scorecard's inputs; any other path: written);
SCORECARD_MADE = {}
# the values of the claims' {name} placeholders (kgrank scorecard --param).
SCORECARD_PARAMS = {}


def enabled(study):
    return study_enabled(config, study)


def settings(study):
    return config["studies"][study]


def command_settings(study, command, only=None):
    """A rule's `--settings {params.settings:q}`: the settings of `study` that the command
    reads (kgrank.workflow.settings), so that a job reruns when one of them changes;
    `only` narrows a mapping to the entry the job reads (settings_json)."""
    return settings_json(study, command, settings(study), only)


def config_options(command, **values):
    """A rule's `{params.options}`: the config's values of the core keys that `kgrank
    <command>` takes as options (kgrank.cli.config_options), so that a job reruns when one
    of them changes; `values` gives a job its own (seed=wildcards.run)."""
    return config_arguments(config, command, **values)


# --- paths: called without arguments they give the wildcard pattern -----------------


def dataset_dir(dataset="{dataset}"):
    return f"{RESULTS}/data/{dataset}"


def split_files(dataset="{dataset}"):
    """The train/valid/test trio of a prepared dataset, as named inputs."""
    return {split: f"{dataset_dir(dataset)}/{split}.tsv" for split in SPLITS}


def stats_file(dataset="{dataset}"):
    return f"{dataset_dir(dataset)}/stats.json"


def model_dir(dataset="{dataset}", model="{model}"):
    return f"{RESULTS}/models/{dataset}/{model}"


def rank_file(dataset="{dataset}", model="{model}"):
    return f"{RESULTS}/ranks/{dataset}/{model}.parquet"


def metrics_file(dataset="{dataset}", model="{model}"):
    return f"{RESULTS}/metrics/{dataset}/{model}.tsv"


# A further training run (comparison.seeds) lays out its model, ranks and metrics as
# results/ does, under results/seeds/<seed>/.
def run_model_dir(dataset="{dataset}", model="{model}", run="{run}"):
    return f"{RESULTS}/seeds/{run}/models/{dataset}/{model}"


def run_rank_file(dataset="{dataset}", model="{model}", run="{run}"):
    return f"{RESULTS}/seeds/{run}/ranks/{dataset}/{model}.parquet"


def run_metrics_file(dataset="{dataset}", model="{model}", run="{run}"):
    return f"{RESULTS}/seeds/{run}/metrics/{dataset}/{model}.tsv"


def sampled_rank_file(dataset="{dataset}", model="{model}", candidates="{candidates}"):
    return f"{RESULTS}/ranks/{dataset}/{model}.sampled-{candidates}.parquet"


# The `moments` study's lookup table and Monte Carlo check: the `paper` study's audit
# reads them too.
def moments_file(dataset="{dataset}"):
    return f"{RESULTS}/moments/{dataset}/moments.tsv"


def montecarlo_file(dataset="{dataset}"):
    return f"{RESULTS}/moments/{dataset}/montecarlo.tsv"


def figure_files(name):
    """Every figure as PDF (papers) and PNG (README, report)."""
    return {suffix: f"{RESULTS}/figures/{name}.{suffix}" for suffix in ("pdf", "png")}


def table_files(name):
    """Every report table as Markdown (README, report) and LaTeX (papers)."""
    return {suffix: f"{RESULTS}/tables/{name}.{suffix}" for suffix in ("md", "tex")}


# Every rule's log and benchmark, one folder per stage or study (its name: `data`,
# `train`, ..., `paper`, `ir`, ...), so that a study's costs are summed over one folder.
def log_file(group, name):
    return f"{RESULTS}/logs/{group}/{name}.log"


def benchmark_file(group, name):
    return f"{RESULTS}/benchmarks/{group}/{name}.tsv"


def of_wildcards(path):
    """A path helper as a params function: the path of the job's own wildcards (those
    that the helper takes)."""
    names = inspect.signature(path).parameters
    return lambda wildcards: path(**{name: wildcards[name] for name in names})


def all_pairs(path):
    """``path`` (a helper of dataset and model) for every trained pair."""
    return expand(path(), dataset=TRAIN_DATASETS, model=MODELS)


def evaluated_pairs(path):
    """``path`` for every trained pair and then every external system."""
    return all_pairs(path) + [path(dataset, name) for dataset, name in EXTERNAL_PAIRS]


def all_datasets(path, datasets=None):
    """``path`` (a helper of dataset) for every dataset (or those given)."""
    return expand(path(), dataset=datasets if datasets is not None else DATASETS)


# --- the scorecard's inputs (workflow/rules/scorecard.smk): which claim sources this run makes
# (called after every study file is included, so the study globals below exist)


def scorecard_expand(pattern):
    """A scorecard source's {dataset} and {model} over this run's datasets and systems."""
    return expand(pattern, dataset=DATASETS, model=TRAINED_MODELS + EXTERNAL_NAMES)


def scorecard_made(path):
    """Whether this configuration's rules write ``path`` (relative to results/)."""
    parts = path.split("/")
    if parts[0] == "data":
        return parts[1] in DATASETS
    if parts[0] == "metrics":
        evaluated = {(dataset, model) for dataset in TRAIN_DATASETS for model in MODELS}
        return (parts[1], parts[2].removesuffix(".tsv")) in evaluated | set(EXTERNAL_PAIRS)
    for prefix, made in SCORECARD_MADE.items():
        if path == prefix or path.startswith(f"{prefix}/"):
            return made(path)
    return True


# --- the comparison (workflow/rules/compare.smk) -------------------------------------


def compared_systems():
    """Dataset -> [(system, rank file)], a system's runs (comparison.seeds) after its
    first, in the order of `models` and then of `external_systems`."""
    systems = {}
    for dataset in TRAIN_DATASETS:
        for model in MODELS:
            runs = [rank_file(dataset, model)]
            runs += [run_rank_file(dataset, model, run) for run in TRAINING_RUNS[(dataset, model)]]
            systems.setdefault(dataset, []).extend((model, path) for path in runs)
    for dataset, name in EXTERNAL_PAIRS:
        systems.setdefault(dataset, []).append((name, rank_file(dataset, name)))
    return systems


def compare_arguments(wildcards):
    from shlex import quote

    return " ".join(
        f"--dataset {quote(dataset_dir(dataset))} --systems "
        + " ".join(quote(f"{name}={path}") for name, path in systems)
        for dataset, systems in compared_systems().items()
    )


# --- command-line arguments from the config ------------------------------------------


def hyperparameters_file(wildcards):
    return hyperparameter_path(HYPERPARAMETERS_DIR, wildcards.dataset, wildcards.model)


def dataset_archive(wildcards):
    """The local files a dataset is prepared from: its archive, or its folder's split files
    (so that a changed file remakes the dataset); none for a PyKEEN source."""
    from kgrank.data.datasets import folder_split_files

    source = config["datasets"][wildcards.dataset]
    if source["source"] == "folder":
        return [str(path) for path in folder_split_files(source["path"]).values()]
    return [source["archive"]] if source["source"] == "archive" else []


def dataset_source_arguments(wildcards):
    from shlex import quote

    source = config["datasets"][wildcards.dataset]
    if source["source"] not in ("archive", "folder"):
        return ""
    if source["source"] == "archive":
        arguments = f"--archive {quote(source['archive'])}"
        if "sha256" in source:
            arguments += f" --sha256 {source['sha256']}"
    else:
        arguments = f"--folder {quote(source['path'])}"
        if source.get("sha256"):
            pairs = [f"{split}={digest}" for split, digest in source["sha256"].items()]
            arguments += " --sha256 " + " ".join(pairs)
    header = source.get("header", "auto")
    if header != "auto":
        arguments += f" --header {'yes' if header else 'no'}"
    return arguments


def external_entry(wildcards):
    systems = config["external_systems"].get(wildcards.dataset, {})
    if wildcards.model not in systems:
        raise KgrankInputError(
            f"{CONFIG_SOURCE}: no external system {wildcards.model!r} on {wildcards.dataset}; "
            "list it under external_systems"
        )
    return systems[wildcards.model]


def external_files(dataset, name):
    """The files of an external system (a PyKEEN folder by its pickle), so that a changed
    file ranks it again."""
    paths = external_system_paths(config["external_systems"][dataset][name], Path(workflow.basedir))
    return [str(path / PYKEEN_MODEL_FILE if kind == "model" else path) for kind, path in paths.items()]


def external_kind(wildcards):
    entry = external_entry(wildcards)
    return next(kind for kind, keys in EXTERNAL_KINDS.items() if keys[0] in entry)


def external_inputs(wildcards):
    external_entry(wildcards)  # an unknown system is named
    return external_files(wildcards.dataset, wildcards.model)


def external_arguments(wildcards):
    from shlex import quote

    entry = external_entry(wildcards)
    paths = external_system_paths(entry, Path(workflow.basedir))
    arguments = [f"--{kind} {quote(str(path))}" for kind, path in paths.items()]
    arguments += ["--trust-pickle"] if entry.get("trusted") else []
    return " ".join([*arguments, f"--identifiers {entry.get('identifiers', 'auto')}"])


def scoring_inputs(wildcards):
    """The files a scoring job loads its model from: a trained pair's model.pt and
    config.json, or an external PyKEEN folder's pickle."""
    if (wildcards.dataset, wildcards.model) in RESCORED_PAIRS:
        return {"model": external_files(wildcards.dataset, wildcards.model)[0]}
    folder = model_dir(wildcards.dataset, wildcards.model)
    return {"model": f"{folder}/model.pt", "config": f"{folder}/config.json"}


def scoring_model_dir(wildcards):
    """A scoring rule's --model-dir value: the trained pair's folder, or the external
    PyKEEN folder followed by --trust-pickle (check_external_systems requires trusted: true
    for one). The flag rides on this value so that the rules' shell commands and a trained
    pair's params stay as they were: an existing results/ reruns none of its scoring jobs."""
    from shlex import quote

    if (wildcards.dataset, wildcards.model) in RESCORED_PAIRS:
        folder = external_system_paths(external_entry(wildcards), Path(workflow.basedir))["model"]
        return f"{quote(str(folder))} --trust-pickle"
    return model_dir(wildcards.dataset, wildcards.model)


def budget_arguments(wildcards):
    budget = pair_budget(config["budget"], wildcards.dataset, wildcards.model)
    stopping = budget.pop("early_stopping")
    arguments = [
        f"--{key.replace('_', '-')} {value}" for key, value in budget.items() if value is not None
    ]
    if stopping is not None:
        arguments.append(
            f"--early-stopping-frequency {stopping['frequency']} --patience {stopping.get('patience', 2)}"
            f" --relative-delta {stopping.get('relative_delta', 0.002)}"
        )
    return " ".join(arguments)


BUDGET_CAPTION = budget_caption(config["budget"], TRAIN_DATASETS, MODELS)
# for the figures that show the external systems too (Figure 1, the ambiguity drift)
EVALUATED_CAPTION = budget_caption(config["budget"], TRAIN_DATASETS, MODELS, EXTERNAL_PAIRS)
# Each trained dataset's entity count as far as it is known before any job (None: a local
# dataset not prepared yet), for the parse-time checks of candidate sizes.
KNOWN_ENTITY_COUNTS = {
    name: known_entity_count(name, config["datasets"][name], stats_file(name)) for name in TRAIN_DATASETS
}


# --- job priorities: the longest jobs start first ------------------------------------
# On 2 cores a long job that starts last runs alone at the end. Snakemake starts the ready
# job of highest priority first, so each long rule's `priority:` is its estimated seconds
# (kgrank.workflow.scheduling), a training's raised by the long jobs waiting for it, and a job that
# gates them (preparing a dataset, a study's query files) takes the highest priority it
# gates. Estimates only order jobs; every other rule stays at priority 0. Evaluated when the
# DAG is built (the hooks that later rule files fill are complete by then).
from functools import cache

from kgrank.workflow import scheduling


@cache
def dataset_size(dataset):
    return scheduling.dataset_size(dataset, stats_file(dataset))


@cache
def trained_pair(dataset, model):
    path = hyperparameter_path(HYPERPARAMETERS_DIR, dataset, model)
    return scheduling.trained_pair(path, config["budget"], dataset, model)


def _seconds_after_training(dataset, model):
    """The long jobs that start only once the pair is trained: its ranks and the studies'
    scoring passes (AFTER_TRAINING_SECONDS)."""
    pair, size = trained_pair(dataset, model), dataset_size(dataset)
    seconds = []
    if dataset in TRAIN_DATASETS and model in MODELS:
        seconds.append(scheduling.ranking_seconds(pair.pipeline, size))
    for study_seconds in AFTER_TRAINING_SECONDS:
        seconds += study_seconds(dataset, model, pair, size)
    return seconds


def pair_train_priority(dataset, model):
    size = dataset_size(dataset)
    if size is None:  # a local dataset not prepared yet: no estimate, no preference
        return 0
    own = scheduling.pair_training_seconds(trained_pair(dataset, model), size)
    return scheduling.priority([own, *_seconds_after_training(dataset, model)])


def scoring_priority(seconds_of):
    """A params function: the priority of a job that scores a trained pair's test set,
    from ``seconds_of(pipeline, size)`` (0 while the dataset's size is unknown)."""

    def priority(wildcards):
        size = dataset_size(wildcards.dataset)
        if size is None or wildcards.model not in TRAINED_MODELS:  # no estimate for an external system
            return 0
        return scheduling.priority(seconds_of(trained_pair(wildcards.dataset, wildcards.model).pipeline, size))

    return priority


def train_priority(wildcards):
    return pair_train_priority(wildcards.dataset, wildcards.model)


def run_train_priority(wildcards):
    """A further training run (comparison.seeds): its training and its ranks, since no study
    waits for it (the comparison, its only reader, is short)."""
    size = dataset_size(wildcards.dataset)
    if size is None:
        return 0
    pair = trained_pair(wildcards.dataset, wildcards.model)
    own = scheduling.pair_training_seconds(pair, size)
    return scheduling.priority([own, scheduling.ranking_seconds(pair.pipeline, size)])


# one scoring pass of the test set
ranks_priority = scoring_priority(scheduling.ranking_seconds)


def prepare_priority(wildcards):
    """Above every training the dataset gates: otherwise the jobs that need no dataset (the
    family-tree trainings) would all start before FB15k-237 is prepared."""
    dataset = wildcards.dataset
    pairs = [(dataset, model) for model in MODELS] if dataset in TRAIN_DATASETS else []
    pairs += [pair for pair in STUDY_PAIRS if pair[0] == dataset]
    return max((pair_train_priority(*pair) for pair in pairs), default=-1) + 1
