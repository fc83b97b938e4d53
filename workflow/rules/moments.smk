# Study `moments` (unified-framework paper, Appendix B): the lookup table of every
# metric's expectation and variance under the random model per dataset, split and side;
# the Monte Carlo check of each; and the errata of the published closed forms.
# Logic: src/kgrank/montecarlo.py and src/kgrank/errata.py.


rule moments_table:
    input:
        train=f"{RESULTS}/data/{{dataset}}/train.tsv",
        valid=f"{RESULTS}/data/{{dataset}}/valid.tsv",
        test=f"{RESULTS}/data/{{dataset}}/test.tsv",
    output:
        f"{RESULTS}/moments/{{dataset}}/moments.tsv",
    params:
        dataset_dir=lambda wildcards: f"{RESULTS}/data/{wildcards.dataset}",
        filter_splits=" ".join(config["ranks"]["filter_splits"]),
        hits=" ".join(str(k) for k in config["metrics"]["hits"]),
    log:
        f"{RESULTS}/logs/moments/{{dataset}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/moments/{{dataset}}.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank moments-table --dataset-dir {params.dataset_dir} --dataset {wildcards.dataset}"
        " --filter-splits {params.filter_splits} --hits {params.hits} --out {output} 2>&1 | tee {log}"


rule montecarlo:
    input:
        train=f"{RESULTS}/data/{{dataset}}/train.tsv",
        valid=f"{RESULTS}/data/{{dataset}}/valid.tsv",
        test=f"{RESULTS}/data/{{dataset}}/test.tsv",
    output:
        f"{RESULTS}/moments/{{dataset}}/montecarlo.tsv",
    params:
        dataset_dir=lambda wildcards: f"{RESULTS}/data/{wildcards.dataset}",
        replicates=config["moments"]["replicates"],
        alpha=config["moments"]["familywise_alpha"],
        seed=config["seed"],
        filter_splits=" ".join(config["ranks"]["filter_splits"]),
        hits=" ".join(str(k) for k in config["metrics"]["hits"]),
    log:
        f"{RESULTS}/logs/montecarlo/{{dataset}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/montecarlo/{{dataset}}.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank montecarlo --dataset-dir {params.dataset_dir} --dataset {wildcards.dataset}"
        " --replicates {params.replicates} --alpha {params.alpha} --seed {params.seed}"
        " --filter-splits {params.filter_splits} --hits {params.hits} --out {output} 2>&1 | tee {log}"


rule montecarlo_figure:
    input:
        expand(f"{RESULTS}/moments/{{dataset}}/montecarlo.tsv", dataset=DATASETS),
    output:
        pdf=report(f"{RESULTS}/figures/montecarlo.pdf", caption="../report/montecarlo.rst", category="moments"),
        png=f"{RESULTS}/figures/montecarlo.png",
    log:
        f"{RESULTS}/logs/figures/montecarlo.log",
    benchmark:
        f"{RESULTS}/benchmarks/figures/montecarlo.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank montecarlo-figure --checks {input} --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


rule errata:
    output:
        check=f"{RESULTS}/moments/formula_check.tsv",
        errata=f"{RESULTS}/tables/errata.tsv",
        markdown=report(f"{RESULTS}/tables/errata.md", caption="../report/errata.rst", category="moments"),
    params:
        seed=config["seed"],
        replicates=config["moments"]["formula_replicates"],
    log:
        f"{RESULTS}/logs/tables/errata.log",
    benchmark:
        f"{RESULTS}/benchmarks/tables/errata.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank errata --replicates {params.replicates} --seed {params.seed} --check {output.check}"
        " --errata {output.errata} --markdown {output.markdown} 2>&1 | tee {log}"
