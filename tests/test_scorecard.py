"""The reproduction scorecard (kgrank.scorecard): the claims files, the selector and
expression machinery on small synthetic tables, the self-contradiction rows, and the
`kgrank scorecard` command end to end."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from kgrank.cli.main import main
from kgrank.errors import KgrankInputError
from kgrank.scorecard.card import (
    CLAIM_COLUMNS,
    CONTRADICTED,
    DEVIATES,
    NEEDS_MODELS,
    NOT_CHECKABLE,
    PAPERS,
    REPRODUCED,
    ClaimError,
    check_claims,
    claims_dir,
    constant_scorer_realistic_rank,
    evaluate_expression,
    judge,
    read_claims,
    scorecard,
    select_rows,
    study_sources,
    summary,
)


def claim(**fields: str) -> dict[str, str]:
    """A complete claim row; ``fields`` override the defaults."""
    row = {
        "id": "test-claim",
        "paper": "hoyt2022",
        "location": "Table 9",
        "claim": "a number",
        "published": "0.5",
        "study": "paper",
        "source": "study/table.tsv",
        "select": "",
        "value": 'value("value")',
        "relation": "~",
        "published_value": "0.5",
        "tolerance": "0.01",
        "tolerance_reason": "printed to two digits",
        "kind": "reproduce",
        "cause": "a known cause",
    }
    row.update(fields)
    return row


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A results folder with one small table (and one with an IR-like protocol column)."""
    folder = tmp_path / "results"
    (folder / "study").mkdir(parents=True)
    pd.DataFrame(
        {
            "dataset": ["a", "a", "b", "b"],
            "metric": ["mrr", "mr", "mrr", "mr"],
            "value": [0.505, 3.0, 0.2, 7.0],
            "flag": [True, False, True, True],
        }
    ).to_csv(folder / "study" / "table.tsv", sep="\t", index=False)
    pd.DataFrame({"protocol": ["paper", "all-known"], "metric": ["tau", "tau"], "tau": [-0.2, 1.0]}).to_csv(
        folder / "study" / "protocols.tsv", sep="\t", index=False
    )
    for dataset, entities in (("a", 10), ("b", 1000)):
        (folder / "data" / dataset).mkdir(parents=True)
        (folder / "data" / dataset / "stats.json").write_text(
            f'{{"dataset": "{dataset}", "entities": {entities}, "triples": {{"train": 5}}}}'
        )
    return folder


# --- the claims files --------------------------------------------------------------------


def test_claims_files_parse_and_every_row_is_complete():
    claims = read_claims()
    assert list(claims.columns) == CLAIM_COLUMNS
    assert claims["id"].is_unique
    # every paper of the five documents has claims, each with its location and words
    assert set(claims["paper"]) == set(PAPERS)
    for column in ("location", "claim", "published", "kind"):
        assert (claims[column].str.strip() != "").all(), column
    checkable = claims[claims["kind"] != "not-checkable"]
    assert (checkable["tolerance_reason"].str.strip() != "").all()
    assert (claims.loc[claims["kind"] == "not-checkable", "cause"].str.strip() != "").all()
    # one file per paper in the package
    assert len(list(claims_dir().glob("*.tsv"))) == len(PAPERS)


def test_a_claims_file_with_an_incomplete_row_is_refused(tmp_path: Path):
    path = tmp_path / "claims.tsv"
    frame = pd.DataFrame([claim(tolerance_reason="")], columns=CLAIM_COLUMNS)
    frame.to_csv(path, sep="\t", index=False, quoting=csv.QUOTE_NONE)
    with pytest.raises(KgrankInputError, match="empty.*tolerance_reason"):
        read_claims([path])


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"paper": "nobody2099"}, "paper"),
        ({"kind": "maybe"}, "kind"),
        ({"relation": "≈"}, "relation"),
        ({"relation": "~", "tolerance": ""}, "tolerance"),
        ({"source": "-"}, "disagree"),
        ({"value": "value(("}, "invalid syntax|not an expression|never closed"),
        ({"select": "dataset"}, "selector clause"),
    ],
)
def test_check_claims_names_the_bad_field(fields, message):
    with pytest.raises(KgrankInputError, match=message):
        check_claims(pd.DataFrame([claim(**fields)], columns=CLAIM_COLUMNS))


