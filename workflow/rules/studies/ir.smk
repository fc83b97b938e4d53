# Study `ir` (Zhou, Shi, Li, Liu & Ding 2022): link prediction evaluated as information
# retrieval on FB15k-237 (micro vs macro metrics, MAP@20 and nDCG@20 through trec_eval's
# measures, FB-Test-S against its TREC-pooled relabelling FB-Test-S-C, ranking stability,
# discriminative power) and the macro metrics' expectation under the random model.
# Logic: src/kgrank/studies/ir/. Settings: studies.ir (src/kgrank/schemas/studies/ir.schema.yaml).
import kgrank.studies.ir.settings as ir_settings

IR_SETTINGS = settings("ir")
IR_DIR = f"{RESULTS}/ir"
IR_DATASET = IR_SETTINGS["dataset"]
IR_OTHER_DATASETS = IR_SETTINGS["other_datasets"]
IR_DATASETS = [IR_DATASET, *IR_OTHER_DATASETS]
# each dataset's trained models (the IR dataset's may be chosen) and its external PyKEEN folders
IR_SYSTEMS = {
    dataset: (IR_SETTINGS["systems"] if dataset == IR_DATASET and IR_SETTINGS["systems"] else MODELS)
    + [name for scored_dataset, name in RESCORED_PAIRS if scored_dataset == dataset]
    for dataset in IR_DATASETS
}
# relative to the repository, as the open-world study's family tree is
IR_DATA_DIR = Path(workflow.basedir) / IR_SETTINGS["data_dir"]
RESCORED_IN[f"ir: {ir_settings.EVERY_PART}"] = [(dataset, name) for dataset in IR_DATASETS for name in IR_SYSTEMS[dataset]]
if enabled("ir"):
    ir_settings.check_settings(IR_SETTINGS, TRAIN_DATASETS, IR_DATA_DIR, source=CONFIG_SOURCE)
# dataset:evaluation of every evaluation set that stability and discriminative power analyse
IR_ANALYSED = " ".join(
    f"{dataset}:{evaluation}"
    for dataset in IR_DATASETS
    for evaluation in ir_settings.stability_evaluations(dataset, IR_DATASET)
)
# The hooks of common.smk: the scoring pass waits for each system's training, which starts
# the earlier for it; the scorecard's {ir_dataset} and the tables this run writes.
IR_PASS_SECONDS = lambda pipeline, size: ir_settings.pass_seconds(pipeline, size, IR_SETTINGS["run_depth"])
IR_QUERIES_PRIORITY = lambda dataset: max(
    (pair_train_priority(dataset, model) for model in IR_SYSTEMS.get(dataset, []) if model in TRAINED_MODELS),
    default=0,
)
AFTER_TRAINING_SECONDS.append(
    lambda dataset, model, pair, size: (
        [IR_PASS_SECONDS(pair.pipeline, size)] if enabled("ir") and model in IR_SYSTEMS.get(dataset, []) else []
    )
)
SCORECARD_MADE["ir"] = lambda path: ir_settings.scorecard_made(path, IR_DATASETS, IR_DATASET)
SCORECARD_PARAMS["ir_dataset"] = IR_DATASET


# where the study writes; `.format(dataset=..., model=...)` gives one file
IR_ITEMS = f"{IR_DIR}/{{dataset}}/items/{{model}}.parquet"
IR_MICRO = f"{IR_DIR}/{{dataset}}/micro/{{model}}.tsv"
IR_DATASET_DIR = f"{IR_DIR}/{IR_DATASET}"
IR_ITEMS_OF = {
    dataset: [IR_ITEMS.format(dataset=dataset, model=model) for model in IR_SYSTEMS[dataset]]
    for dataset in IR_DATASETS
}
IR_COUNTS_TABLE = table_files("ir_counts")
IR_SYSTEMS_TABLE = table_files("ir_systems")
IR_SPARSITY_TABLE = table_files("ir_sparsity")
IR_DISCRIMINATION_TABLE = table_files("ir_discrimination")
IR_MONTECARLO_TABLE = table_files("ir_montecarlo")
IR_SAMPLE_VS_TEST_TABLE = table_files("ir_sample_vs_test")
IR_TAU_BY_PROTOCOL_TABLE = table_files("ir_tau_by_protocol")


