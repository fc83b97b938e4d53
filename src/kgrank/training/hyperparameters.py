"""Hyperparameter files: one YAML per (dataset, model), validated before any training."""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from kgrank.data.io import load_user_yaml, parse_schema
from kgrank.data.names import check_name
from kgrank.errors import KgrankInputError, yaml_refusal
from kgrank.workflow.remembered import remembered

SCHEMA_PATH = "src/kgrank/schemas/hyperparameters.schema.yaml"


@cache
def _schema() -> dict[str, Any]:
    text = resources.files("kgrank").joinpath("schemas/hyperparameters.schema.yaml").read_text()
    return parse_schema(text)


# JSON Schema counts 64.0 as an integer; torch does not (nn.Embedding(14, 64.0) raises a
# TypeError), so a dimension or an epoch count must be written as a whole number.
StrictValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)
    ),
)


def _refusal(where: str, key: str, error: jsonschema.ValidationError) -> KgrankInputError:
    """One line: where, the key, the bad value and, for a keyword of the value table
    (``$defs/values``), what it must be."""
    # only the value table, which every *_kwargs takes, says what is accepted
    in_table = any(str(part).endswith("_kwargs") for part in error.absolute_path)
    accepted = error.schema.get("description") if in_table and isinstance(error.schema, dict) else None
    if accepted is None:
        return KgrankInputError(f"{where}: key {key}: {error.message}; fix it to match {SCHEMA_PATH}")
    keyword = next((part for part in reversed(error.absolute_path) if isinstance(part, str)), key)
    return KgrankInputError(
        f"{where}: key {key}: {error.message}; {keyword} must be {' '.join(accepted.split())}; "
        "write such a value"
    )


def _best_error(schema: dict[str, Any], data: Any) -> jsonschema.ValidationError | None:
    return jsonschema.exceptions.best_match(StrictValidator(schema).iter_errors(data))


def _key_path(error: jsonschema.ValidationError, pipeline_key: str = "pipeline") -> str:
    parts = [str(part) for part in error.absolute_path]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        # name the unexpected key itself, not only the mapping that holds it
        allowed = set(error.schema.get("properties", {}))
        parts += sorted(str(key) for key in error.instance if key not in allowed)[:1]
    if parts[:1] == ["pipeline"]:
        parts[0] = pipeline_key
    return ".".join(parts) or "(top level)"


# The budget's keys (config `budget`, the options of `kgrank train`) and the keyword of the
# pipeline that each replaces, whose entry in the value table it must pass.
BUDGET_KEYWORDS = {
    "max_epochs": "num_epochs",
    "num_negs_per_pos": "num_negs_per_pos",
    "embedding_dim": "embedding_dim",
    "relation_dim": "relation_dim",
    "batch_size": "batch_size",
    "learning_rate": "lr",
    "label_smoothing": "label_smoothing",
}


def check_value(keyword: str, value: Any, where: str, name: str | None = None) -> None:
    """Refuse ``value`` for ``keyword`` unless the value table accepts it. ``where`` names
    the file and key, or the option, that gave it (``config.yaml: key budget.max_epochs``),
    ``name`` the setting in the sentence that says what is accepted (default: the keyword)."""
    error = _best_error(_schema()["$defs"]["values"], {keyword: value})
    if error is not None:
        accepted = " ".join(error.schema.get("description", "").split())
        raise KgrankInputError(
            f"{where}: {error.message}; {name or keyword} must be {accepted}; write such a value"
        )


def _check_known(path: str, key: str, name: str, resolver: Any, what: str) -> None:
    try:
        resolver.lookup(name)
    except (KeyError, ValueError) as error:
        raise KgrankInputError(
            f"{path}: key {key}: unknown {what} {name!r}; use one of PyKEEN's "
            f"{what} names, e.g. {', '.join(sorted(resolver.lookup_dict)[:6])}"
        ) from error


