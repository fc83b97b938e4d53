# Study `paper` (Hoyt, Berrendorf et al. 2022): Figure 1 and Tables 1-4, and the
# published Figure 1 re-derived with exact moments.
# Logic: src/kgrank/paper.py and src/kgrank/published.py.


rule figure1:
    input:
        metrics=all_pairs(f"{RESULTS}/metrics/{{dataset}}/{{model}}.tsv"),
        stats=expand(f"{RESULTS}/data/{{dataset}}/stats.json", dataset=TRAIN_DATASETS),
    output:
        pdf=report(f"{RESULTS}/figures/figure1.pdf", caption="../report/figure1.rst", category="paper"),
        png=f"{RESULTS}/figures/figure1.png",
    params:
        caption=budget_caption(config["budget"], TRAIN_DATASETS, MODELS),
    log:
        f"{RESULTS}/logs/figures/figure1.log",
    benchmark:
        f"{RESULTS}/benchmarks/figures/figure1.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank figure1 --metrics {input.metrics} --stats {input.stats}"
        " --pdf {output.pdf} --png {output.png} --caption '{params.caption}' 2>&1 | tee {log}"


rule table4:
    input:
        stats=expand(f"{RESULTS}/data/{{dataset}}/stats.json", dataset=DATASETS),
    output:
        markdown=report(f"{RESULTS}/tables/table4.md", caption="../report/table4.rst", category="paper"),
        latex=f"{RESULTS}/tables/table4.tex",
    log:
        f"{RESULTS}/logs/tables/table4.log",
    benchmark:
        f"{RESULTS}/benchmarks/tables/table4.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank table4 --stats {input.stats} --markdown {output.markdown}"
        " --latex {output.latex} 2>&1 | tee {log}"


rule tables_1_to_3:
    output:
        table1=report(f"{RESULTS}/tables/table1.md", caption="../report/table1.rst", category="paper"),
        table2=report(f"{RESULTS}/tables/table2.md", caption="../report/table2.rst", category="paper"),
        table3=report(f"{RESULTS}/tables/table3.md", caption="../report/table3.rst", category="paper"),
        latex=expand(f"{RESULTS}/tables/table{{number}}.tex", number=(1, 2, 3)),
    params:
        out_dir=lambda wildcards, output: os.path.dirname(output.table1),
    log:
        f"{RESULTS}/logs/tables/tables_1_to_3.log",
    benchmark:
        f"{RESULTS}/benchmarks/tables/tables_1_to_3.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank tables-1-3 --out-dir {params.out_dir} 2>&1 | tee {log}"


rule published_audit:
    input:
        published=PUBLISHED_VALUES or [],
        moments=expand(f"{RESULTS}/moments/{{dataset}}/moments.tsv", dataset=DATASETS),
        checks=expand(f"{RESULTS}/moments/{{dataset}}/montecarlo.tsv", dataset=DATASETS),
    output:
        audit=f"{RESULTS}/published/audit.tsv",
        markdown=report(f"{RESULTS}/tables/published_audit.md", caption="../report/published.rst", category="paper"),
        pdf=report(f"{RESULTS}/figures/published_audit.pdf", caption="../report/published.rst", category="paper"),
        png=f"{RESULTS}/figures/published_audit.png",
    params:
        data_dir=f"{RESULTS}/data",
        filter_splits=" ".join(config["ranks"]["filter_splits"]),
    log:
        f"{RESULTS}/logs/published/audit.log",
    benchmark:
        f"{RESULTS}/benchmarks/published/audit.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank published --published {input.published} --moments {input.moments} --checks {input.checks}"
        " --data-dir {params.data_dir} --filter-splits {params.filter_splits} --audit {output.audit}"
        " --markdown {output.markdown} --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


rule figure1_published:
    input:
        audit=f"{RESULTS}/published/audit.tsv",
        metrics=all_pairs(f"{RESULTS}/metrics/{{dataset}}/{{model}}.tsv"),
        stats=expand(f"{RESULTS}/data/{{dataset}}/stats.json", dataset=DATASETS),
    output:
        pdf=report(f"{RESULTS}/figures/figure1_published.pdf", caption="../report/figure1_published.rst", category="paper"),
        png=f"{RESULTS}/figures/figure1_published.png",
    params:
        caption=budget_caption(config["budget"], TRAIN_DATASETS, MODELS),
    log:
        f"{RESULTS}/logs/figures/figure1_published.log",
    benchmark:
        f"{RESULTS}/benchmarks/figures/figure1_published.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank figure1-published --audit {input.audit} --metrics {input.metrics} --stats {input.stats}"
        " --pdf {output.pdf} --png {output.png} --caption 'Bottom row: {params.caption}' 2>&1 | tee {log}"


rule compare_published:
    input:
        metrics=all_pairs(f"{RESULTS}/metrics/{{dataset}}/{{model}}.tsv"),
        published=config.get("published_results") or [],
    output:
        table=f"{RESULTS}/published/comparison.tsv",
        markdown=report(
            f"{RESULTS}/tables/published_comparison.md", caption="../report/comparison.rst", category="paper"
        ),
        pdf=report(
            f"{RESULTS}/figures/published_comparison.pdf", caption="../report/comparison.rst", category="paper"
        ),
        png=f"{RESULTS}/figures/published_comparison.png",
    params:
        profile=config["profile"],
        caption=budget_caption(config["budget"], TRAIN_DATASETS, MODELS),
    log:
        f"{RESULTS}/logs/published/comparison.log",
    benchmark:
        f"{RESULTS}/benchmarks/published/comparison.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank compare-published --metrics {input.metrics} --published-results {input.published}"
        " --profile '{params.profile}' --out {output.table} --markdown {output.markdown}"
        " --pdf {output.pdf} --png {output.png} --caption '{params.caption}' 2>&1 | tee {log}"
