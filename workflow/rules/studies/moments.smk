# Study `moments` (unified-framework paper, Appendix B): the lookup table of every
# metric's expectation and variance under the random model per dataset, split and side;
# the Monte Carlo check of each; and the errata of the published closed forms.
# Logic: src/kgrank/studies/moments/. Settings: studies.moments
# (src/kgrank/schemas/studies/moments.schema.yaml).

# common.smk's hook: the scorecard reads the tables of the run's datasets only.
SCORECARD_MADE["moments"] = lambda path: path.split("/")[1] in DATASETS


rule moments_table:
    input:
        **split_files(),
    output:
        moments_file(),
    params:
        options=config_options("moments-table"),
        dataset_dir=of_wildcards(dataset_dir),
        settings=command_settings("moments", "moments-table"),
    log:
        log_file("moments", "table/{dataset}"),
    benchmark:
        benchmark_file("moments", "table/{dataset}")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank moments-table {params.options} --dataset-dir {params.dataset_dir} --dataset {wildcards.dataset}"
        " --settings {params.settings:q} --out {output} 2>&1 | tee {log}"


rule moments_montecarlo:
    input:
        **split_files(),
    output:
        montecarlo_file(),
    params:
        options=config_options("moments-montecarlo"),
        dataset_dir=of_wildcards(dataset_dir),
        settings=command_settings("moments", "moments-montecarlo"),
    log:
        log_file("moments", "montecarlo/{dataset}"),
    benchmark:
        benchmark_file("moments", "montecarlo/{dataset}")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank moments-montecarlo {params.options} --dataset-dir {params.dataset_dir} --dataset {wildcards.dataset}"
        " --settings {params.settings:q} --out {output} 2>&1 | tee {log}"


rule moments_montecarlo_figure:
    input:
        all_datasets(montecarlo_file),
    output:
        pdf=report(
            figure_files("montecarlo")["pdf"], caption="../../report/montecarlo.rst", category="moments"
        ),
        png=figure_files("montecarlo")["png"],
    log:
        log_file("moments", "montecarlo_figure"),
    benchmark:
        benchmark_file("moments", "montecarlo_figure")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank moments-montecarlo-figure --checks {input} --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


rule moments_errata:
    output:
        check=f"{RESULTS}/moments/formula_check.tsv",
        errata=f"{RESULTS}/tables/errata.tsv",
        markdown=report(table_files("errata")["md"], caption="../../report/errata.rst", category="moments"),
    params:
        options=config_options("moments-errata"),
        settings=command_settings("moments", "moments-errata"),
    log:
        log_file("moments", "errata"),
    benchmark:
        benchmark_file("moments", "errata")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank moments-errata {params.options} --settings {params.settings:q} --check {output.check}"
        " --errata {output.errata} --markdown {output.markdown} 2>&1 | tee {log}"


# Light rules run where Snakemake runs, not as cluster jobs.
localrules:
    moments_montecarlo_figure,
    moments_errata,


if enabled("moments"):
    TARGETS += [
        *all_datasets(moments_file),
        *figure_files("montecarlo").values(),
        table_files("errata")["md"],
    ]
