"""The GPU benchmark: kgrank against PyKEEN 1.11.1 on one GPU, in one process, one table.

For each dataset and family of the paper profile (the published hyperparameters in
config/hyperparameters, seed 42), on the GPU:

- **training**: seconds per epoch of kgrank's step (for LCWA the 1-N step with sparse
  labels, as ``kgrank train`` runs it; for sLCWA PyKEEN's own, which kgrank does not
  change) and of PyKEEN's, each the median of ``--steps`` steps after one untimed
  warm-up, synchronised, from the data loader's batch to the optimiser step, scaled to an
  epoch. PyKEEN's broadcast is split into sub-batches where it would pass
  ``--pykeen-memory`` GiB, as its ``sub_batch_size`` does;
- **ranks**: the whole test split, both sides, filtered by train, valid and test, at
  ``--batch-size``: kgrank's rank engine (its filter index built inside the timing)
  against PyKEEN's ``RankBasedEvaluator`` (each the best of ``--repeats`` runs after a
  warm-up), the share of realistic ranks equal between them, and the share of each equal
  to PyKEEN's ranks of the same model in float64 (the reference neither rounds; kgrank's
  tie rule on a GPU decides near-ties in float64, kgrank.engine.scoring.TIE_RULES);
- **the tie rule across devices**: first, on Kinships with untrained models of every
  family whose entities differ by a millionth, the share of kgrank's ranks on the GPU
  equal to its ranks on the CPU under each tie rule;
- **where kgrank's ranking spends its time**: torch's profiler with CUDA activities over
  one more ranking: the GPU's busy time (kernels and copies) and every host-device
  synchronisation (count, and the host time spent waiting in them, by the operator that
  asked).

The model ranked is the one the timed steps trained (both sides' steps, one after the
other), so that its scores have a trained model's ties and near-ties. Then the paper
profile's cost per pair on this GPU: the published epochs times kgrank's seconds per
epoch plus one ranking, against the GPU-seconds the case study reports (``--published``).

    python benchmarks/gpu.py --data DIR [--datasets fb15k237 wn18rr] [--families ...]
        [--steps 20] [--batch-size 256] [--repeats 2] [--published FILE] [--out DIR]

Writes ``gpu.md`` (the tables, with the card, versions and ``--commit``) and
``profile.txt`` (the profiler's operator tables) into ``--out``. Speed is measured here,
correctness in tests/test_ranks.py and tests/test_training_step.py.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
FAMILIES = ("complex", "rotate", "transe", "tucker")
SYNCHRONISATIONS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize")


def synchronise() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def synchronised_seconds(call) -> tuple[float, object]:
    synchronise()
    start = time.perf_counter()
    result = call()
    synchronise()
    return time.perf_counter() - start, result


def step_seconds(model, pipeline, factory, *, fast: bool, steps: int, sub_batch: int | None):
    """Seconds of each of ``steps`` steps after an untimed one, and the batches of an epoch."""
    from training import make_optimizer, time_steps  # benchmarks/training.py

    from kgrank.training.train import negative_sampling

    training = pipeline["training_kwargs"]
    model.train()
    seconds, per_epoch, _ = time_steps(
        model,
        make_optimizer(pipeline, model, fast),
        factory,
        int(training["batch_size"]),
        steps,
        float(training.get("label_smoothing") or 0.0),
        fast,
        sub_batch,
        training_loop=pipeline["training_loop"],
        loop_kwargs=negative_sampling(pipeline),
        synchronise=synchronise,
    )
    return seconds, per_epoch


def evaluator_ranks(model, factories, test, batch_size: int) -> dict:
    """PyKEEN's realistic ranks of each side (benchmarks/ranks.py's evaluation)."""
    from ranks import evaluator_ranks as pykeen_ranks  # benchmarks/ranks.py

    _, ranks = pykeen_ranks(model, factories, test, batch_size)
    return {side: ranks[side, "realistic"] for side in ("head", "tail")}


def engine_ranks(model, factories, test, batch_size: int) -> dict:
    from kgrank.engine.candidates import known_answers
    from kgrank.engine.ranks import compute_ranks

    table = compute_ranks(model, test, known_answers(factories), batch_size=batch_size, progress=False)
    return {side: table.loc[table["side"] == side, "realistic"].to_numpy() for side in ("head", "tail")}


def equal_share(ours: dict, theirs: dict) -> float:
    return sum(int((ours[side] == theirs[side]).sum()) for side in ours) / sum(len(v) for v in ours.values())


def best_of(call, repeats: int) -> tuple[float, object]:
    runs = [synchronised_seconds(call) for _ in range(repeats)]
    return min(seconds for seconds, _ in runs), runs[-1][1]


def profiled(call) -> tuple[str, str]:
    """(one line: wall, GPU busy, synchronisations by the operator that asked; the
    profiler's operator table)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    synchronise()
    with profile(activities=activities) as profiler:
        start = time.perf_counter()
        call()
        synchronise()
        wall = time.perf_counter() - start
    events = profiler.events()
    on_device = [event for event in events if event.device_type == DeviceType.CUDA]
    busy = sum(event.time_range.elapsed_us() for event in on_device) / 1e6
    waits: dict[str, list[float]] = {}
    for event in events:
        if event.name in SYNCHRONISATIONS:
            waits.setdefault(_asker(event), []).append(event.cpu_time_total / 1e6)
    counted = sum(len(values) for values in waits.values())
    by_asker = ", ".join(
        f"{name} {len(values)} ({sum(values):.3f} s)"
        for name, values in sorted(waits.items(), key=lambda item: -sum(item[1]))
    )
    line = f"wall {wall:.2f} s, GPU busy {busy:.2f} s, {counted} synchronisations: {by_asker or 'none'}"
    table = profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=25)
    return line, table


