"""The bad-input cases of the `kgrank` commands and the one check they all go through:
exit code 2, one error line naming what is wrong, nothing written. tests/test_cli.py holds
the cases of the stages and the user commands (evaluate, compare, scorecard); each study's
are beside its tests (tests/studies/test_<study>_cli.py); test_cli checks that every
command of the parser has one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import REPO

from kgrank.cli.main import main


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``kgrank argv`` (argparse exits, handlers return)."""
    try:
        code = main(argv)
    except SystemExit as exit:
        code = exit.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _long_ranks(nations: Path) -> str:
    """A rank file of every test triple and side of ``nations``, each ranked first."""
    lines = ["head,relation,tail,side,rank"]
    for line in (nations / "test.tsv").read_text(encoding="utf-8").splitlines():
        triple = ",".join(line.split("\t"))
        lines += [f"{triple},head,1", f"{triple},tail,1"]
    return "\n".join(lines) + "\n"


def _error_line(command: str, err: str) -> str:
    """The one error line of a failed command (argparse's too: kgrank.cli.main.OneLineParser
    leaves its usage out)."""
    lines = err.strip().splitlines()
    assert lines, "nothing on stderr"
    assert "Traceback" not in err
    assert len(lines) == 1, err
    assert lines[0].startswith(f"kgrank {command}: error: "), err
    return lines[0]


# --- bad input, one case or more per known command -----------------------------------


@dataclass
class Case:
    """``argv(tmp_path, nations_dir)`` must fail with exit code 2 and one error line
    containing every string in ``names`` (formatted with ``tmp``)."""

    command: str
    id: str
    argv: Callable[[Path, Path], list[str]]
    names: tuple[str, ...]
    # a command that still crashes with a traceback (or accepts the input) on this case
    xfail: str | None = None
    needs_nations: bool = field(default=False)


def _write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def _bad_tsv(tmp: Path) -> str:
    return _write(tmp / "bad.tsv", "a\tb\n1\n")


def _bad_dataset(tmp: Path, nations: Path) -> str:
    """A prepared dataset whose train.tsv has a two-field line at the end."""
    folder = tmp / "badset"
    folder.mkdir()
    for split in ("train", "valid", "test"):
        (folder / f"{split}.tsv").write_bytes((nations / f"{split}.tsv").read_bytes())
    with (folder / "train.tsv").open("a", encoding="utf-8") as handle:
        handle.write("brazil\tembassy\n")
    return str(folder)


def _dataset_without(tmp: Path, nations: Path, split: str) -> str:
    """A prepared Nations whose ``split`` file is empty."""
    folder = tmp / f"no-{split}"
    folder.mkdir()
    for name in ("train", "valid", "test"):
        (folder / f"{name}.tsv").write_bytes(b"" if name == split else (nations / f"{name}.tsv").read_bytes())
    return str(folder)


def _bad_key_yaml(tmp: Path) -> str:
    text = (REPO / "config/hyperparameters/nations/transe.yaml").read_text(encoding="utf-8")
    path = tmp / "transe.yaml"
    path.write_text(text + "bogus_key: 1\n", encoding="utf-8")
    return str(path)


def _bad_stats(tmp: Path) -> str:
    return _write(tmp / "stats.json", '{"dataset": "x"}\n')


def _figure(tmp: Path) -> list[str]:
    return ["--pdf", str(tmp / "f.pdf"), "--png", str(tmp / "f.png")]


TRANSE = str(REPO / "config/hyperparameters/nations/transe.yaml")

# A hyperparameter value the receiving class refuses: (file, section, keyword, value).
BAD_HYPERPARAMETER_VALUES = {
    "negative-learning-rate": ("nations/transe", "optimizer_kwargs", "lr", -0.1),
    "zero-embedding-dim": ("nations/transe", "model_kwargs", "embedding_dim", 0),
    "negative-weight-decay": ("nations/tucker", "optimizer_kwargs", "weight_decay", -1),
    "unknown-norm": ("nations/transe", "model_kwargs", "scoring_fct_norm", "abc"),
    "dropout-of-one": ("nations/tucker", "model_kwargs", "dropout_1", 1.0),
    "zero-margin": ("kinships/rotate", "loss_kwargs", "margin", 0),
}


def _hyperparameters_with(tmp: Path, problem: str) -> str:
    import yaml

    pair, section, keyword, value = BAD_HYPERPARAMETER_VALUES[problem]
    document = yaml.safe_load((REPO / f"config/hyperparameters/{pair}.yaml").read_text(encoding="utf-8"))
    document["pipeline"].setdefault(section, {})[keyword] = value
    return _write(tmp / f"{pair.split('/')[1]}.yaml", yaml.safe_dump(document))


def _train(tmp: Path, *options: str) -> list[str]:
    """kgrank train of Nations TransE (the dataset need not exist) with ``options``."""
    return [
        *("train", "--dataset-dir", str(tmp / "nodata"), "--hyperparameters", TRANSE),
        *("--out-dir", str(tmp / "o"), "--seed", "1", *options),
    ]