def test_every_claim_names_a_registered_study_and_an_unknown_one_is_refused():
    from kgrank.studies import study_names

    claims = read_claims(studies=study_names())
    assert set(claims["study"]) - {"none"} <= set(study_names())
    with pytest.raises(KgrankInputError, match="study 'nostudy' not one of"):
        check_claims(pd.DataFrame([claim(study="nostudy")], columns=CLAIM_COLUMNS), studies=study_names())


# --- selectors and expressions -----------------------------------------------------------


def test_select_rows_by_value_alternatives_negation_and_numbers():
    frame = pd.DataFrame({"a": ["x", "y", "z"], "n": [1.0, 2.0, 3.0], "b": [True, False, True]})
    assert select_rows(frame, "a=x|z")["n"].tolist() == [1.0, 3.0]
    assert select_rows(frame, "a!=x")["n"].tolist() == [2.0, 3.0]
    assert select_rows(frame, "n>=2, b=true")["n"].tolist() == [3.0]
    assert select_rows(frame, "n=2")["a"].tolist() == ["y"]
    with pytest.raises(ClaimError, match="no column 'c'"):
        select_rows(frame, "c=1")


def test_a_value_with_a_comma_is_escaped():
    frame = pd.DataFrame({"comparison": ["s vs p", "s vs p, mix"], "tau": [1.0, 2.0]})
    assert select_rows(frame, r"comparison=s vs p\, mix")["tau"].tolist() == [2.0]


def test_the_protocol_column_defaults_to_the_papers(results: Path):
    table = pd.read_csv(results / "study" / "protocols.tsv", sep="\t")
    assert select_rows(table, "metric=tau")["tau"].tolist() == [-0.2]
    assert select_rows(table, "protocol=all-known")["tau"].tolist() == [1.0]
    # a table without the column is selected as it is
    assert len(select_rows(table.drop(columns="protocol"), "metric=tau")) == 2


def test_expressions_aggregate_compare_and_refuse_the_rest():
    rows = pd.DataFrame({"d": ["a", "a", "b"], "v": [1.0, 3.0, 10.0], "w": [2.0, 4.0, 30.0]})
    assert evaluate_expression('mean("v", "d=a")', rows) == 2.0
    assert evaluate_expression('max("v") - min("v", "d=a")', rows) == 9.0
    assert evaluate_expression('count("v>2") / count()', rows) == pytest.approx(2 / 3)
    assert evaluate_expression('spearman("v", "w")', rows) == pytest.approx(1.0)
    assert evaluate_expression("(1 < 2) and (3 >= 4)", None) == 0.0
    assert evaluate_expression("harmonic(3)", None) == pytest.approx(1 + 1 / 2 + 1 / 3)
    with pytest.raises(ClaimError, match="value\\(\\) needs one"):
        evaluate_expression('value("v", "d=a")', rows)
    with pytest.raises(ClaimError, match="not allowed"):
        evaluate_expression("__import__('os').getcwd()", None)
    with pytest.raises(ClaimError, match="unknown function"):
        evaluate_expression("open('x')", None)


def test_the_constant_scorer_rank_comes_from_the_rank_code():
    # all |S| candidates tied: optimistic 1, pessimistic |S|, realistic their mean
    assert constant_scorer_realistic_rank(10) == 5.5
    assert constant_scorer_realistic_rank(1) == 1.0


# --- verdicts ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, verdict",
    [
        ({"select": "dataset=a, metric=mrr"}, REPRODUCED),  # 0.505 within 0.01 of 0.5
        ({"select": "dataset=b, metric=mrr"}, DEVIATES),  # 0.2 is not
        ({"select": "dataset=b, metric=mrr", "kind": "reproduce-gpu"}, NEEDS_MODELS),
        ({"select": "dataset=b, metric=mrr", "kind": "consistency"}, CONTRADICTED),
        ({"select": "dataset=a, metric=mrr", "tolerance": "0.8%"}, DEVIATES),  # 0.8 % of 0.5 < 0.005
        ({"select": "dataset=a, metric=mrr", "tolerance": "2%"}, REPRODUCED),
        (
            {
                "select": "metric=mrr",
                "value": 'mean("value", "dataset=a") - mean("value", "dataset=b")',
                "relation": ">",
                "published_value": "0",
            },
            REPRODUCED,
        ),
        ({"select": "metric=mr", "value": 'min("flag")', "relation": ">=", "published_value": "1"}, DEVIATES),
    ],
)
def test_judge_on_a_synthetic_table(results: Path, fields, verdict):
    outcome = judge(claim(**fields), results)
    assert outcome.verdict == verdict
    assert outcome.reason == ("" if verdict == REPRODUCED else "a known cause")


