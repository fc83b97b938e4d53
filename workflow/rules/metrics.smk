# Stage 4: every metric with its expectation and variance under the random model,
# its adjusted index and its z-score, and its sampling interval over the test tasks,
# per side and rank type; and the same (without intervals) per relation and per
# relation category.


rule metrics:
    input:
        ranks=rank_file(),
        config=f"{model_dir()}/config.json",
        train=split_files()["train"],
    output:
        table=metrics_file(),
        groups=f"{RESULTS}/metrics/{{dataset}}/{{model}}.groups.parquet",
    params:
        options=config_options("metrics"),
        system=lambda wildcards: f"--model-dir {model_dir(wildcards.dataset, wildcards.model)}",
        dataset_dir=of_wildcards(dataset_dir),
    log:
        log_file("metrics", "{dataset}/{model}"),
    benchmark:
        benchmark_file("metrics", "{dataset}/{model}")
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank metrics {params.options} --ranks {input.ranks} {params.system}"
        " --dataset {wildcards.dataset} --model {wildcards.model}"
        " --dataset-dir {params.dataset_dir} --out {output.table} --groups-out {output.groups} 2>&1 | tee {log}"


# A further training run (comparison.seeds), with its own seed for the intervals.
use rule metrics as metrics_run with:
    input:
        ranks=run_rank_file(),
        config=f"{run_model_dir()}/config.json",
        train=split_files()["train"],
    output:
        table=run_metrics_file(),
        groups=f"{RESULTS}/seeds/{{run}}/metrics/{{dataset}}/{{model}}.groups.parquet",
    wildcard_constraints:
        run=r"[0-9]+",
    # the keyword params named here replace metrics', the others stay
    params:
        system=lambda wildcards: f"--model-dir {run_model_dir(wildcards.dataset, wildcards.model, wildcards.run)}",
        options=lambda wildcards: config_options("metrics", seed=wildcards.run),
    log:
        log_file("metrics", "{dataset}/{model}.seed-{run}"),
    benchmark:
        benchmark_file("metrics", "{dataset}/{model}.seed-{run}")


# A system kgrank did not train: no config.json, its budget columns say `external`.
if EXTERNAL_PAIRS:

    use rule metrics as external_metrics with:
        input:
            ranks=rank_file(),
            train=split_files()["train"],
        wildcard_constraints:
            model="|".join(EXTERNAL_NAMES),
        params:
            system=lambda wildcards: f"--external {external_kind(wildcards)}",

    # What each external system joined, and what it skipped and why.
    rule external_systems:
        input:
            [path for dataset, name in EXTERNAL_PAIRS for path in external_files(dataset, name)],
        output:
            table=f"{RESULTS}/metrics/external_systems.tsv",
            markdown=report(table_files("external_systems")["md"], category="systems"),
            latex=table_files("external_systems")["tex"],
        params:
            systems=lambda wildcards: json.dumps(config["external_systems"]),
            studies=" ".join(study for study in STUDY_SCHEMAS if enabled(study)),
            rescored=lambda wildcards: json.dumps(
                {part: [f"{dataset}/{name}" for dataset, name in pairs] for part, pairs in RESCORED_IN.items()}
            ),
            root=lambda wildcards: workflow.basedir,
        log:
            log_file("metrics", "external_systems"),
        benchmark:
            benchmark_file("metrics", "external_systems")
        conda:
            "../envs/kgrank.yaml"
        shell:
            "kgrank external-systems --systems {params.systems:q} --studies {params.studies} --rescored {params.rescored:q}"
            " --root {params.root:q} --out {output.table} --markdown {output.markdown}"
            " --latex {output.latex} 2>&1 | tee {log}"

    localrules:
        external_metrics,
        external_systems,

    # asked for when a study that takes external systems runs (the studies add their
    # metric and rank files themselves)
    if any(enabled(study) for study in external_studies()):
        TARGETS += table_files("external_systems").values()


localrules:
    metrics,
    metrics_run,