# A rank table damaged in one way each, and what the error must name.
DAMAGED_RANK_TABLES = {
    "not-parquet": ("ranks.parquet", "not a readable parquet file"),
    "missing-column": ("ranks.parquet", "column(s) ['pessimistic'] missing"),
    "rank-above-candidates": (
        "ranks.parquet",
        "triple_id 1, side tail: realistic 9.0 is not in [1, num_candidates]",
    ),
    "no-candidates": ("ranks.parquet", "triple_id 0, side head: num_candidates 0 is not at least 1"),
}


def _two_rank_tables_of_one_dataset(tmp: Path) -> list[str]:
    """Two intact rank tables named nations/<model>.parquet (one dataset twice)."""
    import shutil

    source = Path(_damaged_rank_table(tmp, "none"))
    paths = []
    for model in ("transe", "complex"):
        target = tmp / "nations" / f"{model}.parquet"
        target.parent.mkdir(exist_ok=True)
        shutil.copyfile(source, target)
        paths.append(str(target))
    return paths


def _damaged_rank_table(tmp: Path, problem: str) -> str:
    import pandas as pd

    path = tmp / "ranks.parquet"
    if problem == "not-parquet":
        return _write(path, "triple_id\tside\n0\thead\n")
    table = pd.DataFrame(
        {
            "triple_id": [0, 0, 1, 1],
            **{"head": [0, 0, 1, 1], "relation": [0, 0, 0, 0], "tail": [1, 1, 2, 2]},
            "side": ["head", "tail", "head", "tail"],
            **{
                column: [1.0, 2.0, 3.0, 4.0]
                for column in ("optimistic", "realistic", "pessimistic", "random")
            },
            "num_candidates": [5, 5, 5, 5],
        }
    )
    if problem == "missing-column":
        table = table.drop(columns="pessimistic")
    elif problem == "rank-above-candidates":
        table.loc[3, "realistic"] = 9.0
    elif problem == "no-candidates":
        table.loc[0, "num_candidates"] = 0
    table.to_parquet(path)
    return str(path)


def _prepare_folder(
    tmp: Path,
    *options: str,
    names: tuple[str, ...] = ("train.tsv", "valid.tsv", "test.tsv"),
    content: str = "head\trelation\ttail\na\tr\tb\n",
) -> list[str]:
    """prepare-dataset of a folder dataset (split files ``names``, each holding ``content``)
    with ``options``."""
    folder = tmp / "kg"
    folder.mkdir()
    for name in names:
        (folder / name).write_text(content, encoding="utf-8")
    return [
        "prepare-dataset",
        "--name",
        "mykg",
        "--folder",
        str(folder),
        *options,
        "--out-dir",
        str(tmp / "o"),
    ]


def _prepare_archive(
    tmp: Path, members: list[tuple[str, bytes]], sizes: dict[str, int] | None = None
) -> list[str]:
    """prepare-dataset of an archive of ``members`` (name, content; a name may repeat), each
    declaring its length or its size in ``sizes``; a declared size beyond the content cuts the
    archive off after that header, as a gzip bomb's would be read."""
    import gzip
    import tarfile

    blocks = b""
    for name, content in members:
        info = tarfile.TarInfo(name)
        info.size = (sizes or {}).get(name, len(content))
        blocks += info.tobuf(format=tarfile.GNU_FORMAT)
        if info.size > len(content):
            break
        blocks += content + b"\0" * (-len(content) % tarfile.BLOCKSIZE)
    archive = tmp / "g.tar.gz"
    archive.write_bytes(gzip.compress(blocks + b"\0" * 2 * tarfile.BLOCKSIZE))
    return ["prepare-dataset", "--name", "g", "--archive", str(archive), "--out-dir", str(tmp / "o")]


TRIPLES = b"a\tr\tb\n"


def _published(tmp: Path, **fields: object) -> str:
    """A published configuration in the archived layout (Nations TransE) with ``fields`` replaced."""
    import json

    import yaml

    document = yaml.safe_load(Path(TRANSE).read_text(encoding="utf-8")) | fields
    return _write(tmp / "published.json", json.dumps(document))


def case_params(cases: list[Case]) -> list:
    """The cases as pytest parameters, each named <command>-<id>, a known failure marked."""
    return [
        pytest.param(
            case,
            id=f"{case.command}-{case.id}",
            marks=[pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else [],
        )
        for case in cases
    ]


def check_bad_input(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str], request) -> None:
    """The case's command exits with code 2 and one error line naming every one of its
    names, and writes nothing where it was told to write."""
    nations = request.getfixturevalue("nations_dir") if case.needs_nations else tmp_path / "unused"
    argv = case.argv(tmp_path, nations)
    assert argv[0] == case.command
    code, out, err = _run(argv, capsys)
    assert code == 2, (out, err)
    line = _error_line(case.command, err)
    for name in case.names:
        assert name in line, line
    # nothing was written where the command was told to write
    for option in ("--out", "--out-dir", "--audit", "--check", "--markdown", "--pdf"):
        if option in argv:
            target = Path(argv[argv.index(option) + 1])
            if target != tmp_path:
                assert not target.exists(), f"{target} written despite the error"