# Tables, figures and the analyses that take seconds run on the submitting machine.
localrules:
    ir_queries,
    ir_test_queries,
    ir_systems,
    ir_sparsity,
    ir_stability_figure,
    ir_discrimination,


rule ir_queries:
    input:
        **split_files(IR_DATASET),
        stats=stats_file(IR_DATASET),
        kgc_files=ir_settings.kgc_files(IR_DATA_DIR) if enabled("ir") else [],
        archive=ir_settings.dataset_archive(config["datasets"], IR_DATASET),
    output:
        evaluations=f"{IR_DATASET_DIR}/evaluations.parquet",
        counts=f"{IR_DATASET_DIR}/counts.tsv",
        relations=f"{IR_DATASET_DIR}/relations.tsv",
        divergences=f"{IR_DATASET_DIR}/divergences.tsv",
        qrels=directory(f"{IR_DATASET_DIR}/qrels"),
        markdown=report(IR_COUNTS_TABLE["md"], caption="../../report/ir_counts.rst", category="ir"),
        latex=IR_COUNTS_TABLE["tex"],
    params:
        dataset_dir=lambda wildcards, input: os.path.dirname(input.train),
        kgc_dir=lambda wildcards: IR_DATA_DIR,
        raw_test=ir_settings.raw_test_argument(config["datasets"], IR_DATASET),
        export=" ".join(ir_settings.MAIN_EVALUATIONS),
    priority: lambda wildcards: IR_QUERIES_PRIORITY(IR_DATASET)
    log:
        log_file("ir", "queries"),
    benchmark:
        benchmark_file("ir", "queries")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ir-queries --dataset-dir {params.dataset_dir} --kgc-dir {params.kgc_dir} {params.raw_test}"
        " --out {output.evaluations} --counts {output.counts} --relations {output.relations}"
        " --divergences {output.divergences} --qrels-dir {output.qrels} --export {params.export}"
        " --markdown {output.markdown} --latex {output.latex} 2>&1 | tee {log}"


# The other datasets (WN18RR) have no relabelled sample: their own test split is the one
# evaluation, for stability and discriminative power.
rule ir_test_queries:
    input:
        **split_files(),
    output:
        evaluations=f"{IR_DIR}/{{dataset}}/evaluations.parquet",
        qrels=directory(f"{IR_DIR}/{{dataset}}/qrels"),
    params:
        dataset_dir=of_wildcards(dataset_dir),
    wildcard_constraints:
        dataset="|".join(IR_OTHER_DATASETS) or "(?!)",
    priority: lambda wildcards: IR_QUERIES_PRIORITY(wildcards.dataset)
    log:
        log_file("ir", "queries-{dataset}"),
    benchmark:
        benchmark_file("ir", "queries-{dataset}")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ir-queries --dataset-dir {params.dataset_dir} --out {output.evaluations}"
        " --qrels-dir {output.qrels} --export test 2>&1 | tee {log}"


# One scoring pass per system serves every evaluation set and both filtering protocols
# (`paper`: train + valid + the set's own answers, Zhou et al.'s; `all-known`: train + valid
# + test): micro and macro items, the registry's metrics on the main sets, and TREC run
# files (the paper protocol's; the all-known one's only where it differs: not FB-Test-O).
rule ir_evaluate:
    input:
        unpack(scoring_inputs),
        **split_files(),
        evaluations=f"{IR_DIR}/{{dataset}}/evaluations.parquet",
    output:
        item_table=IR_ITEMS,
        metrics=IR_MICRO,
        runs=directory(f"{IR_DIR}/{{dataset}}/runs/{{model}}"),
    params:
        options=config_options("ir-evaluate"),
        model_dir=scoring_model_dir,
        dataset_dir=of_wildcards(dataset_dir),
        export=lambda wildcards: " ".join(ir_settings.exported_evaluations(wildcards.dataset, IR_DATASET)),
        settings=command_settings("ir", "ir-evaluate"),
    wildcard_constraints:
        dataset="|".join(IR_DATASETS),
        model=SCORED_MODEL,
    priority: scoring_priority(IR_PASS_SECONDS)
    threads: 1
    resources:
        mem_mb=6000,
        runtime=60,
    log:
        log_file("ir", "evaluate/{dataset}/{model}"),
    benchmark:
        benchmark_file("ir", "evaluate/{dataset}/{model}")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ir-evaluate {params.options} --model-dir {params.model_dir} --dataset-dir {params.dataset_dir}"
        " --dataset {wildcards.dataset} --model {wildcards.model} --evaluations {input.evaluations}"
        " --settings {params.settings:q} --export {params.export} --threads {threads} --quiet"
        " --items {output.item_table} --metrics {output.metrics} --runs-dir {output.runs} 2>&1 | tee {log}"


