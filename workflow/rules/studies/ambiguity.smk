# Study `ambiguity` (Berrendorf, Faerman, Vermue & Tresp 2020): rank definitions and the
# constant and random scorers, the drift of the metrics with the candidate-set size
# (sampled candidates; test subsets with their own entities as candidates), the paper's
# Table 1 regenerated, and pairwise model tests.
# Logic: src/kgrank/studies/ambiguity/. Settings: studies.ambiguity
# (src/kgrank/schemas/studies/ambiguity.schema.yaml).
import kgrank.studies.ambiguity.settings as ambiguity_settings

AMBIGUITY = settings("ambiguity")
AMBIGUITY_DIR = f"{RESULTS}/ambiguity"
AMBIGUITY_SUBSET_RANKS = f"{AMBIGUITY_DIR}/subsets/{{dataset}}/{{model}}.parquet"
AMBIGUITY_SUBSET_PAIRS = ambiguity_settings.subset_pairs(AMBIGUITY["subsets"]["pairs"], SCORED_PAIRS)
RESCORED_IN[f"ambiguity: {ambiguity_settings.SUBSET_PART}"] = AMBIGUITY_SUBSET_PAIRS
# common.smk's hook: the subset protocol scores a pair's test set once after its training.
AFTER_TRAINING_SECONDS.append(
    lambda dataset, model, pair, size: (
        [scheduling.ranking_seconds(pair.pipeline, size)]
        if enabled("ambiguity") and (dataset, model) in AMBIGUITY_SUBSET_PAIRS
        else []
    )
)
# A sampled size no dataset has that many entities for stops the plan; where a local
# dataset is not prepared yet its count is unknown, and the drift job checks the sizes.
if enabled("ambiguity"):
    ambiguity_settings.check_candidate_sizes(
        AMBIGUITY["candidate_sizes"], KNOWN_ENTITY_COUNTS, CONFIG_SOURCE
    )
AMBIGUITY_TABLES = {
    name: table_files(f"ambiguity_{name}") for name in ("variants", "ties", "slopes", "table1", "pairwise")
}


rule ambiguity_variants:
    input:
        evaluated_pairs(rank_file),
    output:
        metrics=f"{AMBIGUITY_DIR}/variants.tsv",
        ties=f"{AMBIGUITY_DIR}/ties.tsv",
        markdown=report(
            AMBIGUITY_TABLES["variants"]["md"],
            caption="../../report/ambiguity_variants.rst",
            category="ambiguity",
        ),
        latex=AMBIGUITY_TABLES["variants"]["tex"],
        ties_markdown=report(
            AMBIGUITY_TABLES["ties"]["md"],
            caption="../../report/ambiguity_ties.rst",
            category="ambiguity",
        ),
        ties_latex=AMBIGUITY_TABLES["ties"]["tex"],
        pdf=report(
            figure_files("ambiguity_variants")["pdf"],
            caption="../../report/ambiguity_variants_figure.rst",
            category="ambiguity",
        ),
        png=figure_files("ambiguity_variants")["png"],
    params:
        options=config_options("ambiguity-variants"),
        settings=command_settings("ambiguity", "ambiguity-variants"),
    log:
        log_file("ambiguity", "variants"),
    benchmark:
        benchmark_file("ambiguity", "variants")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ambiguity-variants {params.options} --ranks {input} --settings {params.settings:q}"
        " --out {output.metrics} --ties {output.ties} --markdown {output.markdown} --latex {output.latex}"
        " --ties-markdown {output.ties_markdown} --ties-latex {output.ties_latex}"
        " --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


# The entity-alignment protocol: one scoring pass of the test set per pair serves every
# fraction and seed.
rule ambiguity_subsets:
    input:
        unpack(scoring_inputs),
        **split_files(),
    output:
        AMBIGUITY_SUBSET_RANKS,
    wildcard_constraints:
        model=SCORED_MODEL,
    params:
        options=config_options("ambiguity-subsets"),
        model_dir=scoring_model_dir,
        dataset_dir=of_wildcards(dataset_dir),
        settings=command_settings("ambiguity", "ambiguity-subsets"),
    priority: ranks_priority
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    log:
        log_file("ambiguity", "subsets/{dataset}/{model}"),
    benchmark:
        benchmark_file("ambiguity", "subsets/{dataset}/{model}")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ambiguity-subsets {params.options} --dataset-dir {params.dataset_dir} --model-dir {params.model_dir}"
        " --settings {params.settings:q} --threads {threads} --out {output} --quiet 2>&1 | tee {log}"