def _asker(event) -> str:
    """The outermost aten operator above a synchronisation (nonzero, item, a copy to the host)."""
    asker, outermost = event.cpu_parent, None
    while asker is not None:
        if asker.name.startswith("aten::"):
            outermost = asker.name
        asker = asker.cpu_parent
    return outermost or "python"


# the case study the paper profile reproduces; published_results.tsv also holds Ali et al.
# (2021), trained on other hardware
CASE_STUDY_SOURCE = "ranking-metrics-manuscript"


def published_seconds(path: Path | None) -> dict:
    """(dataset, model) -> the GPU-seconds the case study reports for its training."""
    if path is None or not path.is_file():
        return {}
    import pandas as pd

    table = pd.read_csv(path, sep="\t").dropna(subset=["train_seconds_gpu"])
    table = table[table["source"].str.startswith(CASE_STUDY_SOURCE)]
    return {(row.dataset, row.model): float(row.train_seconds_gpu) for row in table.itertuples()}


# (PyKEEN model, its arguments) of each family, small, for the tie rule across devices
SMALL_FAMILIES = {
    "transe (L1)": ("transe", {"scoring_fct_norm": 1, "embedding_dim": 32}),
    "transe (L2)": ("transe", {"scoring_fct_norm": 2, "embedding_dim": 32}),
    "rotate": ("rotate", {"embedding_dim": 32}),
    "complex": ("complex", {"embedding_dim": 32}),
    "distmult": ("distmult", {"embedding_dim": 32}),
    "rescal": ("rescal", {"embedding_dim": 16}),
    "tucker": ("tucker", {"embedding_dim": 32, "relation_dim": 16}),
    "conve": (
        "conve",
        {"embedding_dim": 32, "embedding_height": 4, "embedding_width": 8, "output_channels": 4},
    ),
}


