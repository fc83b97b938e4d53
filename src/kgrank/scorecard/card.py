"""The reproduction scorecard: every checkable quantitative claim of the five papers, one row
each, with the published value, kgrank's value, the tolerance and a verdict.

The published values are data (``claims/<paper>.tsv``, one row per claim, transcribed from
the papers with their location); each row also names how kgrank's value is obtained, so that
adding a claim is adding a row: the ``source`` table a study writes under ``results/`` (``-``
for none), the rows it ``select``-s (:func:`parse_selector`), the ``value`` expression over
them (:func:`evaluate_expression`), the ``relation`` to the ``published_value`` within the
``tolerance``, and the ``kind`` of claim, which says what a failed check means
(:data:`FAILED`). docs/scorecard.md describes every column.

The core reads every study's outputs here, and imports none of them.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from kgrank.errors import KgrankInputError

# The five documents, by the key the claims files use, in reading order.
PAPERS = {
    "hoyt2022": "Hoyt, Berrendorf et al. 2022 (unified framework)",
    "hoyt2022-blog": "Hoyt 2022 (blog: Pythagorean means)",
    "berrendorf2020": "Berrendorf et al. 2020 (ambiguity)",
    "zhou2022": "Zhou et al. 2022 (IR perspective)",
    "yang2022": "Yang, Lin, Zhang 2022 (open world)",
}
NO_STUDY = "none"
NO_SOURCE = "-"
CLAIM_COLUMNS = [
    "id",
    "paper",
    "location",
    "claim",
    "published",
    "study",
    "source",
    "select",
    "value",
    "relation",
    "published_value",
    "tolerance",
    "tolerance_reason",
    "kind",
    "cause",
]
KINDS = ("reproduce", "reproduce-gpu", "consistency", "not-checkable")
RELATIONS = {
    "~": None,
    "<": operator.lt,
    ">": operator.gt,
    "<=": operator.le,
    ">=": operator.ge,
}
# A source column the selector leaves open is set to this value where the source has it:
# the IR study's tables gain a `protocol` column (the paper's filter vs kgrank's all-known).
DEFAULT_SELECTION = {"protocol": "paper"}

REPRODUCED = "reproduced"
DEVIATES = "deviates"
NEEDS_MODELS = "needs the published models (GPU)"
NOT_CHECKABLE = "not checkable"
CONTRADICTED = "contradicted by the paper's own numbers"
VERDICTS = (REPRODUCED, DEVIATES, NEEDS_MODELS, NOT_CHECKABLE, CONTRADICTED)
FAILED = {"reproduce": DEVIATES, "reproduce-gpu": NEEDS_MODELS, "consistency": CONTRADICTED}

SCORECARD_COLUMNS = [
    "id",
    "paper",
    "location",
    "claim",
    "published",
    "kgrank",
    "relation",
    "tolerance",
    "tolerance_reason",
    "verdict",
    "reason",
    "source",
]


class ClaimError(Exception):
    """A claim that cannot be evaluated on the tables at hand (its reason is the verdict's)."""


class BrokenClaim(ClaimError):
    """A claim that no table could satisfy: a selector or expression that does not parse, an
    unknown function, a column the table lacks, a selector that matches several rows. It
    stops the scorecard instead of hiding among the not-checkable claims."""


# --- the claims files ----------------------------------------------------------------------


def claims_dir() -> Path:
    return Path(str(resources.files("kgrank.scorecard") / "claims"))


def read_claims(
    paths: Iterable[str | Path] | None = None, studies: Iterable[str] | None = None
) -> pd.DataFrame:
    """Every claims file (by default the package's ``claims/*.tsv``) as one checked table;
    ``studies``: the names a claim's study may take (the registry's; None: any)."""
    paths = sorted(claims_dir().glob("*.tsv")) if paths is None else [Path(path) for path in paths]
    if not paths:
        raise KgrankInputError(f"{claims_dir()}: no claims files")
    frames = []
    for path in paths:
        frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, comment=None, quoting=3)
        frame.attrs["path"] = str(path)
        check_claims(frame, path, studies)
        frames.append(frame)
    claims = pd.concat(frames, ignore_index=True)
    # in the order of PAPERS, each file's rows in their order
    order = {paper: position for position, paper in enumerate(PAPERS)}
    claims = claims.sort_values("paper", key=lambda column: column.map(order), kind="stable")
    claims = claims.reset_index(drop=True)
    duplicated = claims["id"][claims["id"].duplicated()].tolist()
    if duplicated:
        raise KgrankInputError(f"claim id(s) {duplicated} appear more than once")
    return claims