def test_missing_inputs_are_not_checkable_with_their_reason(results: Path):
    missing = judge(claim(source="study/absent.tsv"), results)
    assert missing.verdict == NOT_CHECKABLE and "absent.tsv missing" in missing.reason
    empty = judge(claim(select="dataset=c"), results)
    assert empty.verdict == NOT_CHECKABLE and "no row matches" in empty.reason
    off = judge(claim(), results, enabled=["moments"])
    assert off.verdict == NOT_CHECKABLE and off.reason == "study `paper` not run"
    fixed = judge(claim(kind="not-checkable", cause="not in the text"), results)
    assert (fixed.verdict, fixed.reason) == (NOT_CHECKABLE, "not in the text")


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"select": "dataset=a, metric=mrr", "value": 'value("valeu")'}, "no column 'valeu'"),
        ({"value": 'nonsense("value")'}, "unknown function 'nonsense'"),
        ({"select": "metric=mrr"}, "2 rows match"),
    ],
)
def test_a_broken_claim_stops_the_scorecard_instead_of_hiding(results: Path, fields, message):
    # a misspelt column or a selector that is not precise would otherwise read as missing data
    with pytest.raises(KgrankInputError, match=rf"claim {claim()['id']} .*{message}.*; fix the claim in"):
        judge(claim(**fields), results)


def test_placeholders_glob_and_become_columns(results: Path):
    row = claim(
        source="data/{dataset}/stats.json",
        value='value("entities", "dataset=b") / count()',
        relation="~",
        published_value="500",
        tolerance="0",
    )
    assert judge(row, results).verdict == REPRODUCED
    row = claim(
        source="data/{name}/stats.json", value='value("triples.train")', published_value="5", tolerance="0"
    )
    assert judge(row, results, params={"name": "a"}).verdict == REPRODUCED
    assert judge(row, results, params={"name": "c"}).verdict == NOT_CHECKABLE
    # a selector's placeholders take the parameters too
    row = claim(select="dataset={name}, metric=mrr", published_value="0.2", tolerance="0")
    assert judge(row, results, params={"name": "b"}).verdict == REPRODUCED
    assert judge(row, results, params={"name": "a"}).verdict == DEVIATES


def test_study_sources_lists_the_enabled_studies_tables():
    claims = pd.DataFrame(
        [
            claim(id="one", source="metrics/{dataset}/{model}.tsv"),
            claim(id="two", source="ir/{ir_dataset}/counts.tsv", study="ir"),
            claim(id="three", source="-", study="none"),
            claim(id="four", source="study/table.tsv"),
        ],
        columns=CLAIM_COLUMNS,
    )
    expand = lambda pattern: [pattern.format(dataset="x", model=m) for m in ("m1", "m2")]  # noqa: E731
    sources = study_sources(claims, ["paper", "ir"], {"ir_dataset": "fb"}, expand)
    assert sources == ["metrics/x/m1.tsv", "metrics/x/m2.tsv", "ir/fb/counts.tsv", "study/table.tsv"]
    assert study_sources(claims, ["ir"], {"ir_dataset": "fb"}, expand) == ["ir/fb/counts.tsv"]


# --- the self-contradictions: computed, not hard-coded ------------------------------------


@pytest.mark.parametrize(
    "claim_id, value",
    [
        ("hoyt2022-fn2", 1001 / 80e6),  # 1.25e-5, called below 1e-5
        ("berrendorf2020-sec31-constant-half", 5.5),  # (|S| + 1)/2, printed |S|/2
        ("berrendorf2020-sec23-mr10", 10.5),
    ],
)
def test_self_contradictions_follow_from_the_arithmetic(tmp_path: Path, claim_id: str, value: float):
    claims = read_claims().set_index("id")
    row = {"id": claim_id, **claims.loc[claim_id].to_dict()}
    assert row["kind"] == "consistency" and row["study"] == "none"
    outcome = judge(row, tmp_path)
    assert outcome.value == pytest.approx(value)
    assert outcome.verdict == CONTRADICTED
    # the verdict is the arithmetic's: a published value the computation meets flips it
    relation = row["relation"]
    meets = {"<": value * 2 if value > 0 else 1, ">": value - 1, "~": value}[relation]
    assert judge({**row, "published_value": repr(meets)}, tmp_path).verdict == REPRODUCED


