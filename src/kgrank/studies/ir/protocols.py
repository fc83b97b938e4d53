"""The two filtering protocols side by side: what changes when the unsampled test answers
of FB-Test-S are unlabelled candidates (`paper`, Zhou et al.'s filter) instead of filtered
(`all-known`).

- :func:`sample_vs_test`: each system's micro MRR (or another metric) on FB-Test-S against
  FB-Test-O per protocol. The paper's tables give FB-Test-S a lower micro MRR than FB-Test-O
  for all 13 of its systems: on FB-Test-S a query's other test answers compete with the one
  sampled answer, on FB-Test-O they are filtered as its own answers.
- :func:`tau_by_protocol`: Kendall's tau-b of the FB-Test-S vs FB-Test-S-C rankings per
  averaging and metric, one column per protocol (the paper reports -0.23 for micro MRR).
"""

from __future__ import annotations

import pandas as pd

from kgrank.errors import KgrankInputError

TEST, SAMPLE = "test", "sample"
SAMPLE_VS_TEST_COLUMNS = ("protocol", "model", "averaging", "metric", "test", "sample", "sample_minus_test")
TAU_COMPARISON = "sample vs pooled"


def _require(table: pd.DataFrame, columns: tuple[str, ...], name: str, writer: str) -> None:
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise KgrankInputError(f"{name}: no column {missing[0]}; write it with `{writer}`")


def sample_vs_test(
    aggregate: pd.DataFrame, *, averaging: str = "micro", metric: str = "inverse_harmonic_mean_rank"
) -> pd.DataFrame:
    """Per protocol and system, one metric's value on FB-Test-O (`test`) and FB-Test-S
    (`sample`) and their difference, from the per-protocol aggregate table (the protocol
    column and aggregate.AGGREGATE_COLUMNS); columns SAMPLE_VS_TEST_COLUMNS."""
    _require(
        aggregate,
        ("protocol", "model", "evaluation", "averaging", "metric", "value"),
        "systems table",
        "kgrank ir-systems",
    )
    chosen = aggregate[(aggregate["averaging"] == averaging) & (aggregate["metric"] == metric)]
    for evaluation in (TEST, SAMPLE):
        if not (chosen["evaluation"] == evaluation).any():
            raise KgrankInputError(
                f"systems table: no {averaging} {metric} on evaluation {evaluation!r}; "
                "evaluate the systems on FB-Test-O and FB-Test-S"
            )
    table = chosen.pivot_table(
        index=["protocol", "model"], columns="evaluation", values="value", sort=False
    ).reset_index()
    table = table.assign(averaging=averaging, metric=metric)
    table["sample_minus_test"] = table[SAMPLE] - table[TEST]
    return table[list(SAMPLE_VS_TEST_COLUMNS)]


def tau_by_protocol(agreement: pd.DataFrame, variant: str = "raw") -> pd.DataFrame:
    """Kendall's tau-b (and p-value) of FB-Test-S vs FB-Test-S-C on the whole sets, per
    averaging and metric, as columns ``tau <protocol>`` and ``p <protocol>`` in the order
    of the protocols in ``agreement`` (agreement.AGREEMENT_COLUMNS with a protocol column)."""
    _require(
        agreement,
        ("protocol", "comparison", "variant", "averaging", "metric", "tau", "p_value"),
        "sparsity table",
        "kgrank ir-sparsity",
    )
    chosen = agreement[
        (agreement["comparison"] == TAU_COMPARISON)
        & (agreement["variant"] == variant)
        & (agreement["category"].fillna("all") == "all")
        & (agreement["side"].fillna("both") == "both")
    ]
    protocols = list(dict.fromkeys(chosen["protocol"]))
    if not protocols:
        raise KgrankInputError(f"sparsity table: no {TAU_COMPARISON!r} rows; run the label-sparsity analysis")
    frames = []
    for protocol in protocols:
        cell = chosen[chosen["protocol"] == protocol].set_index(["averaging", "metric"])
        frames.append(
            cell[["tau", "p_value"]].rename(columns={"tau": f"tau {protocol}", "p_value": f"p {protocol}"})
        )
    table = pd.concat(frames, axis=1, sort=False).reset_index()
    return table[["averaging", "metric", *[f"tau {p}" for p in protocols], *[f"p {p}" for p in protocols]]]