def check_claims(
    frame: pd.DataFrame, path: str | Path = "claims", studies: Iterable[str] | None = None
) -> None:
    """Every row complete and of known vocabulary (``studies``: the study names allowed,
    None: any); stops naming the file, row and column."""
    known = None if studies is None else {*studies, NO_STUDY}
    if list(frame.columns) != CLAIM_COLUMNS:
        raise KgrankInputError(f"{path}: columns {list(frame.columns)}; expected {CLAIM_COLUMNS}")
    for index, row in frame.iterrows():
        where = f"{path}: row {index + 2} ({row['id'] or 'no id'})"
        required = ["id", "paper", "location", "claim", "published", "study", "kind"]
        if row["kind"] == "not-checkable":
            required.append("cause")
        else:
            required += ["source", "value", "relation", "published_value", "tolerance_reason"]
        empty = [column for column in required if not row[column].strip()]
        if empty:
            raise KgrankInputError(f"{where}: empty {empty}")
        if row["paper"] not in PAPERS:
            raise KgrankInputError(f"{where}: paper {row['paper']!r} not one of {list(PAPERS)}")
        if row["kind"] not in KINDS:
            raise KgrankInputError(f"{where}: kind {row['kind']!r} not one of {list(KINDS)}")
        if known is not None and row["study"] not in known:
            raise KgrankInputError(f"{where}: study {row['study']!r} not one of {sorted(known)}")
        if row["kind"] == "not-checkable":
            continue
        if row["relation"] not in RELATIONS:
            raise KgrankInputError(f"{where}: relation {row['relation']!r} not one of {list(RELATIONS)}")
        if row["relation"] == "~" and not row["tolerance"].strip():
            raise KgrankInputError(f"{where}: relation ~ needs a tolerance")
        if (row["source"] == NO_SOURCE) != (row["study"] == NO_STUDY):
            # a claim without a table is arithmetic or a closed form of the core (study
            # none); a claim with one names the study that writes it
            raise KgrankInputError(f"{where}: source {row['source']!r} and study {row['study']!r} disagree")
        try:
            evaluate_expression(row["published_value"], None)
            parse_tolerance(row["tolerance"], 1.0)
            ast.parse(row["value"], mode="eval")
            parse_selector(row["select"])
        except (ClaimError, SyntaxError, ValueError) as error:
            raise KgrankInputError(f"{where}: {error}") from None


# --- selecting rows ------------------------------------------------------------------------


SELECTOR_OPERATORS = ("!=", "<=", ">=", "=", "<", ">")


def parse_selector(text: str) -> list[tuple[str, str, list[str]]]:
    """``a=x, b!=y|z, c<0.5`` as [(column, operator, values)]: ``=`` one of the values
    (``|`` separates them), ``!=`` none of them, ``<``, ``>``, ``<=``, ``>=`` a number; a
    comma inside a value is written ``\\,``."""
    clauses = []
    parts = (part.strip().replace("\\,", ",") for part in re.split(r"(?<!\\),", text))
    for clause in filter(None, parts):
        match = re.fullmatch(r"([^=!<>]+?)\s*(!=|<=|>=|=|<|>)\s*(.*)", clause)
        if match is None:
            raise BrokenClaim(
                f"selector clause {clause!r} is not column<op>value, op one of {SELECTOR_OPERATORS}"
            )
        column, sign, values = match.groups()
        if sign not in ("=", "!="):
            try:
                float(values)
            except ValueError:
                raise BrokenClaim(f"selector clause {clause!r}: {sign} needs a number") from None
        clauses.append((column.strip(), sign, [value.strip() for value in values.split("|")]))
    return clauses


