"""Checks on the workflow configuration that must pass before any job runs.

Snakemake's ``validate`` fills defaults from the schema; these checks come first so
that a bad key ends the run with one line naming the key and the fix, and so that
every hyperparameter file is checked before the first model trains.
"""

from __future__ import annotations

import contextlib
import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from kgrank.data.io import first_non_finite, load_user_yaml, parse_schema
from kgrank.data.names import RULES
from kgrank.errors import KgrankInputError, yaml_refusal
from kgrank.training.hyperparameters import (
    BUDGET_KEYWORDS,
    StrictValidator,
    apply_pair_budget,
    check_value,
    load_hyperparameters,
    validate_pipeline,
)
from kgrank.workflow.remembered import remembered

STUDY_SCHEMA_SUFFIX = ".schema.yaml"


def study_schemas(study_schema_dir: str | Path) -> dict[str, Path]:
    """Each study's schema fragment by study name (src/kgrank/schemas/studies/<study>.schema.yaml)."""
    return {
        path.name.removesuffix(STUDY_SCHEMA_SUFFIX): path
        for path in sorted(Path(study_schema_dir).glob(f"*{STUDY_SCHEMA_SUFFIX}"))
    }


# A schema object may list keys it no longer takes under this keyword, each with the
# key that replaced it, so that a config written for an older kgrank gets the new name
# instead of "additional properties are not allowed".
RENAMED_KEYWORD = "x-renamed"


def _check_renamed(data: Any, schema: Mapping[str, Any], source: str, path: str, schema_path: Path) -> None:
    if not isinstance(data, Mapping):
        return
    for old, new in (schema.get(RENAMED_KEYWORD) or {}).items():
        if old in data:
            raise KgrankInputError(
                f"{source}: key {path}{old}: renamed; write {path}{new} instead (see {schema_path})"
            )
    for key, child in (schema.get("properties") or {}).items():
        if key in data and isinstance(child, Mapping):
            _check_renamed(data[key], child, source, f"{path}{key}.", schema_path)


def check_against(data: Any, schema_path: Path, source: str, prefix: str = "") -> None:
    schema = parse_schema(schema_path.read_text(encoding="utf-8"))
    _check_renamed(data, schema, source, prefix, schema_path)
    # an integer key refuses 7.0 (JSON Schema counts it an integer; the jobs' argparse does not)
    error = jsonschema.exceptions.best_match(StrictValidator(schema).iter_errors(data))
    if error is not None:
        path = [str(part) for part in error.absolute_path]
        if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
            # name the unexpected key itself, not only the mapping that holds it
            allowed = set(error.schema.get("properties", {}))
            path += sorted(str(key) for key in error.instance if key not in allowed)[:1]
        rule = RULES.get(error.validator_value) if error.validator == "pattern" else None
        if rule is not None:
            # a name that becomes a path component (kgrank.data.names says why the rule); under
            # propertyNames (possibly through a $ref) the bad name is the key itself
            if "propertyNames" in list(error.relative_schema_path)[-3:]:
                path.append(repr(error.instance))
                problem = rule
            else:
                problem = f"{error.instance!r}: {rule}"
            key = prefix + ".".join(path)
            raise KgrankInputError(f"{source}: key {key}: {problem}; rename it")
        key = (prefix + ".".join(path)).rstrip(".") or "(top level)"
        raise KgrankInputError(f"{source}: key {key}: {error.message}; see {schema_path} for what is allowed")


def check_yaml_file(path: str | Path) -> None:
    """A config file that is not valid YAML stops with its file and line: Snakemake's own
    loader says only that some config file is not valid JSON or YAML."""
    path = Path(path)
    try:
        load_user_yaml(path.read_text(encoding="utf-8"), path)
    except yaml.YAMLError as error:
        raise yaml_refusal(path, error) from None


def check_config(
    config: Mapping[str, Any],
    schema_path: str | Path,
    source: str = "the config",
    study_schema_dir: str | Path | None = None,
) -> None:
    """Check the core keys against ``schema_path`` and each section of ``studies`` against
    its study's schema fragment in ``study_schema_dir``; the first error names its key.
    A NaN or infinite number anywhere (``--config lr=.nan`` too) is refused first: the
    schemas' bounds let both through."""
    found = first_non_finite(dict(config))
    if found is not None:
        raise KgrankInputError(f"{source}: key {found[0]}: {found[1]} is not a finite number; give one")
    check_against(dict(config), Path(schema_path), source)
    if study_schema_dir is None:
        return
    known = study_schemas(study_schema_dir)
    for name, section in (config.get("studies") or {}).items():
        if name not in known:
            raise KgrankInputError(
                f"{source}: key studies.{name}: no such study; the studies are {sorted(known)} "
                f"(one schema each in {study_schema_dir})"
            )
        check_against(section if section is not None else {}, known[name], source, prefix=f"studies.{name}.")


