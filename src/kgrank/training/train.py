"""Train one PyKEEN model from a hyperparameter file, seeded, and save what a reader needs.

The pipeline is assembled from PyKEEN's resolvers rather than ``pykeen.pipeline`` because
the pipeline always evaluates on the test set at the end; the workflow ranks in its own
step, so doing it twice would cost minutes on the larger datasets.
"""

from __future__ import annotations

import inspect
import pickle
import platform
import time
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from kgrank.data.datasets import load_factories
from kgrank.data.io import atomic_path, read_json, write_json, write_table
from kgrank.engine.candidates import known_answers
from kgrank.errors import KgrankInputError
from kgrank.garbage import frozen_objects
from kgrank.training.early_stopping import EarlyStopping, LearningCurve
from kgrank.training.hyperparameters import apply_budget, effective_epochs
from kgrank.training.step import fast_scores, one_lookup_batches, sparse_label_batches


def resolve_device(device: str) -> torch.device:
    """``auto`` takes the GPU when there is one, else the CPU."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def build_model(pipeline: Mapping[str, Any], training_factory: Any, seed: int) -> Any:
    """Instantiate the model exactly as ``pykeen.pipeline`` would (loss and regularizer
    resolved into it)."""
    from pykeen.models import model_resolver
    from pykeen.regularizers import regularizer_resolver

    model_kwargs = dict(pipeline.get("model_kwargs") or {})
    model_kwargs.setdefault("random_seed", seed)
    model_kwargs["loss"] = make_loss(pipeline)
    model_class = model_resolver.lookup(pipeline["model"])
    # The published pipelines name a regularizer ('no' in every case study file); PyKEEN's
    # pipeline puts it into the model, replacing the model's default (ComplEx's is an L2
    # penalty of weight 0.01; TransE, RotatE, DistMult and TuckER have none by default).
    # Models without a regularizer parameter have none to replace.
    if pipeline.get("regularizer") is not None and "regularizer" in inspect.signature(model_class).parameters:
        model_kwargs.setdefault(
            "regularizer",
            regularizer_resolver.make(pipeline["regularizer"], pipeline.get("regularizer_kwargs")),
        )
    return model_resolver.make(model_class, triples_factory=training_factory, **model_kwargs)


def make_loss(pipeline: Mapping[str, Any]) -> Any:
    """The pipeline's PyKEEN loss, refused with one line where the name is unknown or the
    loss cannot take the pipeline's label smoothing (PyKEEN would refuse only at the first
    batch, after the data are loaded and the model is built)."""
    from pykeen.losses import AdversarialLoss, DoubleMarginLoss, MarginPairwiseLoss, loss_resolver

    name = pipeline.get("loss")
    try:
        loss = loss_resolver.make(name, pipeline.get("loss_kwargs"))
    except (KeyError, ValueError):
        raise KgrankInputError(
            f"loss {name!r}: not a PyKEEN loss; use one of {sorted(loss_resolver.lookup_dict)}"
        ) from None
    smoothing = (pipeline.get("training_kwargs") or {}).get("label_smoothing") or 0.0
    if smoothing > 0 and isinstance(loss, MarginPairwiseLoss | DoubleMarginLoss | AdversarialLoss):
        raise KgrankInputError(
            f"loss {name!r} takes no label smoothing (the pipeline's is {smoothing:g}); "
            "set label_smoothing: 0.0 in the pair's budget (kgrank train: --label-smoothing 0)"
        )
    return loss


def create_inverse_triples(pipeline: Mapping[str, Any]) -> bool:
    return bool((pipeline.get("dataset_kwargs") or {}).get("create_inverse_triples", False))


def train(
    dataset_dir: str | Path,
    hyperparameters: Mapping[str, Any],
    out_dir: str | Path,
    *,
    seed: int,
    max_epochs: int | None = None,
    training_loop: str | None = None,
    num_negs_per_pos: int | None = None,
    model_kwargs: Mapping[str, int] | None = None,
    batch_size: int | None = None,
    learning_rate: float | None = None,
    loss: str | None = None,
    label_smoothing: float | None = None,
    early_stopping: EarlyStopping | None = None,
    scoring: str = "fast",
    sub_batch_size: int | None = None,
    device: str = "auto",
    threads: int = 1,
    progress: bool = True,
) -> dict[str, Any]:
    """Train and write ``model.pt`` (state dict), ``config.json``, ``losses.tsv``,
    ``learning_curve.tsv`` and ``training.json``.

    ``max_epochs`` and the arguments of :func:`apply_budget` are the budget; None keeps the
    published value. With ``early_stopping`` the validation MRR is computed every few epochs
    by kgrank's rank engine, training stops when it stops improving and the best weights are
    kept (:mod:`kgrank.training.early_stopping`). ``scoring="fast"`` trains with the 1-N step
    of :mod:`kgrank.training.step` (the same arithmetic as PyKEEN's, by matrix products);
    ``"pykeen"`` with PyKEEN's own scores. ``sub_batch_size`` bounds the memory of one step
    (same gradients, computed in slices); PyKEEN cannot slice models with batch
    normalisation (TuckER) in training, so they keep whole batches.
    """
    from pykeen.utils import set_random_seed

    from kgrank.engine.threads import use_threads

    use_threads(threads)
    pipeline = apply_budget(
        hyperparameters["pipeline"],
        training_loop,
        num_negs_per_pos,
        model_kwargs=model_kwargs,
        batch_size=batch_size,
        learning_rate=learning_rate,
        loss=loss,
        label_smoothing=label_smoothing,
    )
    make_loss(pipeline)  # a loss that cannot train is refused before the data are read
    set_random_seed(seed)
    factories = load_factories(dataset_dir, create_inverse_triples=create_inverse_triples(pipeline))
    torch_device = resolve_device(device)
    model = build_model(pipeline, factories.training, seed).to(torch_device)
    num_epochs = effective_epochs(pipeline, max_epochs)
    curve = LearningCurve(factories=factories, known=known_answers(factories), rule=early_stopping)
    started = time.perf_counter()
    losses, training_kwargs = fit(
        model,
        pipeline,
        factories.training,
        num_epochs=num_epochs,
        callbacks=[curve],
        scoring=scoring,
        sub_batch_size=sub_batch_size,
        progress=progress,
    )
    seconds = time.perf_counter() - started
    curve.restore_best()

    out_dir = Path(out_dir)
    # Saved through a file handle: given a path, torch.save names the archive's inner
    # folder after the file, and a temporary name would change the bytes of every save.
    with atomic_path(out_dir / "model.pt") as temporary, temporary.open("wb") as handle:
        torch.save(model.state_dict(), handle)
    resolved = {
        "hyperparameters": dict(hyperparameters),
        "seed": seed,
        "published_epochs": int(pipeline["training_kwargs"]["num_epochs"]),
        # the epoch whose weights were kept: the best validated one with early stopping
        "epochs": curve.best_epoch if curve.best_epoch is not None else len(losses),
        "epochs_trained": len(losses),
        "early_stopping": None if early_stopping is None else asdict(early_stopping),
        "best_valid_mrr": None if curve.best_epoch is None else curve.best_mrr,
        "scoring": scoring,
        "max_epochs": max_epochs,
        "training_loop": pipeline["training_loop"],
        "num_negs_per_pos": (pipeline.get("negative_sampler_kwargs") or {}).get("num_negs_per_pos"),
        "sub_batch_size": training_kwargs.get("sub_batch_size"),
        "trained_pipeline": pipeline,
        "device": str(torch_device),
        "threads": threads,
        "num_entities": factories.training.num_entities,
        "num_relations": factories.training.num_relations,
        "versions": _versions(),
    }
    write_json(out_dir / "config.json", resolved)
    write_table(out_dir / "losses.tsv", pd.DataFrame({"epoch": range(1, len(losses) + 1), "loss": losses}))
    write_table(out_dir / "learning_curve.tsv", pd.DataFrame(curve.rows))
    summary = {
        "seconds": seconds,
        "epochs": resolved["epochs"],
        "epochs_trained": len(losses),
        "stopped_early": curve.stopped_epoch is not None,
        "final_loss": float(losses[-1]),
        "valid_mrr": curve.rows[-1]["valid_mrr"] if curve.best_epoch is None else curve.best_mrr,
    }
    write_json(out_dir / "training.json", summary)
    return summary


@contextmanager
def flushed_denormals() -> Iterator[None]:
    """Subnormal floats (below 1.2e-38 in float32) read and written as zero while training.

    Once a model is confident, most of a softmax over every entity underflows into the
    subnormal range, and x86 arithmetic on subnormals is many times slower: a family-tree
    ComplEx epoch went from 3.3 s to 44 s as training went on, 13.5 s with this (issue
    #30). Values that small change no gradient that matters; the previous setting is
    restored afterwards (torch has no getter: it is off unless a caller turned it on).
    The setting is the calling thread's: with more threads, torch's workers keep theirs.
    """
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


def fit(
    model: Any,
    pipeline: Mapping[str, Any],
    training_factory: Any,
    *,
    num_epochs: int,
    callbacks: list[Any] | None = None,
    scoring: str = "fast",
    sub_batch_size: int | None = None,
    progress: bool = True,
) -> tuple[list[float], dict[str, Any]]:
    """Train a built model with PyKEEN's loop, optimiser and loss as ``pipeline`` names
    them, for ``num_epochs``; ``callbacks`` are PyKEEN training callbacks. Returns the
    per-epoch losses and the training keyword arguments used."""
    from pykeen.training import training_loop_resolver

    if scoring not in ("fast", "pykeen"):
        raise KgrankInputError(f"training scoring {scoring!r}: use fast or pykeen")
    # PyKEEN asks its data loader to pin memory even without a GPU; harmless, but noisy.
    warnings.filterwarnings("ignore", message="'pin_memory' argument is set as true")
    loop_kwargs: dict[str, Any] = {
        "model": model,
        "triples_factory": training_factory,
        "optimizer": build_optimizer(pipeline, model),
        # PyKEEN's automatic memory optimisation first tries the whole batch, which can
        # exhaust a laptop's memory on the larger datasets; sub_batch_size replaces it.
        "automatic_memory_optimization": False,
    }
    loop_kwargs.update(negative_sampling(pipeline))
    training_kwargs = {**pipeline["training_kwargs"], "num_epochs": num_epochs}
    if sub_batch_size is not None and not any(
        isinstance(module, torch.nn.modules.batchnorm._BatchNorm) for module in model.modules()
    ):
        training_kwargs["sub_batch_size"] = min(sub_batch_size, int(training_kwargs["batch_size"]))
    with fast_scores(model) if scoring == "fast" else nullcontext(), flushed_denormals():
        # PyKEEN's loop binds model.score_t when it is built: build it inside the block
        loop = training_loop_resolver.make(pipeline["training_loop"], **loop_kwargs)
        if scoring == "fast":
            sparse_label_batches(loop) or one_lookup_batches(loop)
        # PyKEEN's loop ends every epoch with gc.collect(), a walk over every object this
        # process holds (kgrank.garbage): 30 epochs of Nations ComplEx took 16.8 and 15.8 s
        # with the walks, 9.1 and 7.7 s without, and wrote the same model.pt
        with frozen_objects():
            losses = loop.train(
                triples_factory=training_factory,
                use_tqdm=progress,
                use_tqdm_batch=False,
                callbacks=callbacks,
                **training_kwargs,
            )
    return list(losses), training_kwargs


def build_optimizer(pipeline: Mapping[str, Any], model: Any) -> Any:
    """The optimiser ``pipeline`` names, over the model's trainable parameters, in the
    form :func:`fast_optimizer_kwargs` gives it."""
    from pykeen.optimizers import optimizer_resolver

    kwargs = fast_optimizer_kwargs(
        optimizer_resolver.lookup(pipeline["optimizer"]), pipeline.get("optimizer_kwargs"), model.device
    )
    return optimizer_resolver.make(pipeline["optimizer"], kwargs, params=model.get_grad_params())


def fast_optimizer_kwargs(
    optimizer_class: type, optimizer_kwargs: Mapping[str, Any] | None, device: torch.device
) -> dict[str, Any]:
    """The optimiser's keyword arguments with torch's fused implementation where the
    class has one for the device, else its for-each one, unless they choose. torch's
    default on the CPU loops over the parameters, one pass over the weights per
    operation: Adam's step over WN18RR's 40,943 x 256 entity table takes 86 ms that way,
    65 in the for-each form (the same weights to the bit) and 15 fused (one pass; each
    update within an ulp or two of the loop's, so a seeded training's weights differ in
    their last bits)."""
    kwargs = dict(optimizer_kwargs or {})
    if "fused" in kwargs or "foreach" in kwargs:
        return kwargs
    parameters = inspect.signature(optimizer_class.__init__).parameters
    if "fused" in parameters and device.type in ("cpu", "cuda"):
        kwargs["fused"] = True
    elif "foreach" in parameters:
        kwargs["foreach"] = True
    return kwargs


def negative_sampling(pipeline: Mapping[str, Any]) -> dict[str, Any]:
    """The training loop's negative sampler as ``pipeline`` names it (sLCWA), else nothing."""
    if pipeline["training_loop"] != "slcwa":
        return {}
    return {
        "negative_sampler": pipeline.get("negative_sampler", "basic"),
        "negative_sampler_kwargs": pipeline.get("negative_sampler_kwargs"),
    }


def _versions() -> dict[str, str]:
    def version(package: str) -> str:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:  # run from a source tree (PYTHONPATH=src)
            return "not installed"

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "pykeen": version("pykeen"),
        "kgrank": version("kgrank"),
    }


def load_model(model_dir: str | Path, dataset_dir: str | Path, device: str = "cpu") -> tuple[Any, Any]:
    """Rebuild a trained model from its state dict and resolved configuration, on
    ``device`` (``auto``: the GPU where there is one)."""
    device = str(resolve_device(device))
    model_dir = Path(model_dir)
    resolved = read_json(model_dir / "config.json")
    # the pipeline trained (a budget may change dimensions), as built by train()
    pipeline = resolved.get("trained_pipeline", resolved["hyperparameters"]["pipeline"])
    factories = load_factories(dataset_dir, create_inverse_triples=create_inverse_triples(pipeline))
    trained_on = (resolved["num_entities"], resolved["num_relations"])
    if (factories.training.num_entities, factories.training.num_relations) != trained_on:
        raise KgrankInputError(
            f"{model_dir / 'config.json'}: model trained on {resolved['num_entities']} entities and "
            f"{resolved['num_relations']} relations, but {dataset_dir} has "
            f"{factories.training.num_entities} and {factories.training.num_relations}; retrain it"
        )
    model = build_model(pipeline, factories.training, resolved["seed"])
    try:
        state = torch.load(model_dir / "model.pt", map_location=device, weights_only=True)
    except (RuntimeError, OSError, EOFError, pickle.UnpicklingError) as error:
        # a truncated or foreign file: torch's message is a paragraph, its first sentence says enough
        lines = str(error).split(". ")[0].splitlines()
        reason = lines[0] if lines else f"{type(error).__name__}: the file ends too early"
        raise KgrankInputError(
            f"{model_dir / 'model.pt'}: not a readable PyTorch state dict ({reason}); "
            "retrain it (delete the model folder and rerun the workflow)"
        ) from None
    try:
        model.load_state_dict(state)
    except RuntimeError as error:
        # PyTorch lists every mismatching tensor over many lines; one names the problem.
        mismatch = next((line.strip() for line in str(error).splitlines() if "size mismatch" in line), "")
        raise KgrankInputError(
            f"{model_dir / 'model.pt'}: does not fit {dataset_dir} "
            f"({factories.training.num_entities} entities, {factories.training.num_relations} relations) "
            "with this configuration: "
            f"{mismatch or str(error).splitlines()[0]}; retrain it"
        ) from None
    return model.to(device).eval(), factories
