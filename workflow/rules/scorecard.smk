# The reproduction scorecard: every checkable claim of the five papers (published values in
# src/kgrank/scorecard/claims/*.tsv) judged against the tables of the studies this run
# makes. Logic: src/kgrank/scorecard/card.py (core: it reads every study's outputs, imports none).
# Included after the studies: its inputs are their tables, only for the enabled studies
# and only those this configuration makes (a claim on another is "not checkable").
from kgrank.scorecard.card import read_claims, study_sources
from kgrank.studies import study_names

SCORECARD_TABLES = table_files("scorecard")
SCORECARD_STUDIES_RUN = [study for study in study_names() if enabled(study)]


SCORECARD_INPUTS = [
    f"{RESULTS}/{path}"
    for path in study_sources(read_claims(studies=study_names()), SCORECARD_STUDIES_RUN, SCORECARD_PARAMS, scorecard_expand)
    if scorecard_made(path)
]


rule scorecard:
    input:
        SCORECARD_INPUTS,
    output:
        tsv=f"{RESULTS}/tables/scorecard.tsv",
        markdown=report(SCORECARD_TABLES["md"], caption="../report/scorecard.rst", category="scorecard"),
        latex=SCORECARD_TABLES["tex"],
    params:
        results=lambda wildcards, output: os.path.dirname(os.path.dirname(output.tsv)),
        studies=" ".join(SCORECARD_STUDIES_RUN),
        parameters=" ".join(f"--param {name}={value}" for name, value in SCORECARD_PARAMS.items()),
    log:
        log_file("scorecard", "scorecard"),
    benchmark:
        benchmark_file("scorecard", "scorecard")
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank scorecard --results {params.results} --studies {params.studies} {params.parameters}"
        " --tsv {output.tsv} --markdown {output.markdown} --latex {output.latex} 2>&1 | tee {log}"


# Light rule: runs where Snakemake runs, not as a cluster job.
localrules:
    scorecard,


TARGETS += [SCORECARD_TABLES["md"], SCORECARD_TABLES["tex"], f"{RESULTS}/tables/scorecard.tsv"]