# The keys a dataset entry may have beyond `source` and `train`, by source. A PyKEEN entry
# may keep an archive's keys (ignored, as always: switching the source stays one line).
SOURCE_KEYS = {
    "pykeen": {"archive", "sha256"},
    "archive": {"archive", "sha256", "header"},
    "folder": {"path", "sha256", "header"},
}


def check_datasets(datasets: Mapping[str, Mapping[str, Any]], source: str = "the config") -> None:
    """Before any job: a dataset PyKEEN should fetch must be one PyKEEN knows (checked now,
    not when its download job runs); a folder dataset's folder must hold its three splits;
    an entry may not carry a key its source does not read (a typo would be ignored)."""
    from kgrank.data.datasets import folder_split_files

    for name, entry in datasets.items():
        entry = entry or {}
        kind = entry.get("source", "pykeen")
        for key in sorted(set(entry) - {"source", "train"} - SOURCE_KEYS.get(kind, set())):
            readers = [other for other, keys in SOURCE_KEYS.items() if key in keys and other != "pykeen"]
            raise KgrankInputError(
                f"{source}: key datasets.{name}.{key}: not read with source: {kind} (only with "
                f"source: {' or '.join(readers)}); remove it or change the source"
            )
        sha256 = entry.get("sha256")
        if kind == "archive" and sha256 is not None and not isinstance(sha256, str):
            raise KgrankInputError(
                f"{source}: key datasets.{name}.sha256: an archive has one sha256; write sha256: HEX"
            )
        if kind == "folder":
            if sha256 is not None and not isinstance(sha256, Mapping):
                raise KgrankInputError(
                    f"{source}: key datasets.{name}.sha256: a folder has one sha256 per split; write "
                    "sha256: {train: HEX, valid: HEX, test: HEX} (any of them)"
                )
            try:
                folder_split_files(entry["path"])
            except KgrankInputError as error:
                raise KgrankInputError(f"{source}: key datasets.{name}.path: {error}") from None
        if kind == "pykeen":
            remembered("PyKEEN has this dataset", name, lambda name=name: _pykeen_has(name, source))


def _pykeen_has(name: str, source: str) -> bool:
    """True, or a refusal naming PyKEEN's closest dataset names."""
    from pykeen.datasets import dataset_resolver

    try:
        dataset_resolver.lookup(name)
    except (KeyError, ValueError):
        close = difflib.get_close_matches(name, dataset_resolver.lookup_dict, n=3)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise KgrankInputError(
            f"{source}: key datasets.{name}: PyKEEN has no dataset {name!r}; {hint}use a name of "
            "pykeen.datasets.dataset_resolver, or give the dataset a local archive (source: archive) "
            "or folder (source: folder)"
        ) from None
    return True


def known_entity_count(name: str, entry: Mapping[str, Any], stats_path: str | Path) -> int | None:
    """A dataset's entity count as far as it is known before any job: from its prepared
    ``stats.json`` when there is one, else, for a PyKEEN dataset, from the statistics PyKEEN
    documents for it (no download); None for a local dataset not prepared yet, whose
    checks then run in the job that reads it."""
    stats_path = Path(stats_path)
    if stats_path.is_file():
        return int(json.loads(stats_path.read_text(encoding="utf-8"))["entities"])
    if (entry or {}).get("source", "pykeen") != "pykeen":
        return None
    return documented_statistics(name).get("entities")


def documented_statistics(name: str) -> dict[str, int]:
    """The sizes PyKEEN documents for its dataset ``name`` (no download), as many as it
    documents of: entities, training, validation and testing triples; empty for a name
    PyKEEN does not know."""

    def ask() -> dict[str, int]:
        from pykeen.datasets import dataset_resolver

        try:
            statistics = dataset_resolver.lookup(name).docdata("statistics")
        except (KeyError, ValueError, TypeError):
            return {}
        sizes = {}
        for key in ("entities", "training", "validation", "testing"):
            with contextlib.suppress(KeyError, ValueError, TypeError):
                sizes[key] = int(statistics[key])
        return sizes

    return remembered("PyKEEN documents these sizes", name, ask)