rule ir_systems:
    input:
        item_tables=IR_ITEMS_OF[IR_DATASET],
        metrics=[IR_MICRO.format(dataset=IR_DATASET, model=model) for model in IR_SYSTEMS[IR_DATASET]],
    output:
        table=f"{IR_DATASET_DIR}/systems.tsv",
        markdown=report(IR_SYSTEMS_TABLE["md"], caption="../../report/ir_systems.rst", category="ir"),
        latex=IR_SYSTEMS_TABLE["tex"],
        pdf=report(
            figure_files("ir_systems")["pdf"], caption="../../report/ir_systems_figure.rst", category="ir"
        ),
        png=figure_files("ir_systems")["png"],
        gap=f"{IR_DATASET_DIR}/sample_vs_test.tsv",
        gap_markdown=report(
            IR_SAMPLE_VS_TEST_TABLE["md"], caption="../../report/ir_sample_vs_test.rst", category="ir"
        ),
        gap_latex=IR_SAMPLE_VS_TEST_TABLE["tex"],
    params:
        systems=" ".join(IR_SYSTEMS[IR_DATASET]),
        caption=budget_caption(
            config["budget"],
            [IR_DATASET],
            [model for model in IR_SYSTEMS[IR_DATASET] if model in TRAINED_MODELS],
            [pair for pair in RESCORED_PAIRS if pair[0] == IR_DATASET],
        ),
    log:
        log_file("ir", "systems"),
    benchmark:
        benchmark_file("ir", "systems")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ir-systems --items {input.item_tables} --systems {params.systems} --micro-metrics {input.metrics}"
        " --out {output.table} --markdown {output.markdown} --latex {output.latex}"
        " --pdf {output.pdf} --png {output.png} --caption {params.caption:q}"
        " --gap {output.gap} --gap-markdown {output.gap_markdown} --gap-latex {output.gap_latex} 2>&1 | tee {log}"


rule ir_sparsity:
    input:
        item_tables=IR_ITEMS_OF[IR_DATASET],
        relations=f"{IR_DATASET_DIR}/relations.tsv",
    output:
        agreement=f"{IR_DATASET_DIR}/sparsity.tsv",
        values=f"{IR_DATASET_DIR}/sparsity_values.tsv",
        markdown=report(IR_SPARSITY_TABLE["md"], caption="../../report/ir_sparsity.rst", category="ir"),
        latex=IR_SPARSITY_TABLE["tex"],
        pdf=report(
            figure_files("ir_sparsity")["pdf"], caption="../../report/ir_sparsity_figure.rst", category="ir"
        ),
        png=figure_files("ir_sparsity")["png"],
        values_pdf=report(
            figure_files("ir_sparsity_values")["pdf"],
            caption="../../report/ir_sparsity_values.rst",
            category="ir",
        ),
        values_png=figure_files("ir_sparsity_values")["png"],
        tau=f"{IR_DATASET_DIR}/tau_by_protocol.tsv",
        tau_markdown=report(
            IR_TAU_BY_PROTOCOL_TABLE["md"], caption="../../report/ir_tau_by_protocol.rst", category="ir"
        ),
        tau_latex=IR_TAU_BY_PROTOCOL_TABLE["tex"],
    params:
        systems=" ".join(IR_SYSTEMS[IR_DATASET]),
    log:
        log_file("ir", "sparsity"),
    benchmark:
        benchmark_file("ir", "sparsity")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ir-sparsity --items {input.item_tables} --systems {params.systems} --relations {input.relations}"
        " --out {output.agreement} --values {output.values} --markdown {output.markdown}"
        " --latex {output.latex} --pdf {output.pdf} --png {output.png}"
        " --values-pdf {output.values_pdf} --values-png {output.values_png}"
        " --tau {output.tau} --tau-markdown {output.tau_markdown} --tau-latex {output.tau_latex} 2>&1 | tee {log}"


