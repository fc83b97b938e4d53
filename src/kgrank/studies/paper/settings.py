"""What the rule file reads at parse time: the names of the study's report tables (its
commands read their settings through ``--settings``: kgrank.workflow.settings). Kept free
of pandas, numpy and the plotting stack, which every Snakemake call would otherwise load."""

from __future__ import annotations

# The study's hook for systems from outside (kgrank.studies.external_parts): each part, None
# when an external system joins it, else why it does not.
EXTERNAL_PARTS: dict[str, str | None] = {
    "Figure 1": None,
    "learning curves": "no validation curve: kgrank did not train it",
    "comparison with published results": "no published result for it",
}

# Tables 1-3 come from one command (`kgrank paper-tables-1-3`), which writes
# <name>.md and <name>.tex for each into one folder.
TABLES_1_TO_3 = ("table1", "table2", "table3")
# How the paper's caption orders the datasets: "in increasing size from left to right
# Nations having the least and FB15k-237 having the most", which holds for the number of
# triples (FB15k-237 310,116 > WN18RR 93,003) and not for entities (WN18RR 40,943 >
# FB15k-237 14,541). kgrank offers both; the default is the paper's.
FIGURE1_ORDERS = ("triples", "entities")