def check_sampled_candidates(
    sizes: Sequence[int], entity_counts: Mapping[str, int | None], source: str = "the config"
) -> None:
    """At parse time: each k of ``ranks.sampled_candidates`` must leave some dataset's tasks
    a sample. A task has at most N - 1 candidates besides its true entity (N entities), so
    with k >= N - 1 every task would keep all of them, the full ranking under another name.
    Unknown counts (a local dataset not prepared yet) leave the check to the ranks job."""
    for size in sizes:
        for dataset, count in entity_counts.items():
            if count is not None and size >= count - 1:
                raise KgrankInputError(
                    f"{source}: key ranks.sampled_candidates: {size} candidates per task, but {dataset} "
                    f"has {count} entities, so no task has more than {count - 1} candidates besides its "
                    f"true entity and every one would keep all of them (the full ranking); use sizes "
                    f"below {count - 1}"
                )


EXTERNAL_KINDS = {"model": ("model",), "ranks": ("ranks",), "scores": ("scores", "queries")}


def external_system_paths(entry: Mapping[str, Any], root: Path) -> dict[str, Path]:
    """The files of one entry of ``external_systems`` (kind key -> path), relative paths
    resolved against ``root`` (the repository)."""
    return {key: root / entry[key] for keys in EXTERNAL_KINDS.values() for key in keys if key in entry}


def check_external_systems(
    systems: Mapping[str, Mapping[str, Mapping[str, Any]]],
    datasets: Mapping[str, Mapping[str, Any]],
    trained_models: Iterable[str],
    root: Path,
    source: str = "the config",
) -> list[tuple[str, str]]:
    """Before any job: every external system sits on a trained dataset, has a name no
    trained model has (its rank and metric files share their paths), is one kind (model,
    ranks, or scores with queries) and its files exist. Returns its (dataset, name) pairs."""
    from kgrank.systems import PYKEEN_MODEL_FILE

    trained = set(trained_models)
    pairs = []
    for dataset, entries in systems.items():
        where = f"{source}: key external_systems.{dataset}"
        if dataset not in datasets:
            raise KgrankInputError(f"{where}: no such dataset; use one of {', '.join(datasets)}")
        if not (datasets[dataset] or {}).get("train", True):
            raise KgrankInputError(
                f"{where}: the dataset has train: false, so no study ranks systems on it; set train: true"
            )
        for name, entry in entries.items():
            key = f"{where}.{name}"
            if name in trained:
                raise KgrankInputError(
                    f"{key}: {name!r} is also a trained model; give the external system another name"
                )
            kinds = [kind for kind, keys in EXTERNAL_KINDS.items() if keys[0] in entry]
            if len(kinds) != 1:
                raise KgrankInputError(
                    f"{key}: give exactly one of model: DIR, ranks: FILE, or scores: FILE with queries: FILE"
                    f" (got {', '.join(kinds) or 'none'})"
                )
            kind_keys = EXTERNAL_KINDS[kinds[0]]
            for part in kind_keys[1:]:
                if part not in entry:
                    raise KgrankInputError(f"{key}: {kinds[0]} needs its {part}; add {part}: FILE")
            for part in sorted({part for keys in EXTERNAL_KINDS.values() for part in keys} - set(kind_keys)):
                if part in entry:
                    raise KgrankInputError(f"{key}.{part}: not read with {kinds[0]}; remove it")
            for flag in ("trusted", "rescore"):
                if flag in entry and kinds[0] != "model":
                    raise KgrankInputError(f"{key}.{flag}: only a PyKEEN folder's model is loaded; remove it")
            for part, path in external_system_paths(entry, root).items():
                if part == "model" and not (path / PYKEEN_MODEL_FILE).is_file():
                    raise KgrankInputError(
                        f"{key}.model: {path} holds no {PYKEEN_MODEL_FILE}; name the folder that "
                        "pipeline(...).save_to_directory(...) wrote (relative to the repository)"
                    )
                if part != "model" and not path.is_file():
                    raise KgrankInputError(
                        f"{key}.{part}: {path}: no such file; give a path relative to the repository"
                    )
            if kinds[0] == "model" and entry.get("trusted") is not True:
                raise KgrankInputError(
                    f"{key}: a PyKEEN folder's trained_model.pkl runs code from the file when it is loaded; "
                    "add trusted: true if you trust the folder (your own training), or give its ranks instead"
                )
            pairs.append((dataset, name))
    return pairs


