"""Probe how kgrank answers bad configuration, hyperparameter and dataset input.

Each case changes one thing of a good input (the tiny config `.test/config.yaml`, a
hyperparameter file, an archive) and runs what a user would run: `snakemake -n` for the
config, `kgrank validate-hyperparameters`, `kgrank import-hyperparameters`,
`kgrank prepare-dataset`. A case is

- good: exit code 2, one message line (Snakemake's own preamble aside), no traceback,
  nothing written;
- weak: refused without a traceback, but with another exit code or several lines;
- bad: accepted (exit 0) or a traceback.

Usage: python scripts/probe_bad_config.py [--only SUBSTRING] [--tsv OUT]
(about 10-20 s per config case: each is a Snakemake parse). Issue 29's "Done when" asks
for these counts; the intermediate tables and the study data have their own probes.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / ".test" / "config.yaml"
# Lines Snakemake prints before it reads the Snakefile; kgrank cannot silence them
# (config/README.md says so), so they do not count as message lines.
PREAMBLE = ("Using workflow specific profile", "Config file ", "Building DAG", "Assuming unrestricted")
DELETE = object()


def _set(config: dict, dotted: str, value: object) -> dict:
    changed = copy.deepcopy(config)
    keys = dotted.split(".")
    node = changed
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    if value is DELETE:
        node.pop(keys[-1], None)
    else:
        node[keys[-1]] = value
    return changed


FAMILY = "studies.openworld.family_tree.configurations.complex-d8"
CONFIG_CASES: list[tuple[str, str, object]] = [
    ("seed negative", "seed", -1),
    ("seed text", "seed", "abc"),
    ("unknown model", "models", ["complx"]),
    ("empty model list", "models", []),
    ("unknown dataset source", "datasets.nations", {"source": "ftp"}),
    (
        "archive missing",
        "datasets.toy",
        {"source": "archive", "archive": "missing.tar.gz", "sha256": "0" * 64},
    ),
    ("dataset name with a path", "datasets", {"../evil": {"source": "pykeen"}}),
    ("dataset name with a space", "datasets", {"my data": {"source": "pykeen"}}),
    ("unknown top-level key", "modles", ["transe"]),
    ("device unknown", "device", "tpu"),
    ("hyperparameters_dir missing", "hyperparameters_dir", "/nonexistent/hyperparameters"),
    ("max_epochs 0", "budget.max_epochs", 0),
    ("max_epochs text", "budget.max_epochs", "ten"),
    ("early stopping frequency 0", "budget.early_stopping.frequency", 0),
    ("patience negative", "budget.early_stopping.patience", -1),
    ("learning rate negative", "budget.by_dataset", {"nations": {"transe": {"learning_rate": -0.1}}}),
    ("embedding dim 0", "budget.by_dataset", {"nations": {"transe": {"embedding_dim": 0}}}),
    ("batch size 0", "budget.by_dataset", {"nations": {"transe": {"batch_size": 0}}}),
    ("budget of an unknown model", "budget.by_dataset", {"nations": {"complx": {"max_epochs": 2}}}),
    ("budget of an unknown dataset", "budget.by_dataset", {"natons": {"transe": {"max_epochs": 2}}}),
    ("budget key misspelt", "budget.by_dataset", {"nations": {"transe": {"learning_rat": 0.1}}}),
    ("training loop unknown", "budget.by_dataset", {"nations": {"transe": {"training_loop": "owa"}}}),
    ("negatives 0", "budget.by_dataset", {"nations": {"transe": {"num_negs_per_pos": 0}}}),
    ("sampled candidates 0", "ranks.sampled_candidates", [0]),
    ("sampled candidates beyond the dataset", "ranks.sampled_candidates", [100000]),
    ("candidate sizes beyond the dataset", "studies.ambiguity.candidate_sizes", [5, 1000]),
    ("candidate sizes empty", "studies.ambiguity.candidate_sizes", []),
    ("candidate sizes text", "studies.ambiguity.candidate_sizes", ["x"]),
    ("repetitions 0", "studies.ambiguity.repetitions", 0),
    ("subset fraction 1.5", "studies.ambiguity.subsets.fractions", [1.5]),
    ("subset pair unknown", "studies.ambiguity.subsets.pairs", ["nations/foo"]),
    ("bootstrap resamples 0", "studies.ambiguity.bootstrap_resamples", 0),
    ("simulation entities 0", "studies.openworld.simulation.entities", 0),
    ("more answers than entities", "studies.openworld.simulation.answers", 500),
    ("density 1.5", "studies.openworld.simulation.densities", [1.5]),
    (
        "strength start > stop",
        "studies.openworld.simulation.strength",
        {"start": 1.0, "stop": 0.3, "step": 0.05},
    ),
    ("strength step 0", "studies.openworld.simulation.strength", {"start": 0.3, "stop": 1.0, "step": 0}),
    ("queries 0", "studies.openworld.simulation.queries", 0),
    ("correlation 2", "studies.openworld.simulation.correlations", [2]),
    ("family model misspelt", f"{FAMILY}.model", "complx"),
    ("family key misspelt", f"{FAMILY}.optimzer", "adam"),
    ("family dim 0", f"{FAMILY}.model_kwargs", {"embedding_dim": 0}),
    ("family lr negative", f"{FAMILY}.optimizer_kwargs", {"lr": -1}),
    ("family epochs 0", f"{FAMILY}.training_kwargs", {"num_epochs": 0, "batch_size": 1024}),
    ("family loss unknown", f"{FAMILY}.loss", "foo"),
    ("family graph unknown", "studies.openworld.family_tree.graphs", ["nonexistent"]),
    ("family density absent", "studies.openworld.family_tree.densities", [0.5]),
    ("ir dataset untrained", "studies.ir.dataset", "wn18rr"),
    ("ir data_dir missing", "studies.ir.data_dir", "/nonexistent"),
    ("ir run_depth 0", "studies.ir.run_depth", 0),
    ("ir stability fraction 0", "studies.ir.stability.fractions", [0, 1.0]),
    ("ir repetitions 0", "studies.ir.stability.repetitions", 0),
    ("ir montecarlo negative", "studies.ir.montecarlo_replicates", -1),
    ("moments replicates 0", "studies.moments.montecarlo_replicates", 0),
    ("unknown study", "studies.unknown_study", {}),
    ("figure1 order unknown", "studies.paper.figure1_order", "size"),
    ("external system name unsafe", "external_systems.nations", {"bad name!": {"ranks": "x.csv"}}),
    ("external folder missing", "external_systems.nations", {"pk": {"model": "/nonexistent"}}),
    ("external ranks and scores", "external_systems.nations", {"pk": {"ranks": "a.csv", "scores": "b.npy"}}),
    ("external queries without scores", "external_systems.nations", {"pk": {"queries": "q.tsv"}}),
    ("external system of an unknown dataset", "external_systems", {"natons": {"pk": {"ranks": "a.csv"}}}),
    ("comparison seeds without seed", "comparison.seeds", [1, 2]),
    ("comparison seed repeated", "comparison.seeds", [7, 7]),
    ("comparison seed above 2^32", "comparison.seeds", [7, 2**32]),
    ("comparison seed float", "comparison.seeds", [7, 8.5]),
    ("comparison 21 seeds", "comparison.seeds", list(range(7, 28))),
    ("comparison seeds empty", "comparison.seeds", []),
    ("comparison seeds of an untrained pair", "comparison.seeds_by_pair", {"nations": {"rotate": [7, 8]}}),
    ("comparison pair seeds without seed", "comparison.seeds_by_pair", {"nations": {"complex": [8]}}),
    ("comparison metric unknown", "comparison.metrics", ["mrrr"]),
    ("comparison metric a median", "comparison.metrics", ["median_rank"]),
    ("comparison alpha 0", "comparison.alpha", 0),
    ("comparison resamples a million", "comparison.bootstrap_resamples", 10**6),
    ("comparison key misspelt", "comparison.seed", [7]),
]

GOOD_HYPERPARAMETERS = REPO / "config" / "hyperparameters" / "nations" / "transe.yaml"


def _hyperparameter_cases() -> list[tuple[str, Callable[[dict], dict | str]]]:
    def set_path(*keys: str, value: object) -> Callable[[dict], dict]:
        def change(document: dict) -> dict:
            changed = copy.deepcopy(document)
            node = changed
            for key in keys[:-1]:
                node = node.setdefault(key, {})
            node[keys[-1]] = value
            return changed

        return change

    return [
        ("hp learning rate negative", set_path("pipeline", "optimizer_kwargs", "lr", value=-0.1)),
        ("hp embedding dim 0", set_path("pipeline", "model_kwargs", "embedding_dim", value=0)),
        ("hp weight decay negative", set_path("pipeline", "optimizer_kwargs", "weight_decay", value=-1)),
        ("hp scoring norm text", set_path("pipeline", "model_kwargs", "scoring_fct_norm", value="abc")),
        ("hp epochs 0", set_path("pipeline", "training_kwargs", "num_epochs", value=0)),
        ("hp batch size 0", set_path("pipeline", "training_kwargs", "batch_size", value=0)),
        ("hp label smoothing 1", set_path("pipeline", "training_kwargs", "label_smoothing", value=1.0)),
        ("hp unknown model", set_path("pipeline", "model", value="complx")),
        ("hp top-level model differs", set_path("model", value="complx")),
        ("hp unknown key", set_path("pipeline", "optimzer", value="adam")),
        ("hp optimizer unknown", set_path("pipeline", "optimizer", value="sgdx")),
        ("hp loss unknown", set_path("pipeline", "loss", value="foo")),
        ("hp not a mapping", lambda document: "- just\n- a list\n"),
        ("hp not YAML", lambda document: "model: [unclosed\n"),
    ]


def _import_cases() -> list[tuple[str, object]]:
    good = {"dataset": "nations", "model": "transe"}
    return [
        ("import dataset with a path", {**good, "dataset": "../../x"}),
        ("import dataset absolute", {**good, "dataset": "/tmp/x"}),
        ("import model unknown", {**good, "model": "complx"}),
        ("import not JSON", "{not json"),
        ("import empty object", {}),
    ]


def _archive_bytes(members: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _archive_cases() -> list[tuple[str, list[tuple[str, bytes]] | None, str | None]]:
    triples = b"a\tr\tb\nb\tr\tc\n"
    splits = [("train.txt", triples), ("valid.txt", triples), ("test.txt", triples)]
    return [
        ("archive checksum mismatch", splits, "0" * 64),
        ("archive duplicate member", [*splits, ("train.txt", triples)], None),
        ("archive without test", splits[:2], None),
        ("archive not gzip", None, None),
        ("archive 4-field line", [("train.txt", b"a\tr\tb\tx\n"), *splits[1:]], None),
        ("archive empty train", [("train.txt", b""), *splits[1:]], None),
    ]


def classify(returncode: int, output: str, written: list[str]) -> tuple[str, str]:
    lines = [line for line in output.splitlines() if line.strip() and not line.startswith(PREAMBLE)]
    message = lines[-1] if lines else ""
    if returncode == 0:
        return "bad", "accepted (exit 0)"
    if "Traceback" in output:
        return "bad", "traceback: " + message
    if written:
        return "weak", f"wrote {written}: " + message
    if returncode != 2 or len(lines) != 1:
        return "weak", f"exit {returncode}, {len(lines)} lines: " + message
    return "good", message


def _run(command: list[str], cwd: Path, watch: Path | None = None) -> tuple[str, str]:
    before = set(watch.rglob("*")) if watch and watch.exists() else set()
    env = {**os.environ, "PYTHONWARNINGS": os.environ.get("PYTHONWARNINGS", "")}
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env, timeout=600)
    after = set(watch.rglob("*")) if watch and watch.exists() else set()
    written = sorted(str(path) for path in after - before if path.is_file())
    return classify(result.returncode, result.stdout + result.stderr, written)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument("--tsv", help="write one row per case here")
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    snakemake, kgrank = str(bin_dir / "snakemake"), str(bin_dir / "kgrank")
    tiny = yaml.safe_load(TINY.read_text())
    good_hyperparameters = yaml.safe_load(GOOD_HYPERPARAMETERS.read_text())
    rows = []
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        for name, key, value in CONFIG_CASES:
            if args.only not in name:
                continue
            config = scratch / "config.yaml"
            config.write_text(yaml.safe_dump(_set(tiny, key, value)))
            rows.append(("config", name, *_run([snakemake, "-n", "--configfile", str(config)], REPO)))
        for name, change in _hyperparameter_cases():
            if args.only not in name:
                continue
            changed = change(good_hyperparameters)
            path = scratch / "hp.yaml"
            path.write_text(changed if isinstance(changed, str) else yaml.safe_dump(changed))
            rows.append(
                ("hyperparameters", name, *_run([kgrank, "validate-hyperparameters", str(path)], REPO))
            )
        for name, document in _import_cases():
            if args.only not in name:
                continue
            path = scratch / "import.json"
            path.write_text(document if isinstance(document, str) else json.dumps(document))
            out_dir = scratch / "imported"
            out_dir.mkdir(exist_ok=True)
            command = [kgrank, "import-hyperparameters", str(path), "--out-dir", str(out_dir)]
            rows.append(("import", name, *_run(command, REPO, watch=scratch)))
        for name, members, sha256 in _archive_cases():
            if args.only not in name:
                continue
            archive = scratch / "toy.tar.gz"
            archive.write_bytes(b"not a gzip file" if members is None else _archive_bytes(members))
            out_dir = scratch / "prepared"
            command = [
                kgrank,
                "prepare-dataset",
                "--name",
                "toy",
                "--archive",
                str(archive),
                "--out-dir",
                str(out_dir),
            ]
            command += ["--sha256", sha256] if sha256 else []
            rows.append(("archive", name, *_run(command, REPO, watch=out_dir.parent / "prepared")))
    for kind, name, verdict, message in rows:
        print(f"{verdict:5s} {kind:15s} {name:40s} {message[:160]}")
    counts = {verdict: sum(row[2] == verdict for row in rows) for verdict in ("good", "weak", "bad")}
    print(f"{len(rows)} cases: {counts['good']} good, {counts['weak']} weak, {counts['bad']} bad")
    if args.tsv:
        with open(args.tsv, "w") as out:
            out.write("kind\tcase\tverdict\tmessage\n")
            out.writelines(f"{k}\t{n}\t{v}\t{m}\n" for k, n, v, m in rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
