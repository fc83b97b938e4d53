# Study `moments` (unified-framework paper, Appendix B): the lookup table of every
# metric's expectation and variance under the random model per dataset, split and side;
# the Monte Carlo check of each; and the errata of the published closed forms.
# Logic: src/kgrank/studies/moments/. Settings: studies.moments
# (workflow/schemas/studies/moments.schema.yaml).

MOMENTS = settings("moments")


rule moments_table:
    input:
        **split_files(),
    output:
        moments_file(),
    params:
        dataset_dir=of_wildcards(dataset_dir),
        splits=" ".join(MOMENTS["splits"]),
        filter_splits=FILTER_SPLITS,
        hits=HITS,
    log:
        f"{RESULTS}/logs/moments/{{dataset}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/moments/{{dataset}}.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank moments-table --dataset-dir {params.dataset_dir} --dataset {wildcards.dataset}"
        " --splits {params.splits} --filter-splits {params.filter_splits} --hits {params.hits}"
        " --out {output} 2>&1 | tee {log}"


rule montecarlo:
    input:
        **split_files(),
    output:
        montecarlo_file(),
    params:
        dataset_dir=of_wildcards(dataset_dir),
        replicates=MOMENTS["replicates"],
        alpha=MOMENTS["familywise_alpha"],
        seed=config["seed"],
        filter_splits=FILTER_SPLITS,
        hits=HITS,
    log:
        f"{RESULTS}/logs/montecarlo/{{dataset}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/montecarlo/{{dataset}}.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank montecarlo --dataset-dir {params.dataset_dir} --dataset {wildcards.dataset}"
        " --replicates {params.replicates} --alpha {params.alpha} --seed {params.seed}"
        " --filter-splits {params.filter_splits} --hits {params.hits} --out {output} 2>&1 | tee {log}"


rule montecarlo_figure:
    input:
        all_datasets(montecarlo_file),
    output:
        pdf=report(
            figure_files("montecarlo")["pdf"], caption="../../report/montecarlo.rst", category="moments"
        ),
        png=figure_files("montecarlo")["png"],
    log:
        f"{RESULTS}/logs/figures/montecarlo.log",
    benchmark:
        f"{RESULTS}/benchmarks/figures/montecarlo.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank montecarlo-figure --checks {input} --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


rule errata:
    output:
        check=f"{RESULTS}/moments/formula_check.tsv",
        errata=f"{RESULTS}/tables/errata.tsv",
        markdown=report(
            f"{RESULTS}/tables/errata.md", caption="../../report/errata.rst", category="moments"
        ),
    params:
        seed=config["seed"],
        replicates=MOMENTS["formula_replicates"],
    log:
        f"{RESULTS}/logs/tables/errata.log",
    benchmark:
        f"{RESULTS}/benchmarks/tables/errata.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank errata --replicates {params.replicates} --seed {params.seed} --check {output.check}"
        " --errata {output.errata} --markdown {output.markdown} 2>&1 | tee {log}"


# Light rules run where Snakemake runs, not as cluster jobs.
localrules:
    montecarlo_figure,
    errata,


if enabled("moments"):
    TARGETS += [
        *all_datasets(moments_file),
        *figure_files("montecarlo").values(),
        f"{RESULTS}/tables/errata.md",
    ]