def test_consistent_arithmetic_is_reproduced(tmp_path: Path):
    claims = read_claims().set_index("id")
    # the caption's order is Table 4's by training triples (by entities WN18-RR leads)
    for claim_id in (
        "zhou2022-table1-sc-sum",
        "yang2022-sec5-reciprocal",
        "hoyt2022-fig1-caption-order",
        "zhou2022-table4-below-04",
    ):
        row = {"id": claim_id, **claims.loc[claim_id].to_dict()}
        assert judge(row, tmp_path).verdict == REPRODUCED, claim_id
    row = {"id": "below", **claims.loc["zhou2022-table4-below-04"].to_dict()}
    assert judge({**row, "value": "largest(0.2308, 0.41)"}, tmp_path).verdict == CONTRADICTED


# --- the command -------------------------------------------------------------------------


def test_scorecard_command_end_to_end(results: Path, tmp_path: Path, capsys):
    claims_file = tmp_path / "claims.tsv"
    rows = [
        claim(id="good", select="dataset=a, metric=mrr"),
        claim(id="bad", select="dataset=b, metric=mrr", kind="reproduce-gpu", paper="zhou2022"),
        claim(id="gone", source="study/absent.tsv", paper="zhou2022"),
        claim(id="off", study="ir", source="ir/{ir_dataset}/counts.tsv", paper="yang2022"),
        claim(
            id="self",
            study="none",
            source="-",
            value="1001 / 80e6",
            relation="<",
            published_value="1e-5",
            tolerance="",
            kind="consistency",
            paper="hoyt2022",
        ),
    ]
    pd.DataFrame(rows, columns=CLAIM_COLUMNS).to_csv(
        claims_file, sep="\t", index=False, quoting=csv.QUOTE_NONE
    )
    out = tmp_path / "tables"
    code = main(
        [
            "scorecard", "--results", str(results), "--studies", "paper", "moments",
            "--param", "ir_dataset=fb15k237", "--claims", str(claims_file),
            "--tsv", str(out / "scorecard.tsv"), "--markdown", str(out / "scorecard.md"),
            "--latex", str(out / "scorecard.tex"),
        ]
    )  # fmt: skip
    assert code == 0
    card = pd.read_csv(out / "scorecard.tsv", sep="\t", keep_default_na=False).set_index("id")
    assert card.loc["good", "verdict"] == REPRODUCED
    assert float(card.loc["good", "kgrank"]) == pytest.approx(0.505)
    assert card.loc["bad", "verdict"] == NEEDS_MODELS
    assert card.loc["gone", "verdict"] == NOT_CHECKABLE
    assert card.loc["off", "reason"] == "study `ir` not run"
    assert card.loc["self", "verdict"] == CONTRADICTED
    markdown = (out / "scorecard.md").read_text()
    assert markdown.startswith("5 claims of 3 documents: 1 reproduced, 1 needs the published models (GPU)")
    assert "not checkable: study `ir` not run" in markdown
    assert "\\begin{longtable}" in (out / "scorecard.tex").read_text()
    # the command prints the counts per paper and verdict
    printed = capsys.readouterr().out
    assert "zhou2022" in printed and "claims" in printed


def test_summary_counts_per_paper_and_verdict():
    card = pd.DataFrame(
        {"paper": ["zhou2022", "hoyt2022", "zhou2022"], "verdict": [REPRODUCED, DEVIATES, REPRODUCED]}
    )
    counts = summary(card)
    assert counts.index.tolist() == ["hoyt2022", "zhou2022", "all"]
    assert counts.loc["zhou2022", REPRODUCED] == 2 and counts.loc["all", "claims"] == 3
    assert counts.loc["hoyt2022", CONTRADICTED] == 0


def test_the_package_claims_judge_without_results(tmp_path: Path):
    """Every claim gets a verdict on an empty results folder: tables missing are not
    checkable, arithmetic is judged."""
    card = scorecard(read_claims(), tmp_path)
    assert len(card) == len(read_claims())
    needs_tables = card[card["source"].ne("") & card["source"].ne("-")]
    assert (needs_tables["verdict"] == NOT_CHECKABLE).all()
    assert (card.loc[card["source"] == "-", "verdict"] != NOT_CHECKABLE).all()