def _matches(series: pd.Series, values: Sequence[str]) -> pd.Series:
    if pd.api.types.is_bool_dtype(series):
        wanted = {value.lower() in ("true", "1", "yes") for value in values}
        return series.isin(wanted)
    if pd.api.types.is_numeric_dtype(series):
        try:
            numbers = [float(value) for value in values]
        except ValueError:
            return series.astype(str).isin(values)
        return pd.Series(
            np.isclose(series.to_numpy(dtype=float)[:, None], numbers).any(axis=1), index=series.index
        )
    return series.astype(str).isin(values)


def select_rows(
    frame: pd.DataFrame, selector: str, defaults: Mapping[str, str] = DEFAULT_SELECTION
) -> pd.DataFrame:
    """The rows of ``frame`` that ``selector`` names, with :data:`DEFAULT_SELECTION` where
    the frame has its column and the selector does not name it."""
    clauses = parse_selector(selector)
    named = {column for column, _, _ in clauses}
    clauses += [
        (column, "=", [value])
        for column, value in defaults.items()
        if column in frame and column not in named
    ]
    mask = pd.Series(True, index=frame.index)
    for column, sign, values in clauses:
        if column not in frame.columns:
            raise BrokenClaim(f"no column {column!r} (the table has {list(frame.columns)})")
        if sign in ("=", "!="):
            hit = _matches(frame[column], values)
            mask &= ~hit if sign == "!=" else hit
        else:
            numbers = pd.to_numeric(frame[column], errors="coerce")
            mask &= RELATIONS[sign](numbers, float(values[0])).fillna(False).astype(bool)
    return frame[mask]


# --- reading the sources -------------------------------------------------------------------


def _read_one(path: Path) -> pd.DataFrame:
    if path.suffix == ".json":
        import json

        return pd.json_normalize(json.loads(path.read_text(encoding="utf-8")))
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path, sep="\t")


def source_pattern(source: str, params: Mapping[str, str]) -> str:
    """``source`` with the command's parameters filled in (the other placeholders stay)."""
    return re.sub(r"\{(\w+)\}", lambda match: params.get(match.group(1), match.group(0)), source)


def source_paths(
    source: str, params: Mapping[str, str], results: str | Path
) -> list[tuple[Path, dict[str, str]]]:
    """The files a source names under ``results``, each with its placeholders' values."""
    pattern = source_pattern(source, params)
    names = re.findall(r"\{(\w+)\}", pattern)
    if not names:
        path = Path(results) / pattern
        return [(path, {})] if path.is_file() else []
    glob = re.sub(r"\{\w+\}", "*", pattern)
    regex = re.compile(re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(pattern)))
    found = []
    for path in sorted(Path(results).glob(glob)):
        match = regex.fullmatch(path.relative_to(results).as_posix())
        if match:
            found.append((path, match.groupdict()))
    return found


def load_source(source: str, params: Mapping[str, str], results: str | Path) -> pd.DataFrame:
    """The table(s) a claim reads, concatenated; a globbed placeholder becomes a column
    where the table lacks it. A missing file is a :class:`ClaimError`."""
    paths = source_paths(source, params, results)
    if not paths:
        raise ClaimError(f"{Path(results) / source_pattern(source, params)} missing")
    frames = []
    for path, values in paths:
        frame = _read_one(path)
        for name, value in values.items():
            if name not in frame.columns:
                frame[name] = value
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


# --- kgrank's value: a small, safe expression language -------------------------------------


def constant_scorer_realistic_rank(num_candidates: int) -> float:
    """The realistic rank (mean of optimistic and pessimistic, kgrank.engine.ranks) of a true
    answer among ``num_candidates`` candidates (itself included) that all score the same."""
    import torch

    from kgrank.engine.ranks import ranks_from_scores

    ranks = ranks_from_scores(torch.zeros((1, int(num_candidates))), torch.tensor([0]))
    return float((ranks["optimistic"][0] + ranks["pessimistic"][0]) / 2)


def _harmonic(n: float, order: float = 1) -> float:
    from kgrank.evaluation.moments import harmonic_number

    return float(harmonic_number(np.asarray(n, dtype=float), order))


