"""Files in and out: atomic writes (a killed job leaves the old file or the new one, never
half of it) and the readers of the tables that several steps share."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


# The suffix of a file being written. `results/**/*.kgrank-partial` is debris of a killed
# step, never an output.
PARTIAL_SUFFIX = ".kgrank-partial"

# The files moved into place by the command running now (see command_outputs), or None.
_written: list[Path] | None = None


@contextmanager
def command_outputs() -> Iterator[list[Path]]:
    """Record every file :func:`atomic_path` moves into place inside the block; if the block
    fails, remove them all: a command that stops on bad input (a table it reads after
    writing another output, a report that cannot be built) leaves none of its outputs
    behind, only what it never wrote. Yields the list of files written."""
    global _written
    outer, _written = _written, []
    written = _written
    try:
        yield written
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    finally:
        if outer is not None:
            outer.extend(written)
        _written = outer


def partial_path(path: str | os.PathLike[str]) -> Path:
    """Where ``path`` is written before it is moved into place: a hidden file beside it."""
    target = Path(path)
    return target.with_name(f".{target.name}{PARTIAL_SUFFIX}")


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; move it onto ``path`` only on success.

    The temporary file lives in the same folder so that ``os.replace`` is atomic, and
    it is removed whatever happens. Its name is fixed by the target's (no random part):
    a step killed with SIGKILL cannot clean up, but the rerun that remakes the target
    overwrites the same temporary file and moves it into place, so no debris survives
    the recovery. Two writers of one target at once are what Snakemake's lock forbids.
    """
    from kgrank.errors import KgrankInputError

    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise KgrankInputError(
            f"{target}: cannot write it, a part of {target.parent} is a file, not a folder; "
            "write it elsewhere"
        ) from None
    if target.is_dir():
        raise KgrankInputError(f"{target}: a folder is there; give the path of a file to write")
    temporary = partial_path(target)
    temporary.unlink(missing_ok=True)
    try:
        yield temporary
        os.replace(temporary, target)
        if _written is not None:
            _written.append(target)
    finally:
        temporary.unlink(missing_ok=True)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def write_json(path: str | os.PathLike[str], data: Any) -> None:
    write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def write_table(path: str | os.PathLike[str], frame: Any) -> None:
    """Write a pandas DataFrame as TSV or parquet, chosen by the file's suffix."""
    target = Path(path)
    if target.suffix not in (".parquet", ".tsv"):
        from kgrank.errors import KgrankInputError

        given = target.suffix or "no suffix"
        raise KgrankInputError(f"{target}: a table is written as .tsv or .parquet, not {given}; name it so")
    with atomic_path(target) as temporary:
        if target.suffix == ".parquet":
            frame.to_parquet(temporary, index=False)
        else:
            frame.to_csv(temporary, sep="\t", index=False, float_format="%.10g")


def write_report_table(
    frame: pd.DataFrame,
    markdown_path: str | os.PathLike[str],
    latex_path: str | os.PathLike[str] | None = None,
    *,
    caption: str = "",
    label: str = "",
    floatfmt: str = "g",
    markdown_caption: bool = False,
) -> None:
    """A table for the report: Markdown (the caption under it with ``markdown_caption``),
    and LaTeX (with caption and label) when asked."""
    markdown = frame.to_markdown(index=False, floatfmt=floatfmt) + "\n"
    write_text(markdown_path, markdown + (f"\n{caption}\n" if markdown_caption and caption else ""))
    if latex_path is not None:
        write_text(
            latex_path,
            frame.to_latex(
                index=False, caption=caption, label=label, float_format=lambda value: format(value, floatfmt)
            ),
        )


# Nodes one YAML file of the user's may stand for once its aliases (*name) are expanded. A
# 1 KB file of nested aliases (the "billion laughs") stands for billions, and whatever walks
# it, the schema check first, took 9 GB and two minutes; kgrank's largest config has about
# 2,000.
MAX_YAML_NODES = 200_000