def study_enabled(config: Mapping[str, Any], name: str) -> bool:
    """A study runs when the config lists it under ``studies`` and does not switch it off."""
    studies = config.get("studies") or {}
    return name in studies and (studies[name] or {}).get("enabled", True)


def study_pairs(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(dataset, model) pairs that enabled studies train beyond ``datasets`` x ``models``.

    A study's settings may name a ``dataset`` and the ``systems`` it compares there (the
    `ir` study's seven systems on FB15k-237); those not in ``models`` train like every
    other pair, with their own hyperparameter file and budget. Call it after the study
    settings got their schema defaults.
    """
    models = set(config.get("models") or [])
    pairs = []
    for name, settings in (config.get("studies") or {}).items():
        if not study_enabled(config, name) or not isinstance(settings, Mapping):
            continue
        dataset, systems = settings.get("dataset"), settings.get("systems") or []
        if dataset is None:
            continue
        if dataset not in (config.get("datasets") or {}):
            raise KgrankInputError(
                f"the config: key studies.{name}.dataset: {dataset!r} is not one of `datasets` "
                f"({sorted(config.get('datasets') or {})}); add it there or name another"
            )
        pairs += [
            (dataset, model) for model in systems if model not in models and (dataset, model) not in pairs
        ]
    return pairs


def training_runs(
    comparison: Mapping[str, Any],
    seed: int,
    datasets: Iterable[str],
    models: Iterable[str],
    source: str = "the config",
) -> dict[tuple[str, str], list[int]]:
    """Before any job: the further training seeds of each trained pair (``comparison.seeds``,
    or the pair's entry in ``comparison.seeds_by_pair``), in the order given, without
    ``seed``, whose run is the one every study reads. A list must hold ``seed`` (else the
    comparison would silently leave out the run the studies report), a pair must be trained,
    and the metrics must be comparable, each refused in one line naming the key."""
    from kgrank.evaluation.metrics import comparable_metrics

    try:
        comparable_metrics(comparison.get("metrics", []))
    except KgrankInputError as error:
        raise KgrankInputError(f"{source}: key comparison.metrics: {error}") from None
    datasets, models = list(datasets), list(models)
    by_pair = comparison.get("seeds_by_pair") or {}
    for dataset, entries in by_pair.items():
        for model in entries:
            if dataset not in datasets or model not in models:
                raise KgrankInputError(
                    f"{source}: key comparison.seeds_by_pair.{dataset}.{model}: not a pair of `datasets` x "
                    f"`models` (the trained datasets are {datasets}, the models {models}); remove the entry "
                    "or add the model to `models`"
                )
    runs = {}
    for dataset in datasets:
        for model in models:
            key = "comparison.seeds"
            seeds = comparison.get("seeds", [seed])
            if model in by_pair.get(dataset, {}):
                key, seeds = f"comparison.seeds_by_pair.{dataset}.{model}", by_pair[dataset][model]
            if seed not in seeds:
                raise KgrankInputError(
                    f"{source}: key {key}: {list(seeds)} leaves out seed {seed}, the run every study "
                    f"reads; list it too ([{seed}, ...]) or change seed"
                )
            runs[(dataset, model)] = [value for value in seeds if value != seed]
    return runs


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


def check_budget(
    budget: Mapping[str, Any],
    datasets: Iterable[str],
    models: Iterable[str],
    extra_pairs: Iterable[tuple[str, str]] = (),
    hyperparameters_dir: str | Path | None = None,
    hyperparameters: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
    source: str = "the config",
) -> None:
    """Refuse a per-pair budget for a dataset or model the run does not train (a typo would be
    ignored). A pair that only a switched-off study trains (it has its hyperparameter file in
    ``hyperparameters_dir``) keeps its entry, so that switching a study off is one line.

    Every value must pass the value table through the keyword it replaces
    (``BUDGET_KEYWORDS``: ``learning_rate`` as ``lr`` ...), and the pipeline each pair of
    ``hyperparameters`` (the loaded files by (dataset, model)) trains with its budget must
    validate like a hyperparameter file: a negative count for the LCWA loop, or a relation
    dimension for a model without one, stops here rather than in the training job."""
    datasets, models, extra_pairs = set(datasets), set(models), set(extra_pairs)
    by_dataset = budget.get("by_dataset") or {}
    for dataset, entries in by_dataset.items():
        for model in entries:
            trained = (dataset in datasets and model in models) or (dataset, model) in extra_pairs
            known = (
                hyperparameters_dir is not None
                and dataset in datasets
                and hyperparameter_path(hyperparameters_dir, dataset, model).is_file()
            )
            if not (trained or known):
                raise KgrankInputError(
                    f"{source}: key budget.by_dataset.{dataset}.{model}: no such trained pair "
                    f"(datasets trained: {sorted(datasets)}, models: {sorted(models)}); correct or remove it"
                )
    caps = {"max_epochs": budget.get("max_epochs")}
    caps |= {
        f"max_epochs_by_model.{model}": cap
        for model, cap in (budget.get("max_epochs_by_model") or {}).items()
    }
    for key, cap in caps.items():
        if cap is not None:
            check_value(BUDGET_KEYWORDS["max_epochs"], cap, f"{source}: key budget.{key}", "max_epochs")
    for dataset, entries in by_dataset.items():
        for model, own in entries.items():
            for key, value in (own or {}).items():
                if key in BUDGET_KEYWORDS and value is not None:
                    where = f"{source}: key budget.by_dataset.{dataset}.{model}.{key}"
                    check_value(BUDGET_KEYWORDS[key], value, where, key)
    for (dataset, model), loaded in (hyperparameters or {}).items():
        if not (by_dataset.get(dataset) or {}).get(model):
            continue  # only the epochs may change, and they were checked above
        key = f"budget.by_dataset.{dataset}.{model}"
        try:
            trained = apply_pair_budget(loaded["pipeline"], pair_budget(budget, dataset, model))
        except KgrankInputError as error:
            raise KgrankInputError(f"{source}: key {key}: {error}") from None
        validate_pipeline(trained, f"{source}: key {key} with {dataset}/{model}.yaml", "pipeline")


# The keys of a pair's budget beyond its epoch cap and training loop, each with how a
# budget's description says it; the keys in the order they are described.
PAIR_BUDGET_LABELS = {
    "num_negs_per_pos": "{} negatives",
    "embedding_dim": "dim {}",
    "relation_dim": "relation dim {}",
    "batch_size": "batch {}",
    "learning_rate": "lr {:g}",
    "loss": "{} loss",
    "label_smoothing": "label smoothing {:g}",
}
PAIR_BUDGET_KEYS = ("training_loop", *PAIR_BUDGET_LABELS)


def pair_budget(budget: Mapping[str, Any], dataset: str, model: str) -> dict[str, Any]:
    """The budget of one (dataset, model) pair: its epoch cap (``by_dataset.<dataset>.<model>``
    > ``max_epochs_by_model.<model>`` > ``max_epochs``), each of :data:`PAIR_BUDGET_KEYS`
    (None where the published value stays) and its early-stopping rule (None: none)."""
    own = ((budget.get("by_dataset") or {}).get(dataset) or {}).get(model) or {}
    by_model = budget.get("max_epochs_by_model") or {}
    max_epochs = own["max_epochs"] if "max_epochs" in own else by_model.get(model, budget.get("max_epochs"))
    return {
        "max_epochs": max_epochs,
        **{key: own.get(key) for key in PAIR_BUDGET_KEYS},
        # a pair's own rule replaces the budget's
        "early_stopping": own.get("early_stopping", budget.get("early_stopping")),
    }


def describe_budget(budget: Mapping[str, Any], shared_stopping: Mapping[str, Any] | None = None) -> str:
    """A pair's budget in words: "5 epochs (sLCWA, 16 negatives, dim 128, batch 512)". A pair
    whose early-stopping rule is not ``shared_stopping`` (the budget's own) says its rule."""
    epochs = budget["max_epochs"]
    words = "published epochs" if epochs is None else f"{epochs} epoch{'s' if epochs != 1 else ''}"
    if budget.get("early_stopping"):
        words = "at most " + words
    details = []
    if budget.get("training_loop") is not None:
        details.append("sLCWA" if budget["training_loop"] == "slcwa" else "LCWA")
    details += [
        label.format(budget[key]) for key, label in PAIR_BUDGET_LABELS.items() if budget.get(key) is not None
    ]
    stopping = budget.get("early_stopping")
    if stopping and _stopping_rule(stopping) != _stopping_rule(shared_stopping):
        details.append(_describe_stopping(stopping))
    return words + (f" ({', '.join(details)})" if details else "")


def _stopping_rule(stopping: Mapping[str, Any] | None) -> tuple[int, int] | None:
    # the defaults as kgrank.training.early_stopping.EarlyStopping's (not imported: it loads torch)
    return None if not stopping else (int(stopping["frequency"]), int(stopping.get("patience", 2)))


def _describe_stopping(stopping: Mapping[str, Any]) -> str:
    frequency, patience = _stopping_rule(stopping)
    every = "every epoch" if frequency == 1 else f"every {frequency} epochs"
    return f"validated {every}, patience {patience}"


def budget_caption(
    budget: Mapping[str, Any],
    datasets: Iterable[str],
    models: list[str],
    external_pairs: Iterable[tuple[str, str]] = (),
) -> str:
    """One sentence stating the training budget of every pair, for figure captions;
    datasets with the same budget share one clause. Systems kgrank did not train are
    named after it: their training is their own."""
    external = [f"{dataset}/{name}" for dataset, name in external_pairs]
    note = f" Not trained by kgrank (their training is their own): {', '.join(external)}." if external else ""
    return _trained_budget_caption(budget, datasets, models) + note


def _trained_budget_caption(budget: Mapping[str, Any], datasets: Iterable[str], models: list[str]) -> str:
    changes = ("max_epochs_by_model", "by_dataset", "early_stopping")
    if budget.get("max_epochs") is None and not any(budget.get(key) for key in changes):
        return "Training budget: the published configuration of every model."
    shared = budget.get("early_stopping")
    clauses: dict[str, list[str]] = {}
    for dataset in datasets:
        described = ", ".join(
            f"{model} {describe_budget(pair_budget(budget, dataset, model), shared)}" for model in models
        )
        clauses.setdefault(described, []).append(dataset)
    sentences = [f"{' and '.join(names)}: {described}" for described, names in clauses.items()]
    stops = any(
        pair_budget(budget, dataset, model)["early_stopping"] for dataset in datasets for model in models
    )
    shared_rule = f"{_describe_stopping(shared)} unless the pair says otherwise; " if shared else ""
    rule = (
        f" At most: early stopping on the validation MRR ({shared_rule}best weights kept)." if stops else ""
    )
    return (
        "Training budget (everything else as published; published: 151-551 epochs, LCWA except RotatE "
        "(sLCWA) on Nations, Kinships and FB15k-237, no early stopping): " + "; ".join(sentences) + "." + rule
    )


def budget_columns(resolved: Mapping[str, Any]) -> dict[str, Any]:
    """The columns that carry a model's training budget into every table of its numbers,
    from its resolved configuration (models/<dataset>/<model>/config.json): each value
    trained next to the published one."""
    published = resolved["hyperparameters"]["pipeline"]
    trained = resolved.get("trained_pipeline", published)
    columns = {
        "epochs": resolved["epochs"],
        "published_epochs": resolved["published_epochs"],
        "training_loop": resolved.get("training_loop", published["training_loop"]),
        "published_training_loop": published["training_loop"],
    }
    for key, read in (
        ("embedding_dim", lambda pipeline: (pipeline.get("model_kwargs") or {}).get("embedding_dim")),
        ("batch_size", lambda pipeline: pipeline["training_kwargs"].get("batch_size")),
        ("learning_rate", lambda pipeline: (pipeline.get("optimizer_kwargs") or {}).get("lr")),
        ("loss", lambda pipeline: pipeline.get("loss")),
        ("label_smoothing", lambda pipeline: pipeline["training_kwargs"].get("label_smoothing")),
    ):
        columns[key] = read(trained)
        columns[f"published_{key}"] = read(published)
    columns["early_stopping"] = resolved.get("early_stopping") is not None
    return columns


def external_budget_columns(kind: str) -> dict[str, Any]:
    """The budget columns of a system kgrank did not train: nothing known of its training
    but where its ranks came from (``training_loop`` reads ``external (rank table)`` ...)."""
    columns = dict.fromkeys(budget_columns(_UNKNOWN_BUDGET))
    from kgrank.workflow.external import KIND_LABELS

    columns["training_loop"] = f"external ({KIND_LABELS[kind]})"
    return columns


# A resolved configuration with every value unknown: the budget columns' names, once.
_UNKNOWN_BUDGET = {
    "hyperparameters": {"pipeline": {"training_loop": None, "training_kwargs": {}}},
    "epochs": None,
    "published_epochs": None,
}