# Functions of numbers only (no table).
PURE_FUNCTIONS: dict[str, Callable[..., float]] = {
    "abs": abs,
    "log": math.log,
    "log10": math.log10,
    "sqrt": math.sqrt,
    "floor": math.floor,
    "round": round,
    # of printed numbers (a consistency claim over a table's cells); `max` is the column's
    "largest": lambda *numbers: float(max(numbers)),
    "harmonic": _harmonic,
    "constant_scorer_realistic_rank": constant_scorer_realistic_rank,
}


def _column(rows: pd.DataFrame, column: str) -> pd.Series:
    if column not in rows.columns:
        raise BrokenClaim(f"no column {column!r} (the table has {list(rows.columns)})")
    values = rows[column]
    if pd.api.types.is_bool_dtype(values) or values.dtype == object:
        mapped = values.map(lambda cell: {"True": 1.0, "False": 0.0, True: 1.0, False: 0.0}.get(cell, cell))
        values = pd.to_numeric(mapped, errors="coerce")
    return values.astype(float)


def _table_functions(rows: pd.DataFrame | None) -> dict[str, Callable[..., float]]:
    def subset(where: str, allow_empty: bool = False) -> pd.DataFrame:
        if rows is None:
            raise BrokenClaim("a table function in a claim without a source")
        chosen = select_rows(rows, where, defaults={})
        if chosen.empty and not allow_empty:
            raise ClaimError(f"no row matches the selector{f' and {where!r}' if where else ''}")
        return chosen

    def value(column: str, where: str = "") -> float:
        chosen = subset(where)
        if len(chosen) != 1:
            raise BrokenClaim(f"{len(chosen)} rows match {where or 'the selector'!r}; value() needs one")
        return float(_column(chosen, column).iloc[0])

    def aggregate(name: str) -> Callable[..., float]:
        def function(column: str, where: str = "") -> float:
            values = _column(subset(where), column).dropna()
            if values.empty:
                raise ClaimError(f"column {column!r} has no number where {where or 'the selector'!r}")
            return float(getattr(values, name)())

        return function

    def count(where: str = "") -> float:
        return float(len(subset(where, allow_empty=True)))

    def spearman(first: str, second: str, where: str = "") -> float:
        import warnings

        from scipy.stats import spearmanr

        chosen = subset(where)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a constant input gives NaN, judged not checkable
            return float(spearmanr(_column(chosen, first), _column(chosen, second)).statistic)

    functions = {name: aggregate(name) for name in ("mean", "min", "max", "sum", "median")}
    functions.update(value=value, count=count, spearman=spearman)
    functions["absmax"] = lambda column, where="": float(_column(subset(where), column).abs().max())
    return functions


_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_COMPARE = {
    ast.Lt: operator.lt,
    ast.Gt: operator.gt,
    ast.LtE: operator.le,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
}


def evaluate_expression(text: str, rows: pd.DataFrame | None) -> float:
    """A claim's expression: numbers, + - * / **, comparisons and ``and``/``or`` (1.0 for
    true, 0.0 for false), :data:`PURE_FUNCTIONS`, and, with ``rows``, the table functions
    ``value``, ``mean``, ``min``, ``max``, ``sum``, ``median``, ``absmax``, ``count`` and
    ``spearman`` (each with an optional second selector). Nothing else is evaluated."""
    functions = {**PURE_FUNCTIONS, **_table_functions(rows)}

    def walk(node: ast.AST):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd | ast.Not):
            operand = walk(node.operand)
            return (
                -operand
                if isinstance(node.op, ast.USub)
                else (float(not operand) if isinstance(node.op, ast.Not) else operand)
            )
        if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
            left, result = walk(node.left), True
            for op, comparator in zip(node.ops, node.comparators, strict=True):
                right = walk(comparator)
                result = result and _COMPARE[type(op)](left, right)
                left = right
            return float(result)
        if isinstance(node, ast.BoolOp):
            values = [bool(walk(value)) for value in node.values]
            return float(all(values) if isinstance(node.op, ast.And) else any(values))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            if node.func.id not in functions:
                raise BrokenClaim(f"unknown function {node.func.id!r} in {text!r}")
            return functions[node.func.id](*(walk(argument) for argument in node.args))
        raise BrokenClaim(f"{text!r}: {ast.dump(node)[:60]} is not allowed in a claim's expression")

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        raise BrokenClaim(f"{text!r} is not an expression ({error.msg})") from None
    try:
        result = walk(tree)
    except ZeroDivisionError:
        raise ClaimError(f"{text!r} divides by zero") from None
    if isinstance(result, str):
        raise BrokenClaim(f"{text!r} is a string, not a number")
    return float(result)