def tie_rule_across_devices(device) -> list[str]:
    """Table rows: per family, on Kinships (PyKEEN's own copy) with untrained entities made
    to differ by a millionth of their size (most candidates near-tie), the share of
    kgrank's ranks (optimistic and pessimistic, both sides) on ``device`` equal to its
    ranks on the CPU, under each tie rule."""
    from pykeen.datasets import Kinships
    from pykeen.models import model_resolver

    from kgrank.engine.candidates import KnownAnswers
    from kgrank.engine.ranks import compute_ranks

    dataset = Kinships()
    splits = (dataset.training, dataset.validation, dataset.testing)
    known = KnownAnswers(
        [split.mapped_triples for split in splits], dataset.num_entities, dataset.num_relations
    )
    test = dataset.testing.mapped_triples
    rows = []
    for name, (model_name, kwargs) in SMALL_FAMILIES.items():
        model = model_resolver.make(
            model_name, triples_factory=dataset.training, random_seed=3, **kwargs
        ).eval()
        with torch.no_grad():
            for representation in model.entity_representations:
                entities = representation._embeddings.weight
                entities.copy_(entities[:1] + 1e-6 * entities)
        shares = []
        for tie_rule in ("float64", "pykeen"):
            on_cpu, on_device = (
                compute_ranks(model.to(where), test, known, progress=False, tie_rule=tie_rule)[
                    ["optimistic", "pessimistic"]
                ].to_numpy()
                for where in ("cpu", device)
            )
            shares.append(float((on_cpu == on_device).mean()))
        rows.append(f"| {name} | {shares[0]:.4%} | {shares[1]:.4%} |")
        print(rows[-1], flush=True)
    return rows