def _expanded_size(node: Any, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """How many nodes ``node`` stands for with every alias expanded (memoised by node, so
    the count costs one pass however large the expansion)."""
    import yaml

    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_nodes:
        raise ValueError("an alias refers to a node that contains it")
    open_nodes.add(key)
    if isinstance(node, yaml.MappingNode):
        children = [child for pair in node.value for child in pair]
    elif isinstance(node, yaml.SequenceNode):
        children = list(node.value)
    else:
        children = []
    size = 1
    for child in children:
        size += _expanded_size(child, sizes, open_nodes)
        if size > MAX_YAML_NODES:
            break
    open_nodes.discard(key)
    sizes[key] = size
    return size


def first_non_finite(data: Any, prefix: str = "") -> tuple[str, float] | None:
    """The dotted key and value of the first NaN or infinite number in nested mappings and
    lists, None if there is none. JSON Schema's bounds let both through (NaN compares
    false with every bound, so it fails none of them; .inf passes every lower bound), and
    no setting of kgrank takes either."""
    import math

    if isinstance(data, float) and not math.isfinite(data):
        return prefix or "(top level)", data
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        found = first_non_finite(value, f"{prefix}.{key}" if prefix else str(key))
        if found is not None:
            return found
    return None


def load_user_yaml(text: str, path: str | os.PathLike[str]) -> Any:
    """A YAML file of the user's (config, hyperparameters), read as ``yaml.safe_load`` reads
    it, but refused in one line where its aliases expand to more than
    :data:`MAX_YAML_NODES` nodes or refer to themselves. YAML errors propagate (callers name
    the line with :func:`kgrank.errors.yaml_refusal`). A NaN or infinite number (.nan,
    .inf) is refused with its key: no setting takes one."""
    import yaml

    from kgrank.errors import KgrankInputError

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            size = _expanded_size(node, {}, set())
        except (ValueError, RecursionError):
            raise KgrankInputError(
                f"{path}: an alias (*name) refers to the node that holds it, or the nesting is too deep; "
                "write the values out"
            ) from None
        if size > MAX_YAML_NODES:
            raise KgrankInputError(
                f"{path}: its aliases (*name) expand to more than {MAX_YAML_NODES:,} values; write the "
                "values out, or use fewer aliases"
            )
        data = loader.construct_document(node)
    finally:
        loader.dispose()
    found = first_non_finite(data)
    if found is not None:
        raise KgrankInputError(f"{path}: key {found[0]}: {found[1]} is not a finite number; give one")
    return data


def parse_schema(text: str) -> Any:
    """A YAML schema kgrank ships, parsed by libyaml where PyYAML has it: kgrank's config
    check reads the eight schemas at every Snakemake start, 0.13 s in PyYAML's pure-Python
    loader against 0.015 s in its C loader. The user's own files go through
    yaml.safe_load, whose errors also quote the offending line."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def read_json(path: str | os.PathLike[str]) -> Any:
    """A JSON file a step wrote; a damaged one stops with its name and line."""
    from kgrank.errors import KgrankInputError

    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        where = f":{error.lineno}" if isinstance(error, json.JSONDecodeError) else ""
        raise KgrankInputError(
            f"{path}{where}: not valid JSON ({error}); rerun the step that writes it"
        ) from None


def read_tables(paths: Sequence[str | os.PathLike[str]], columns: Sequence[str] = ()) -> pd.DataFrame:
    """Several tidy TSV tables of one layout (one per dataset, pair, ...) as one frame;
    each must have ``columns``."""
    import pandas as pd

    from kgrank.errors import KgrankInputError

    frames = []
    for path in paths:
        try:
            frame = pd.read_csv(path, sep="\t")
        except pd.errors.EmptyDataError:
            raise KgrankInputError(
                f"{path}: empty file (not even a header line); pass the file its step wrote"
            ) from None
        except pd.errors.ParserError as error:
            reason = str(error).strip().splitlines()[-1]
            raise KgrankInputError(f"{path}: not a tab-separated table ({reason})") from None
        missing = [column for column in columns if column not in frame.columns]
        if missing:
            raise KgrankInputError(
                f"{path}: column(s) {missing} missing; expected a table with {list(columns)} "
                "(pass the file its step wrote)"
            )
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def read_stats(paths: Sequence[str | os.PathLike[str]]) -> pd.DataFrame:
    """Datasets' stats.json files as one table (dataset, entities, relations, train,
    valid, test), ordered by number of entities."""
    import pandas as pd

    from kgrank.errors import KgrankInputError

    records = [read_json(path) for path in paths]
    for path, record in zip(paths, records, strict=True):
        missing = [key for key in ("dataset", "entities", "relations", "triples") if key not in record]
        if missing:
            raise KgrankInputError(
                f"{path}: key(s) {missing} missing; it is not a stats.json of `kgrank prepare-dataset` "
                "(rerun that step)"
            )
    columns = {key: [record[key] for record in records] for key in ("dataset", "entities", "relations")}
    splits = {split: [record["triples"][split] for record in records] for split in ("train", "valid", "test")}
    frame = pd.DataFrame({**columns, **splits})
    return frame.sort_values("entities", kind="stable").reset_index(drop=True)


def text_lines(lines: Iterable[bytes], source: str) -> Iterator[tuple[int, str]]:
    """Numbered lines (from 1) of a text file read as bytes, without their line ends; a line
    that is not UTF-8 stops with ``source``, its line and column. The study-data readers
    and the triple parser share it so that every message counts lines the way an editor does."""
    import sys

    from kgrank.errors import KgrankInputError

    for line_number, raw in enumerate(lines, start=1):
        if line_number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            # a byte-order mark (Windows editors write one) would become part of the first
            # label, or hide a header from its check
            print(f"{source}: a UTF-8 byte-order mark starts the file; read without it", file=sys.stderr)
            raw = raw[3:]
        try:
            yield line_number, raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            raise KgrankInputError(
                f"{source}:{line_number}: byte {raw[error.start]:#04x} at column {error.start + 1} is not "
                "UTF-8; save the file as UTF-8"
            ) from None


class FileCache:
    """Values computed from files, kept within one process while every file keeps its
    path, inode, size, modification and status-change times (a changed file is read
    anew, also one copied over it with its old modification time); at most ``size``
    values, the oldest dropped first. A file that cannot be stat'ed is not cached, so the
    computation itself reports it."""

    def __init__(self, size: int = 4):
        self.size = size
        self.values: dict[tuple, Any] = {}

    def get(self, paths: Iterable[str | os.PathLike[str]], extra: tuple, compute: Any) -> Any:
        try:
            key = tuple(
                (str(Path(path).resolve()), stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
                for path in paths
                for stat in [Path(path).stat()]
            ) + (extra,)
        except OSError:
            return compute()
        if key not in self.values:
            value = compute()
            while len(self.values) >= self.size:
                self.values.pop(next(iter(self.values)))
            self.values[key] = value
        return self.values[key]