rule ir_stability:
    input:
        item_tables=lambda wildcards: IR_ITEMS_OF[wildcards.dataset],
    output:
        taus=f"{IR_DIR}/{{dataset}}/stability.tsv",
        summary=f"{IR_DIR}/{{dataset}}/stability_summary.tsv",
    params:
        options=config_options("ir-stability"),
        systems=lambda wildcards: " ".join(IR_SYSTEMS[wildcards.dataset]),
        evaluations=lambda wildcards: " ".join(ir_settings.stability_evaluations(wildcards.dataset, IR_DATASET)),
        settings=command_settings("ir", "ir-stability"),
    wildcard_constraints:
        dataset="|".join(IR_DATASETS),
    log:
        log_file("ir", "stability-{dataset}"),
    benchmark:
        benchmark_file("ir", "stability-{dataset}")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ir-stability {params.options} --items {input.item_tables} --systems {params.systems} --dataset {wildcards.dataset}"
        " --evaluations {params.evaluations} --settings {params.settings:q}"
        " --out {output.taus} --summary {output.summary} 2>&1 | tee {log}"


rule ir_stability_figure:
    input:
        [f"{IR_DIR}/{dataset}/stability_summary.tsv" for dataset in IR_DATASETS],
    output:
        pdf=report(
            figure_files("ir_stability")["pdf"], caption="../../report/ir_stability.rst", category="ir"
        ),
        png=figure_files("ir_stability")["png"],
    log:
        log_file("ir", "stability_figure"),
    benchmark:
        benchmark_file("ir", "stability_figure")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ir-stability-figure --summaries {input} --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


rule ir_discrimination:
    input:
        item_tables=[path for dataset in IR_DATASETS for path in IR_ITEMS_OF[dataset]],
    output:
        pairs=f"{IR_DIR}/discrimination.tsv",
        summary=f"{IR_DIR}/discrimination_summary.tsv",
        markdown=report(
            IR_DISCRIMINATION_TABLE["md"], caption="../../report/ir_discrimination.rst", category="ir"
        ),
        latex=IR_DISCRIMINATION_TABLE["tex"],
        pdf=report(
            figure_files("ir_discrimination")["pdf"],
            caption="../../report/ir_discrimination_figure.rst",
            category="ir",
        ),
        png=figure_files("ir_discrimination")["png"],
    params:
        pairs=" ".join(f"{dataset}/{model}" for dataset in IR_DATASETS for model in IR_SYSTEMS[dataset]),
        evaluations=IR_ANALYSED,
        settings=command_settings("ir", "ir-discrimination"),
    log:
        log_file("ir", "discrimination"),
    benchmark:
        benchmark_file("ir", "discrimination")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ir-discrimination --items {input.item_tables} --pairs {params.pairs}"
        " --evaluations {params.evaluations} --settings {params.settings:q} --out {output.pairs}"
        " --summary {output.summary} --markdown {output.markdown} --latex {output.latex}"
        " --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


# The macro moments checked on the study's own query structures (one system's items per
# dataset carry them: the counts do not depend on the model).
rule ir_montecarlo:
    input:
        [IR_ITEMS_OF[dataset][0] for dataset in IR_DATASETS],
    output:
        table=f"{IR_DIR}/montecarlo.tsv",
        markdown=report(IR_MONTECARLO_TABLE["md"], caption="../../report/ir_montecarlo.rst", category="ir"),
        latex=IR_MONTECARLO_TABLE["tex"],
    params:
        options=config_options("ir-montecarlo"),
        pairs=" ".join(f"{dataset}/{IR_SYSTEMS[dataset][0]}" for dataset in IR_DATASETS),
        evaluations=IR_ANALYSED,
        settings=command_settings("ir", "ir-montecarlo"),
    log:
        log_file("ir", "montecarlo"),
    benchmark:
        benchmark_file("ir", "montecarlo")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank ir-montecarlo {params.options} --items {input} --pairs {params.pairs} --evaluations {params.evaluations}"
        " --settings {params.settings:q} --quiet"
        " --out {output.table} --markdown {output.markdown} --latex {output.latex} 2>&1 | tee {log}"


if enabled("ir"):
    TARGETS += [
        rules.ir_systems.output.table,
        rules.ir_sparsity.output.agreement,
        rules.ir_stability_figure.output.pdf,
        rules.ir_discrimination.output.pairs,
        rules.ir_montecarlo.output.table,
    ]