def parse_tolerance(text: str, published: float) -> float:
    """An absolute tolerance, or ``N%`` of the published value; empty is 0."""
    text = text.strip()
    if not text:
        return 0.0
    if text.endswith("%"):
        return abs(published) * float(text[:-1]) / 100
    return float(text)


# --- judging -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    value: float | None
    verdict: str
    reason: str


def holds(value: float, relation: str, published: float, tolerance: float) -> bool:
    if math.isnan(value):
        return False
    if relation == "~":
        return abs(value - published) <= tolerance * (1 + 1e-12) + 1e-15
    return bool(RELATIONS[relation](value, published))


def judge(
    claim: Mapping[str, str],
    results: str | Path,
    enabled: Iterable[str] | None = None,
    params: Mapping[str, str] | None = None,
) -> Outcome:
    """One claim's value and verdict on the tables under ``results``, where only the
    ``enabled`` studies ran (None: every study)."""
    params = params or {}
    if claim["kind"] == "not-checkable":
        return Outcome(None, NOT_CHECKABLE, claim["cause"])
    if claim["study"] != NO_STUDY and enabled is not None and claim["study"] not in set(enabled):
        return Outcome(None, NOT_CHECKABLE, f"study `{claim['study']}` not run")
    try:
        rows = None
        if claim["source"] != NO_SOURCE:
            # the selector's {name} placeholders take the command's parameters too
            selector = source_pattern(claim["select"], params)
            rows = select_rows(load_source(claim["source"], params, results), selector)
        value = evaluate_expression(claim["value"], rows)
        published = evaluate_expression(claim["published_value"], None)
        tolerance = parse_tolerance(claim["tolerance"], published)
    except BrokenClaim as error:
        raise KgrankInputError(
            f"claim {claim['id']} ({claim['source']}): {error}; fix the claim in "
            f"{claims_dir()}/{claim['paper'].replace('-', '_')}.tsv, or rerun the study that writes its table"
        ) from None
    except ClaimError as error:
        return Outcome(None, NOT_CHECKABLE, str(error))
    if math.isnan(value):
        return Outcome(
            None,
            NOT_CHECKABLE,
            "kgrank's value is undefined here (NaN: e.g. a correlation of constant values)",
        )
    if holds(value, claim["relation"], published, tolerance):
        return Outcome(value, REPRODUCED, "")
    return Outcome(value, FAILED[claim["kind"]], claim["cause"])


