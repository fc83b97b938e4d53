"""Train variants of a pair's laptop budget side by side and print their validation curves.

How the budgets in config/config.yaml were searched: each variant is the config's budget
for the pair with some keys replaced (epochs, batch size, learning rate, dimension,
training loop, negatives, loss, label smoothing), trained by kgrank's own training
(``kgrank.training.train.train``, early stopping on the validation MRR as in the workflow)
with the variants of a file running in parallel processes. For each it prints the
validation MRR after every validated epoch, the test MRR of the model it kept (ranked by
the workflow's engine, filtered, realistic ranks: the number the paper study reports) and
the training seconds that
``kgrank.workflow.scheduling`` estimates for a 2-core CPU: a variant is only worth taking if it
costs no more than the budget it replaces.

A GPU makes the search fast. Its MRRs are close to the CPU's but not equal (other
rounding); the workflow's numbers come from the CPU runs.

    python scripts/budget_search.py VARIANTS.yaml --data-dir DIR --out OUT [--device cuda]
        [--processes 8] [--threads 2]

VARIANTS.yaml: a list of {dataset, model, name, budget: {key: value, ...}}; ``budget``
replaces keys of the config's budget for the pair (``{}`` is the config's own). DIR holds
the prepared datasets (``kgrank prepare-dataset``'s output folders, by dataset name).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]


def variant_budget(
    budget: dict[str, Any], dataset: str, model: str, changes: dict[str, Any]
) -> dict[str, Any]:
    """The config's ``budget`` with the pair's own entry updated by ``changes``."""
    by_dataset = dict(budget.get("by_dataset") or {})
    own = dict((by_dataset.get(dataset) or {}).get(model) or {})
    by_dataset[dataset] = {**(by_dataset.get(dataset) or {}), model: {**own, **changes}}
    return {**budget, "by_dataset": by_dataset}


def estimated_cpu_seconds(dataset: str, model: str, budget: dict[str, Any], data_dir: Path) -> float:
    """kgrank.workflow.scheduling's estimate of the pair's training under ``budget`` (a whole config
    budget) on the 2-core reference machine."""
    from kgrank.workflow.scheduling import dataset_size, pair_training_seconds, trained_pair

    path = REPO / "config" / "hyperparameters" / dataset / f"{model}.yaml"
    size = dataset_size(dataset, data_dir / dataset / "stats.json")
    return pair_training_seconds(trained_pair(path, budget, dataset, model), size)


def read_variants(path: Path, data_dir: Path) -> list[dict[str, Any]]:
    """The variants file, refused with one line naming the item and the fix where it is not
    a list of {dataset, model, name, budget} whose pairs and budget values kgrank accepts."""
    from kgrank.errors import KgrankInputError
    from kgrank.training.hyperparameters import BUDGET_KEYWORDS, check_value
    from kgrank.workflow.config import PAIR_BUDGET_KEYS

    try:
        variants = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise KgrankInputError(f"{path}: {error}; write a YAML list of variants") from error
    if not isinstance(variants, list) or not variants:
        raise KgrankInputError(f"{path}: no variants; write a YAML list of {{dataset, model, name, budget}}")
    known = {*PAIR_BUDGET_KEYS, "max_epochs", "early_stopping"}
    for number, variant in enumerate(variants, start=1):
        where = f"{path}: item {number}"
        if not isinstance(variant, dict) or not all(
            isinstance(variant.get(key), str) for key in ("dataset", "model", "name")
        ):
            raise KgrankInputError(f"{where}: give dataset, model and name, each a string")
        budget = variant.get("budget") or {}
        if not isinstance(budget, dict) or set(budget) - known:
            raise KgrankInputError(
                f"{where}: budget keys {sorted(set(budget) - known) if isinstance(budget, dict) else budget}"
                f" unknown; use {', '.join(sorted(known))}"
            )
        for key, value in budget.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise KgrankInputError(f"{where}: budget.{key} is {value}; give a finite number")
            if key in BUDGET_KEYWORDS and value is not None:
                check_value(BUDGET_KEYWORDS[key], value, f"{where}: budget.{key}", key)
        hyperparameters = (
            REPO / "config" / "hyperparameters" / variant["dataset"] / f"{variant['model']}.yaml"
        )
        if not hyperparameters.is_file():
            raise KgrankInputError(f"{where}: {hyperparameters} does not exist; name a published pair")
        if not (data_dir / variant["dataset"] / "stats.json").is_file():
            raise KgrankInputError(
                f"{where}: {data_dir / variant['dataset']} is not a prepared dataset; run kgrank "
                "prepare-dataset into it"
            )
    return variants


def train_variant(
    variant: dict[str, Any], budget: dict[str, Any], data_dir: str, out: str, device: str, threads: int
) -> dict:
    import pandas as pd

    from kgrank.training.early_stopping import EarlyStopping
    from kgrank.training.hyperparameters import load_hyperparameters
    from kgrank.training.train import train

    dataset, model = variant["dataset"], variant["model"]
    hyperparameters = load_hyperparameters(REPO / "config" / "hyperparameters" / dataset / f"{model}.yaml")
    model_kwargs = {
        key: budget[key] for key in ("embedding_dim", "relation_dim") if budget.get(key) is not None
    }
    stopping = budget.get("early_stopping")
    out_dir = Path(out) / f"{dataset}-{model}-{variant['name']}"
    start = time.perf_counter()
    summary = train(
        Path(data_dir) / dataset,
        hyperparameters,
        out_dir,
        seed=42,
        max_epochs=budget["max_epochs"],
        training_loop=budget["training_loop"],
        num_negs_per_pos=budget["num_negs_per_pos"],
        model_kwargs=model_kwargs or None,
        batch_size=budget["batch_size"],
        learning_rate=budget["learning_rate"],
        loss=budget["loss"],
        label_smoothing=budget["label_smoothing"],
        early_stopping=None if stopping is None else EarlyStopping(**stopping),
        device=device,
        threads=threads,
        progress=False,
    )
    seconds = time.perf_counter() - start
    curve = pd.read_csv(out_dir / "learning_curve.tsv", sep="\t").dropna(subset=["valid_mrr"])
    return {
        **variant,
        "seconds": round(seconds, 1),
        "test_mrr": round(test_mrr(out_dir, Path(data_dir) / dataset, device), 4),
        "curve": {int(row.epoch): round(float(row.valid_mrr), 4) for row in curve.itertuples()},
        "best": round(float(summary["valid_mrr"]), 4),
        "epochs_trained": summary["epochs_trained"],
    }


def test_mrr(model_dir: Path, dataset_dir: Path, device: str) -> float:
    """The kept model's MRR on the test split as the workflow computes it: `kgrank ranks`'s
    engine with its defaults (train, valid and test filtered), realistic ranks, both sides."""
    from kgrank.engine.candidates import known_answers
    from kgrank.engine.ranks import compute_ranks
    from kgrank.evaluation.metrics import lookup
    from kgrank.systems import load_scoring_model

    model, factories = load_scoring_model(model_dir, dataset_dir, device=device)
    table = compute_ranks(model, factories.testing.mapped_triples, known_answers(factories), progress=False)
    return float(lookup("mrr").metric.value(table["realistic"].to_numpy(dtype=float)))


def main() -> None:
    from kgrank.cli.options import positive_int

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", type=Path)
    parser.add_argument("--config", type=Path, default=REPO / "config" / "config.yaml")
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--processes", type=positive_int, default=8)
    # on a CPU, processes x threads at most the cores, so that no variant waits for another
    parser.add_argument("--threads", type=positive_int, default=2)
    args = parser.parse_args()
    from kgrank.errors import KgrankInputError
    from kgrank.workflow.config import pair_budget

    config = yaml.safe_load(args.config.read_text(encoding="utf-8"))
    try:
        variants = read_variants(args.variants, args.data_dir)
    except KgrankInputError as error:
        print(f"budget_search: error: {error}", file=sys.stderr)
        sys.exit(2)
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = []
    for variant in variants:
        dataset, model = variant["dataset"], variant["model"]
        budget = variant_budget(config["budget"], dataset, model, variant.get("budget") or {})
        estimate = estimated_cpu_seconds(dataset, model, budget, args.data_dir)
        jobs.append((variant, pair_budget(budget, dataset, model), estimate))
    with (
        ProcessPoolExecutor(args.processes, mp_context=multiprocessing.get_context("spawn")) as pool,
        (args.out / "search.jsonl").open("a") as log,
    ):
        futures = {
            pool.submit(
                train_variant, variant, budget, str(args.data_dir), str(args.out), args.device, args.threads
            ): estimate
            for variant, budget, estimate in jobs
        }
        for future in as_completed(futures):
            try:
                result = {**future.result(), "estimated_cpu_seconds": round(futures[future])}
            except Exception as error:  # noqa: BLE001  (one failed variant must not end the search)
                result = {"error": repr(error)}
            print(json.dumps(result), flush=True)
            log.write(json.dumps(result) + "\n")
            log.flush()
    sys.exit(0)


if __name__ == "__main__":
    main()