def accepted_keywords(cls: type) -> set[str] | None:
    """The keyword arguments ``cls(...)`` accepts, following ``**kwargs`` up the MRO as
    PyKEEN's classes pass them on; None when some ``__init__`` swallows any keyword."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        parameters = inspect.signature(init).parameters.values()
        names |= {
            parameter.name
            for parameter in parameters
            if parameter.kind not in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL)
        }
        if not any(parameter.kind == parameter.VAR_KEYWORD for parameter in parameters):
            return names - {"self"}
    return None


# Arguments the workflow passes itself; a hyperparameter file may not set them.
_SET_BY_KGRANK = {
    "model_kwargs": {"triples_factory", "loss", "loss_kwargs"},
    "optimizer_kwargs": {"params"},
    "negative_sampler_kwargs": {"mapped_triples", "num_entities", "num_relations"},
}


def _check_keywords(
    path: str, key: str, given: Any, accepted: set[str] | None, owner: str, pipeline_key: str
) -> None:
    """A misspelt argument (``embeding_dim``) fails here, naming the file and key, and not
    later inside the training job."""
    if accepted is None or not given:
        return
    allowed = accepted - _SET_BY_KGRANK.get(key, set())
    unknown = sorted(set(given) - allowed)
    if unknown:
        raise KgrankInputError(
            f"{path}: key {pipeline_key}.{key}.{unknown[0]}: {owner} takes no argument {unknown[0]!r}; "
            f"use one of {', '.join(sorted(allowed))}"
        )


def validate_hyperparameters(data: Any, path: str | Path, pipeline_key: str = "pipeline") -> dict[str, Any]:
    """Check a hyperparameter mapping against the schema (every value against the value
    table, ``$defs/values``) and PyKEEN's component names. ``path`` names where the mapping
    comes from in errors; ``pipeline_key`` is how they name the key that holds the pipeline."""
    where = str(path)
    if not isinstance(data, dict):
        raise KgrankInputError(f"{where}: expected a mapping at the top level, found {type(data).__name__}")
    error = _best_error(_schema(), data)
    if error is not None:
        raise _refusal(where, _key_path(error, pipeline_key), error)
    # at parse time for every pair: PyKEEN's part is asked once per content (kgrank.workflow.remembered)
    remembered(
        "PyKEEN takes these hyperparameters",
        [where, pipeline_key, data],
        lambda: _check_with_pykeen(where, data, pipeline_key),
    )
    pipeline = data["pipeline"]
    if pipeline.get("regularizer", "no") != "no":
        raise KgrankInputError(
            f"{where}: key {pipeline_key}.regularizer: {pipeline['regularizer']!r} is not supported; "
            "only 'no' (none of the published configurations regularise)"
        )
    return data


def _check_with_pykeen(where: str, data: dict[str, Any], pipeline_key: str) -> bool:
    """PyKEEN's part of :func:`validate_hyperparameters`: its component names, the
    keywords they take, the model named twice. True, or a refusal."""
    from pykeen.losses import loss_resolver
    from pykeen.models import model_resolver
    from pykeen.optimizers import optimizer_resolver
    from pykeen.sampling import negative_sampler_resolver

    pipeline = data["pipeline"]
    components = [
        ("model", model_resolver, "model"),
        ("optimizer", optimizer_resolver, "optimizer"),
        ("loss", loss_resolver, "loss"),
        ("negative_sampler", negative_sampler_resolver, "negative sampler"),
    ]
    for key, resolver, what in components:
        if key in pipeline:
            _check_known(where, f"{pipeline_key}.{key}", pipeline[key], resolver, what)
    # every name is known: now the keywords each component takes
    for key, resolver, _ in components:
        if pipeline.get(key) is not None:
            cls = resolver.lookup(pipeline[key])
            owner = f"{cls.__module__.split('.')[0]}'s {cls.__name__}"  # pykeen's TransE, torch's Adam
            kwargs = f"{key}_kwargs"
            _check_keywords(where, kwargs, pipeline.get(kwargs), accepted_keywords(cls), owner, pipeline_key)
    # the top-level name is what tables and file names show; the pipeline's is what trains
    if (
        "model" in data
        and "model" in pipeline
        and model_resolver.normalize(str(data["model"])) != (model_resolver.normalize(str(pipeline["model"])))
    ):
        raise KgrankInputError(
            f"{where}: key model: {data['model']!r} is not the model the pipeline trains "
            f"({pipeline_key}.model: {pipeline['model']!r}); make the two agree"
        )
    return True


def validate_pipeline(pipeline: Any, source: str, key: str) -> dict[str, Any]:
    """Check a PyKEEN pipeline given inline, not in a hyperparameter file (the open-world
    study's family-tree configurations); errors name ``source`` and the keys under ``key``."""
    if not isinstance(pipeline, dict):
        raise KgrankInputError(
            f"{source}: key {key}: expected a mapping (model, optimizer, training_loop, "
            f"training_kwargs ...), found {type(pipeline).__name__}"
        )
    document = {"model": str(pipeline.get("model")), "dataset": "-", "pipeline": pipeline, "source": {}}
    validate_hyperparameters(document, source, pipeline_key=key)
    return pipeline


# What a budget may change: what a CPU makes expensive, and the loss where the published one
# learns too slowly for a few epochs. The interaction function, optimiser and inverse triples
# always stay as published.
BUDGET_MODEL_KWARGS = ("embedding_dim", "relation_dim")


def apply_budget(
    pipeline: Mapping[str, Any],
    training_loop: str | None = None,
    num_negs_per_pos: int | None = None,
    *,
    model_kwargs: Mapping[str, int] | None = None,
    batch_size: int | None = None,
    learning_rate: float | None = None,
    loss: str | None = None,
    label_smoothing: float | None = None,
) -> dict[str, Any]:
    """The pipeline actually trained: the published one with the budget's changes (None
    keeps the published value). A changed loss takes PyKEEN's default parameters: the
    published loss's parameters belong to the published loss."""
    trained = {key: value for key, value in pipeline.items()}
    unknown = set(model_kwargs or {}) - set(BUDGET_MODEL_KWARGS)
    if unknown:
        raise KgrankInputError(
            f"budget model_kwargs {sorted(unknown)}: a budget may change only {list(BUDGET_MODEL_KWARGS)}; "
            "remove the others"
        )
    if model_kwargs:
        trained["model_kwargs"] = {**(pipeline.get("model_kwargs") or {}), **model_kwargs}
    if batch_size is not None:
        trained["training_kwargs"] = {**pipeline["training_kwargs"], "batch_size": int(batch_size)}
    if learning_rate is not None:
        trained["optimizer_kwargs"] = {**(pipeline.get("optimizer_kwargs") or {}), "lr": float(learning_rate)}
    if loss is not None and loss != pipeline.get("loss"):
        trained["loss"] = loss
        trained.pop("loss_kwargs", None)
    if label_smoothing is not None:
        trained["training_kwargs"] = {
            **trained["training_kwargs"],
            "label_smoothing": float(label_smoothing),
        }
    loop = training_loop or pipeline["training_loop"]
    trained["training_loop"] = loop
    if loop == "slcwa":
        trained.setdefault("negative_sampler", "basic")
        sampler_kwargs = dict(pipeline.get("negative_sampler_kwargs") or {})
        if num_negs_per_pos is not None:
            sampler_kwargs["num_negs_per_pos"] = num_negs_per_pos
        trained["negative_sampler_kwargs"] = sampler_kwargs
    else:
        if num_negs_per_pos is not None:
            raise KgrankInputError(
                f"num_negs_per_pos {num_negs_per_pos} given for the {loop} training loop, which has "
                "no negatives; remove it from the budget or set training_loop: slcwa"
            )
        trained.pop("negative_sampler", None)
        trained.pop("negative_sampler_kwargs", None)
    return trained


def effective_epochs(pipeline: Mapping[str, Any], max_epochs: int | None) -> int:
    """The epochs a pipeline trains: its own, capped at ``max_epochs`` (None: no cap)."""
    published = int(pipeline["training_kwargs"]["num_epochs"])
    return published if max_epochs is None else min(published, int(max_epochs))


def apply_pair_budget(pipeline: Mapping[str, Any], pair: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`apply_budget` with one pair's budget as ``kgrank.workflow.config.pair_budget`` resolves it."""
    model_kwargs = {key: pair[key] for key in BUDGET_MODEL_KWARGS if pair.get(key) is not None}
    return apply_budget(
        pipeline,
        pair.get("training_loop"),
        pair.get("num_negs_per_pos"),
        model_kwargs=model_kwargs or None,
        batch_size=pair.get("batch_size"),
        learning_rate=pair.get("learning_rate"),
        loss=pair.get("loss"),
        label_smoothing=pair.get("label_smoothing"),
    )


def load_hyperparameters(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise KgrankInputError(
            f"{path}: hyperparameter file not found; add it or remove the pair from the config"
        )
    try:
        data = load_user_yaml(path.read_text(encoding="utf-8"), path)
    except yaml.YAMLError as error:
        raise yaml_refusal(path, error) from None
    return validate_hyperparameters(data, path)


# The parts of a PyKEEN experiment file (pykeen/experiments/<model>/*.json|yaml) that
# kgrank does not take from the hyperparameter file: the workflow sets the dataset and the
# evaluator itself, and early stopping is part of the budget (config `budget`).
_EXPERIMENT_DROPPED = ("dataset", "evaluator", "evaluator_kwargs", "stopper", "stopper_kwargs")
# The keys of kgrank's archived layout of a published configuration (beside an optional note).
ARCHIVED_KEYS = ("model", "dataset", "pipeline", "source")


def _read_published(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in {".yaml", ".yml"}:
        try:
            return load_user_yaml(text, path)
        except yaml.YAMLError as error:
            raise yaml_refusal(path, error, "fix the file") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise KgrankInputError(
            f"{path}: line {error.lineno}: not valid JSON ({error.msg}); fix the file"
        ) from None


def _is_pykeen_experiment(published: Any) -> bool:
    """A configuration as PyKEEN ships it (``metadata``, ``pipeline`` naming its dataset and
    model, often ``results``), rather than kgrank's archived layout with ``source``."""
    return (
        isinstance(published, dict)
        and "source" not in published
        and isinstance(published.get("pipeline"), dict)
        and {"model", "dataset"} <= set(published["pipeline"])
    )


def _package_path(path: Path) -> str:
    """The file's path inside the installed pykeen package (pykeen/experiments/...), or, for
    a copy elsewhere, its path from the ``experiments`` folder on."""
    import pykeen

    package = Path(pykeen.__file__).resolve().parent
    resolved = path.resolve()
    if resolved.is_relative_to(package):
        return str(Path("pykeen") / resolved.relative_to(package))
    parts = resolved.parts
    if "experiments" in parts:
        return str(Path("pykeen", *parts[len(parts) - parts[::-1].index("experiments") - 1 :]))
    return path.name


def _from_pykeen_experiment(published: dict[str, Any], path: Path) -> dict[str, Any]:
    """kgrank's layout from a PyKEEN experiment file: names normalised to PyKEEN's resolver
    keys (``ConvE`` -> ``conve``, ``LCWA`` -> ``lcwa``), the dataset and evaluator dropped,
    the provenance (package path and version, title, reported results) under ``source``."""
    from importlib.metadata import version

    from pykeen.datasets import dataset_resolver
    from pykeen.losses import loss_resolver
    from pykeen.models import model_resolver
    from pykeen.optimizers import optimizer_resolver
    from pykeen.regularizers import regularizer_resolver
    from pykeen.sampling import negative_sampler_resolver
    from pykeen.training import training_loop_resolver

    original = published["pipeline"]
    pipeline = {key: value for key, value in original.items() if key not in _EXPERIMENT_DROPPED}
    resolvers = {
        "model": model_resolver,
        "loss": loss_resolver,
        "optimizer": optimizer_resolver,
        "regularizer": regularizer_resolver,
        "negative_sampler": negative_sampler_resolver,
        "training_loop": training_loop_resolver,
    }
    for key, resolver in resolvers.items():
        if isinstance(pipeline.get(key), str):
            pipeline[key] = resolver.normalize(pipeline[key])
    experiment = {"package": "pykeen", "version": version("pykeen"), "path": _package_path(path)}
    metadata = published.get("metadata") or {}
    experiment |= {key: metadata[key] for key in ("title", "comment", "comments") if key in metadata}
    if "results" in published:
        experiment["reported_results"] = published["results"]
    document: dict[str, Any] = {
        "model": pipeline["model"],
        "dataset": (
            dataset_resolver.normalize(original["dataset"])
            if isinstance(original["dataset"], str)
            else original["dataset"]
        ),
        "pipeline": pipeline,
        "source": {"pykeen_experiment": experiment},
    }
    dropped = {key: original[key] for key in ("stopper", "stopper_kwargs") if key in original}
    if dropped:
        document["note"] = (
            "The published run stopped early ("
            + json.dumps(dropped, sort_keys=True)
            + "); kgrank's early stopping is part of the budget (config `budget`), "
            "so it is not kept in `pipeline`."
        )
    return document


def import_published(json_path: str | Path, out_dir: str | Path) -> Path:
    """Convert a published configuration to kgrank's YAML layout.

    Two inputs: kgrank's archived JSON (``model``, ``dataset``, ``pipeline``, ``source``),
    and a configuration as PyKEEN ships it under ``pykeen/experiments/`` (JSON or YAML, with
    ``metadata``/``pipeline``/``results``), whose provenance becomes the package path and
    version. The pipeline section is kept verbatim in PyKEEN's vocabulary apart from the
    dataset and evaluator keys, which the workflow sets itself (filtered rank-based
    evaluation), and a PyKEEN experiment's stopper (early stopping is the budget's).
    """
    json_path = Path(json_path)
    published = _read_published(json_path)
    experiment = _is_pykeen_experiment(published)
    if experiment:
        document = _from_pykeen_experiment(published, json_path)
    else:
        if not isinstance(published, dict):
            raise KgrankInputError(
                f"{json_path}: expected a mapping at the top level, found {type(published).__name__}"
            )
        missing = [key for key in ARCHIVED_KEYS if key not in published]
        if missing:
            raise KgrankInputError(
                f"{json_path}: key(s) {missing} missing; a published configuration needs model, "
                "dataset, pipeline and source (or, as PyKEEN ships them, a pipeline naming its "
                "model and dataset)"
            )
        document = {key: published[key] for key in (*ARCHIVED_KEYS, "note") if key in published}
        unread = ("dataset", "evaluator", "evaluator_kwargs")  # the workflow sets them
        document["pipeline"] = {
            key: value for key, value in document["pipeline"].items() if key not in unread
        }
    # The two names become the path written: no '..', '/' or absolute path leaves --out-dir.
    for key in ("dataset", "model"):
        check_name(
            document[key],
            f"{json_path}: key {'pipeline.' if experiment else ''}{key}",
            fix="fix the field (it names the file written, <out-dir>/<dataset>/<model>.yaml)",
        )
    validate_hyperparameters(document, json_path)
    target = Path(out_dir) / document["dataset"] / f"{document['model']}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    header = (
        f"# Published best configuration of {document['model']} on {document['dataset']},\n"
        f"# converted from {json_path.name} by `kgrank import-hyperparameters`; see `source`.\n"
    )
    target.write_text(header + yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return target