def measure_pair(
    dataset: str, family: str, path: Path, args, device, published: dict
) -> tuple[str, str, str]:
    """(the pair's row, its paper-profile cost row, its profile) from one model of the pair."""
    from training import pykeen_sub_batch  # benchmarks/training.py

    from kgrank.data.datasets import load_factories
    from kgrank.engine.candidates import known_answers
    from kgrank.engine.scoring import Scorer, float64_copy
    from kgrank.training.hyperparameters import load_hyperparameters
    from kgrank.training.train import build_model, create_inverse_triples

    pipeline = load_hyperparameters(path)["pipeline"]
    factories = load_factories(args.data / dataset, create_inverse_triples=create_inverse_triples(pipeline))
    model = build_model(pipeline, factories.training, seed=42).to(device)
    dim = int(pipeline["model_kwargs"]["embedding_dim"])
    width = 2 * dim if family in ("rotate", "complex") else dim
    batch = int(pipeline["training_kwargs"]["batch_size"])
    sub_batch = pykeen_sub_batch(batch, factories.training.num_entities, width, args.pykeen_memory)
    ours, per_epoch = step_seconds(
        model, pipeline, factories.training, fast=True, steps=args.steps, sub_batch=None
    )
    theirs, _ = step_seconds(
        model, pipeline, factories.training, fast=False, steps=args.steps, sub_batch=sub_batch
    )
    model.eval()
    test = factories.testing.mapped_triples

    def ours_ranked(triples=test) -> dict:
        return engine_ranks(model, factories, triples, args.batch_size)

    def theirs_ranked(triples=test) -> dict:
        return evaluator_ranks(model, factories, triples, args.batch_size)

    # untimed warm-ups on one batch: kernels, cuBLAS handles, PyKEEN's batch-size search
    ours_ranked(test[: args.batch_size])
    theirs_ranked(test[: args.batch_size])
    index_seconds, _ = synchronised_seconds(lambda: known_answers(factories))
    engine_seconds, engine = best_of(ours_ranked, args.repeats)
    pykeen_seconds, evaluator = best_of(theirs_ranked, args.repeats)
    reference = evaluator_ranks(float64_copy(model), factories, test, args.batch_size)
    line, table = profiled(ours_ranked)
    name = f"{family} (L{model.interaction.p:g})" if family == "transe" else family
    step_ours, step_theirs = statistics.median(ours), statistics.median(theirs)
    row = (
        f"| {dataset} | {name} | {Scorer(model).family} | {pipeline['training_loop']} | "
        f"{step_theirs * per_epoch:.2f} | {step_ours * per_epoch:.2f} | "
        f"{step_theirs / step_ours:.2f}x | "
        f"{pykeen_seconds:.2f} | {engine_seconds:.2f} | {pykeen_seconds / engine_seconds:.2f}x | "
        f"{index_seconds:.2f} | {equal_share(engine, evaluator):.4%} | "
        f"{equal_share(engine, reference):.4%} | {equal_share(evaluator, reference):.4%} |"
    )
    print(row, "\n  kgrank ranking:", line, flush=True)
    epochs = int(pipeline["training_kwargs"]["num_epochs"])
    cost = epochs * step_ours * per_epoch + engine_seconds
    reported = published.get((dataset, family))
    cost_row = f"| {dataset} | {name} | {epochs} | {cost:,.0f} | " + (
        f"{reported:,.0f} | {reported / cost:.1f}x |" if reported else "not given | |"
    )
    return row, cost_row, f"## {dataset} {name}\n{line}\n\n{table}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO / "results" / "data")
    parser.add_argument("--datasets", nargs="+", default=["fb15k237", "wn18rr"])
    parser.add_argument("--families", nargs="+", default=list(FAMILIES))
    parser.add_argument("--steps", type=int, default=20, help="timed training steps of each side")
    parser.add_argument("--batch-size", type=int, default=256, help="ranking batch size of both sides")
    parser.add_argument("--repeats", type=int, default=2, help="timed rankings of each side")
    parser.add_argument("--pykeen-memory", type=float, default=24.0, help="GiB for PyKEEN's broadcast")
    parser.add_argument("--published", type=Path, default=None, help="published_results.tsv")
    parser.add_argument("--commit", default="unknown")
    parser.add_argument("--out", type=Path, default=Path("gpu-benchmark"))
    parser.add_argument("--device", default="cuda", help="cpu: only to try the script on a small dataset")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("benchmarks/gpu.py needs a CUDA GPU; on the CPU: benchmarks/ranks.py, training.py")

    import pykeen

    from kgrank.engine.scoring import default_tie_rule

    device = torch.device(args.device)
    card = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    header = (
        f"{card}, torch {torch.__version__}, PyKEEN {pykeen.get_version()}, commit {args.commit}, "
        f"{time.strftime('%Y-%m-%d', time.gmtime())}; seed 42; ranking batch {args.batch_size}; "
        f"kgrank's tie rule {default_tie_rule(device)}; "
        f"TF32 matrix products {'on' if torch.backends.cuda.matmul.allow_tf32 else 'off'}"
    )
    print(header, flush=True)
    published = published_seconds(args.published)
    across = tie_rule_across_devices(device)
    rows, costs, profiles = [], [], []
    for dataset in args.datasets:
        for family in args.families:
            path = REPO / "config" / "hyperparameters" / dataset / f"{family}.yaml"
            if not path.is_file():
                continue  # no published configuration of this pair
            row, cost, profile = measure_pair(dataset, family, path, args, device, published)
            rows.append(row)
            costs.append(cost)
            profiles.append(profile)
            torch.cuda.empty_cache()
    columns = (
        "dataset | family | scoring | loop | PyKEEN s/epoch | kgrank s/epoch | PyKEEN / kgrank | "
        "PyKEEN ranks s | kgrank ranks s | PyKEEN / kgrank | filter index s | ranks = PyKEEN's | "
        "kgrank = float64 | PyKEEN = float64"
    )
    cost_columns = "dataset | family | published epochs | kgrank GPU-s | published GPU-s | published / kgrank"
    report = "\n".join(
        [
            header,
            "",
            f"| {columns} |",
            "|" + "---|" * (columns.count("|") + 1),
            *rows,
            "",
            "The paper profile on this GPU: published epochs x kgrank's seconds per epoch + one ranking.",
            "",
            f"| {cost_columns} |",
            "|" + "---|" * (cost_columns.count("|") + 1),
            *costs,
            "",
            "kgrank's ranks on this device equal to its ranks on the CPU (Kinships, untrained entities a "
            "millionth apart):",
            "",
            "| family | tie rule float64 | tie rule pykeen |",
            "|---|---|---|",
            *across,
        ]
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu.md").write_text(report + "\n", encoding="utf-8")
    (args.out / "profile.txt").write_text("\n\n".join(profiles) + "\n", encoding="utf-8")
    print("\n" + report)


if __name__ == "__main__":
    main()