rule ambiguity_drift:
    input:
        ranks=evaluated_pairs(rank_file),
        subsets=[AMBIGUITY_SUBSET_RANKS.format(dataset=d, model=m) for d, m in AMBIGUITY_SUBSET_PAIRS],
    output:
        drift=f"{AMBIGUITY_DIR}/drift.tsv",
        slopes=f"{AMBIGUITY_DIR}/slopes.tsv",
        markdown=report(
            AMBIGUITY_TABLES["slopes"]["md"],
            caption="../../report/ambiguity_slopes.rst",
            category="ambiguity",
        ),
        latex=AMBIGUITY_TABLES["slopes"]["tex"],
    params:
        options=config_options("ambiguity-drift"),
        settings=command_settings("ambiguity", "ambiguity-drift"),
    log:
        log_file("ambiguity", "drift"),
    benchmark:
        benchmark_file("ambiguity", "drift")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ambiguity-drift {params.options} --ranks {input.ranks} --subsets {input.subsets}"
        " --settings {params.settings:q}"
        " --out {output.drift} --slopes {output.slopes} --markdown {output.markdown}"
        " --latex {output.latex} 2>&1 | tee {log}"


rule ambiguity_drift_figure:
    input:
        drift=rules.ambiguity_drift.output.drift,
    output:
        pdf=report(
            figure_files("ambiguity_drift")["pdf"],
            caption="../../report/ambiguity_drift.rst",
            category="ambiguity",
        ),
        png=figure_files("ambiguity_drift")["png"],
    params:
        caption=EVALUATED_CAPTION,
    log:
        log_file("ambiguity", "drift_figure"),
    benchmark:
        benchmark_file("ambiguity", "drift_figure")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ambiguity-drift-figure --drift {input.drift} --caption {params.caption:q}"
        " --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


rule ambiguity_table1:
    input:
        ranks=evaluated_pairs(rank_file),
        stats=all_datasets(stats_file, TRAIN_DATASETS),
    output:
        table=f"{AMBIGUITY_DIR}/table1.tsv",
        markdown=report(
            AMBIGUITY_TABLES["table1"]["md"],
            caption="../../report/ambiguity_table1.rst",
            category="ambiguity",
        ),
        latex=AMBIGUITY_TABLES["table1"]["tex"],
    params:
        settings=command_settings("ambiguity", "ambiguity-table1"),
    log:
        log_file("ambiguity", "table1"),
    benchmark:
        benchmark_file("ambiguity", "table1")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ambiguity-table1 --ranks {input.ranks} --stats {input.stats} --settings {params.settings:q}"
        " --out {output.table} --markdown {output.markdown} --latex {output.latex} 2>&1 | tee {log}"


rule ambiguity_pairwise:
    input:
        evaluated_pairs(rank_file),
    output:
        table=f"{AMBIGUITY_DIR}/pairwise.tsv",
        markdown=report(
            AMBIGUITY_TABLES["pairwise"]["md"],
            caption="../../report/ambiguity_pairwise.rst",
            category="ambiguity",
        ),
        latex=AMBIGUITY_TABLES["pairwise"]["tex"],
        pdf=report(
            figure_files("ambiguity_pairwise")["pdf"],
            caption="../../report/ambiguity_pairwise_figure.rst",
            category="ambiguity",
        ),
        png=figure_files("ambiguity_pairwise")["png"],
    params:
        options=config_options("ambiguity-pairwise"),
        settings=command_settings("ambiguity", "ambiguity-pairwise"),
    log:
        log_file("ambiguity", "pairwise"),
    benchmark:
        benchmark_file("ambiguity", "pairwise")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ambiguity-pairwise {params.options} --ranks {input} --settings {params.settings:q}"
        " --out {output.table} --markdown {output.markdown} --latex {output.latex}"
        " --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


# Light rules run where Snakemake runs, not as cluster jobs.
localrules:
    ambiguity_drift_figure,
    ambiguity_table1,


if enabled("ambiguity"):
    TARGETS += [
        *(files["md"] for files in AMBIGUITY_TABLES.values()),
        *figure_files("ambiguity_variants").values(),
        *figure_files("ambiguity_drift").values(),
        *figure_files("ambiguity_pairwise").values(),
    ]
