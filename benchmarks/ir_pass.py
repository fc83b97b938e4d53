"""Speed of the `ir` study's scoring pass against its bare arithmetic, on FB15k-237.

One pass is what `kgrank ir-evaluate` does after loading the model:

- every distinct (side, triple) of the evaluation sets scored once;
- each item ranked under both filtering protocols;
- the run lists cut (``run_depth`` deep for the exported sets, 20 for the others);
- the outputs written (the TREC run files and the item table).

The floor is the bare arithmetic of the same work, on random tensors of the same shapes:

- the score rows through the model family's products (forward only; torch's cdist for
  the L1 norm), as in benchmarks/ranks.py;
- two comparisons of every score with the true one, per item and protocol (one protocol
  for FB-Test-O, where the two filters coincide);
- torch.topk of the cut depth over every run list's row;
- the run rows written as gzipped TREC text by pyarrow's CSV writer.

The item table's IR measures (AP@20 and nDCG@20 through ir-measures, per query) are
timed and printed apart. They are no arithmetic of the pass, and the floor leaves them
out.

It needs the default run's FB15k-237 data and evaluation sets under ``--results``. The
model is the run's, or an untrained DistMult (dim 200) when the run has none: the cost
of scoring does not depend on the weights. It is never asserted in tests: speed is
measured here, correctness in tests/studies/test_ir_evaluation.py.

    python benchmarks/ir_pass.py [--results results] [--models transe distmult ...]
        [--threads 1] [--batch-size 256] [--repeats 3]
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ranks import model_for, score_block_work  # noqa: E402  (benchmarks/ranks.py: model and score block)
from training import repeated_seconds  # noqa: E402  (benchmarks/training.py: the timing loop)

DATASET = "fb15k237"


def median_seconds(work, repeats: int) -> float:
    """The median of ``repeats`` timed calls of ``work()`` after one untimed warm-up."""
    return statistics.median(repeated_seconds(work, repeats))


def pass_shape(evaluations, run_depth: int, export: tuple[str, ...]) -> dict[str, int]:
    """What one pass must compute, counted from the evaluation sets: score rows, ranked
    (item, protocol) pairs, run lists per cut depth, and run rows written."""
    from kgrank.studies.ir import trec
    from kgrank.studies.ir.evaluation import plan_items
    from kgrank.studies.ir.settings import PROTOCOLS

    items = plan_items(evaluations)
    rows = len(items[["side", "head", "relation", "tail"]].drop_duplicates())
    # FB-Test-O's relevant answers are all the test answers: both protocols filter alike
    protocols = np.where(items["evaluation"] == "test", 1, len(PROTOCOLS))
    queries = items.drop_duplicates(["evaluation", "query"])
    query_protocols = np.where(queries["evaluation"] == "test", 1, len(PROTOCOLS))
    exported = queries["evaluation"].isin(export).to_numpy()
    return {
        "rows": rows,
        "ranked": int(protocols.sum()),
        "deep_lists": int(query_protocols[exported].sum()),
        "shallow_lists": int(query_protocols[~exported].sum()),
        "run_rows": int(query_protocols[exported].sum()) * run_depth,
        "shallow_depth": trec.MEASURE_DEPTH,
    }


def write_floor_seconds(num_rows: int, num_entities: int, out: Path) -> float:
    """pyarrow's CSV writer on a TREC run of ``num_rows`` lines (qid Q0 docno rank score tag),
    gzipped as the study writes them."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    rng = np.random.default_rng(0)
    docnos = np.array([f"/m/{index:07x}" for index in range(num_entities)], dtype=object)
    table = pa.table(
        {
            "qid": pa.array(np.arange(num_rows) // 100),
            "q0": pa.array(["Q0"] * num_rows),
            "docno": pa.array(docnos[rng.integers(0, num_entities, num_rows)]),
            "rank": pa.array(np.arange(num_rows) % 100 + 1),
            "score": pa.array(rng.standard_normal(num_rows)),
            "tag": pa.array(["kgrank"] * num_rows),
        }
    )
    options = pa_csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")

    def write() -> None:
        # zlib at the study's level 6 (pyarrow's own gzip stream took four times as long)
        text = pa.BufferOutputStream()
        pa_csv.write_csv(table, text, write_options=options)
        with gzip.open(out, "wb", compresslevel=6) as stream:
            stream.write(text.getvalue().to_pybytes())

    return median_seconds(write, repeats=1)


def floor_seconds(
    model, family: str, shape: dict[str, int], batch_size: int, run_depth: int, repeats: int, out: Path
):
    """The floor's parts, in seconds: scores, comparisons, top-k and writing."""
    from kgrank.engine.ranks import count_above

    num_entities = model.num_entities
    batches = lambda count: -(-count // batch_size)  # noqa: E731
    with torch.inference_mode():
        block = median_seconds(score_block_work(model, family, batch_size), repeats)
        scores = torch.randn(batch_size, num_entities)
        true_scores = torch.randn(batch_size, 1)
        # the two counts in their fastest form on the CPU, the pass's own
        compare = median_seconds(
            lambda: (count_above(scores, true_scores), count_above(scores, true_scores, inclusive=True)),
            repeats,
        )
        deep = median_seconds(lambda: torch.topk(scores, k=run_depth, dim=1), repeats)
        shallow = median_seconds(lambda: torch.topk(scores, k=shape["shallow_depth"], dim=1), repeats)
    return {
        "scores": block * batches(shape["rows"]),
        "compare": compare * batches(shape["ranked"]),
        "topk": deep * batches(shape["deep_lists"]) + shallow * batches(shape["shallow_lists"]),
        "write": write_floor_seconds(shape["run_rows"], num_entities, out / "floor.run.gz"),
    }


def kgrank_seconds(model, factories, evaluations, labels, run_depth: int, export, batch_size: int, out: Path):
    """The pass as `kgrank ir-evaluate` runs it, in its three parts."""
    from kgrank.data.io import write_table
    from kgrank.engine.candidates import known_answers
    from kgrank.studies.ir.evaluation import evaluation_pass, item_table
    from kgrank.studies.ir.settings import protocol_filter_splits
    from kgrank.studies.ir.trec import run_file_name, run_files, write_run

    filters = {
        protocol: known_answers(factories, splits)
        for protocol, splits in protocol_filter_splits(("train", "valid", "test")).items()
    }
    start = time.perf_counter()
    micro, runs = evaluation_pass(
        model,
        filters,
        evaluations,
        run_depth=run_depth,
        export=export,
        batch_size=batch_size,
        progress=False,
    )
    scored = time.perf_counter()
    items = item_table(micro, runs, labels)
    measured = time.perf_counter()
    exported = runs[runs["evaluation"].isin(list(export))]
    for evaluation, protocol, run in run_files(exported, export):
        write_run(out / run_file_name(evaluation, protocol), run, labels)
    write_table(out / "items.parquet", items)
    written = time.perf_counter()
    return {"pass": scored - start, "measures": measured - scored, "write": written - measured}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--models", nargs="+", default=["transe", "distmult"])
    parser.add_argument("--threads", type=int, default=1, help="as the workflow's ir_evaluate rule (1)")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--run-depth", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(args.threads)

    from kgrank.data.tables import read_table
    from kgrank.engine.scoring import Scorer
    from kgrank.studies.ir.evaluation import entity_labels
    from kgrank.studies.ir.settings import exported_evaluations
    from kgrank.studies.ir.trec import MEASURE_DEPTH

    evaluations_path = args.results / "ir" / DATASET / "evaluations.parquet"
    if not evaluations_path.is_file():
        print(
            f"ir_pass: error: {evaluations_path} is missing; "
            f"run `snakemake --cores 2 {evaluations_path}` first",
            file=sys.stderr,
        )
        sys.exit(2)
    from kgrank.studies.ir.commands import evaluations_kind

    evaluations = read_table(evaluations_path, evaluations_kind())
    export = exported_evaluations(DATASET, DATASET)
    shape = pass_shape(evaluations, args.run_depth, export)
    print(
        f"FB15k-237, {args.threads} thread(s): {shape['rows']:,} score rows, {shape['ranked']:,} ranked "
        f"(item, protocol) pairs, {shape['deep_lists']:,} run lists {args.run_depth} deep and "
        f"{shape['shallow_lists']:,} {MEASURE_DEPTH} deep, {shape['run_rows']:,} run rows written"
    )
    print(
        f"{'model':<9} {'kgrank pass s':>13} {'+ write s':>9} {'floor s':>8} {'(scores':>8} {'compare':>8} "
        f"{'topk':>6} {'write)':>7} {'kgrank / floor':>15} {'measures s':>11}"
    )
    for model_name in args.models:
        model, factories = model_for(args.results, DATASET, model_name)
        family = Scorer(model).family
        labels = entity_labels(factories)
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder)
            ours = kgrank_seconds(
                model, factories, evaluations, labels, args.run_depth, export, args.batch_size, out
            )
            floor = floor_seconds(model, family, shape, args.batch_size, args.run_depth, args.repeats, out)
        total, floor_total = ours["pass"] + ours["write"], sum(floor.values())
        print(
            f"{model_name:<9} {ours['pass']:>13.1f} {ours['write']:>9.1f} {floor_total:>8.1f} "
            f"{floor['scores']:>8.1f} {floor['compare']:>8.1f} {floor['topk']:>6.1f} {floor['write']:>7.1f} "
            f"{total / floor_total:>14.2f}x {ours['measures']:>11.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