def scorecard(
    claims: pd.DataFrame,
    results: str | Path,
    enabled: Iterable[str] | None = None,
    params: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Every claim judged: :data:`SCORECARD_COLUMNS`, one row per claim."""
    enabled = None if enabled is None else list(enabled)
    records = []
    for claim in claims.to_dict("records"):
        outcome = judge(claim, results, enabled, params)
        records.append(
            {
                **{column: claim[column] for column in ("id", "paper", "location", "claim", "published")},
                "kgrank": outcome.value,
                "relation": ""
                if claim["kind"] == "not-checkable"
                else f"{claim['relation']} {claim['published_value']}",
                "tolerance": claim["tolerance"],
                "tolerance_reason": claim["tolerance_reason"],
                "verdict": outcome.verdict,
                "reason": outcome.reason,
                "source": claim["source"] if claim["kind"] != "not-checkable" else "",
            }
        )
    return pd.DataFrame(records, columns=SCORECARD_COLUMNS)


def summary(card: pd.DataFrame) -> pd.DataFrame:
    """Counts per paper (rows, in :data:`PAPERS` order) and verdict (columns), with totals."""
    counts = pd.crosstab(card["paper"], card["verdict"]).reindex(
        index=[paper for paper in PAPERS if paper in set(card["paper"])], columns=list(VERDICTS), fill_value=0
    )
    counts["claims"] = counts.sum(axis=1)
    counts.loc["all"] = counts.sum()
    return counts.astype(int)


def summary_line(card: pd.DataFrame) -> str:
    """One sentence: how many claims, and how many of each verdict."""
    totals = card["verdict"].value_counts()
    parts = [f"{int(totals[verdict])} {verdict}" for verdict in VERDICTS if verdict in totals]
    return f"{len(card)} claims of {card['paper'].nunique()} documents: " + ", ".join(parts) + "."


def _display(card: pd.DataFrame) -> pd.DataFrame:
    shown = card.copy()
    shown["kgrank"] = [
        ("" if value is None or pd.isna(value) else f"{value:.6g}") for value in shown["kgrank"]
    ]
    shown["verdict"] = [
        f"{verdict}: {reason}" if reason else verdict
        for verdict, reason in zip(card["verdict"], card["reason"], strict=True)
    ]
    shown["tolerance"] = [
        f"{tolerance} ({why})" if why and tolerance else (why or tolerance)
        for tolerance, why in zip(card["tolerance"], card["tolerance_reason"], strict=True)
    ]
    return shown[["paper", "location", "claim", "published", "kgrank", "relation", "tolerance", "verdict"]]


SCORECARD_CAPTION = (
    "Every checkable quantitative claim of the five papers, one row each: the published value as printed, "
    "kgrank's value from this run's tables (or from the core's closed forms), the relation it must satisfy "
    "(~ within the tolerance; <, > a threshold for a qualitative claim), and the verdict with its cause. "
    "Published values: src/kgrank/scorecard/claims/*.tsv; docs/scorecard.md."
)


def write_scorecard(card: pd.DataFrame, tsv: str | Path, markdown: str | Path, latex: str | Path) -> None:
    """The TSV (every column), and the report table in Markdown (the counts first) and LaTeX."""
    from kgrank.data.io import write_table, write_text

    write_table(tsv, card.assign(kgrank=card["kgrank"].astype(float)))
    counts = summary(card)
    display = _display(card)
    header = (
        f"{summary_line(card)}\n\n"
        + counts.reset_index().rename(columns={"paper": "document"}).to_markdown(index=False)
        + "\n\n"
    )
    # a literal | (|S|, |E|) would split a Markdown cell
    escaped = display.map(lambda cell: cell.replace("|", "\\|") if isinstance(cell, str) else cell)
    write_text(markdown, header + escaped.to_markdown(index=False) + f"\n\n{SCORECARD_CAPTION}\n")
    write_text(
        latex,
        display.to_latex(index=False, longtable=True, caption=SCORECARD_CAPTION, label="tab:scorecard"),
    )


def run_scorecard(
    results: str | Path,
    tsv: str | Path,
    markdown: str | Path,
    latex: str | Path,
    enabled: Iterable[str] | None = None,
    params: Mapping[str, str] | None = None,
    claims_files: Iterable[str | Path] | None = None,
    studies: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Read the claims (each naming one of ``studies``, the registry's, or none), judge them
    on ``results``, write the three files; the counts."""
    card = scorecard(read_claims(claims_files, studies), results, enabled, params)
    write_scorecard(card, tsv, markdown, latex)
    return card


def study_sources(
    claims: pd.DataFrame,
    enabled: Iterable[str],
    params: Mapping[str, str],
    expand: Callable[[str], list[str]] | None = None,
) -> list[str]:
    """The sources (relative to ``results/``) the enabled studies' claims read, each once,
    placeholders filled by ``params`` and then by ``expand`` (the workflow's datasets and
    models); for the rule's inputs."""
    enabled = set(enabled)
    seen: dict[str, None] = {}
    for claim in claims.to_dict("records"):
        if claim["kind"] == "not-checkable" or claim["source"] == NO_SOURCE or claim["study"] not in enabled:
            continue
        pattern = source_pattern(claim["source"], params)
        for path in expand(pattern) if expand and "{" in pattern else [pattern]:
            seen.setdefault(path, None)
    return list(seen)
