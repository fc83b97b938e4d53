# Study `paper` (Hoyt, Berrendorf et al. 2022): Figure 1 and Tables 1-4, the audit of
# the case study's published values, and our test metrics next to the published ones.
# Logic: src/kgrank/studies/paper/. Settings: studies.paper
# (workflow/schemas/studies/paper.schema.yaml). The audit reads the lookup tables and
# Monte Carlo checks of the `moments` study's rules.

PAPER = settings("paper")
PUBLISHED_VALUES = PAPER["published_values"]
PUBLISHED_RESULTS = PAPER["published_results"]


rule figure1:
    input:
        metrics=all_pairs(metrics_file),
        stats=all_datasets(stats_file, TRAIN_DATASETS),
    output:
        pdf=report(figure_files("figure1")["pdf"], caption="../../report/figure1.rst", category="paper"),
        png=figure_files("figure1")["png"],
    params:
        caption=BUDGET_CAPTION,
    log:
        f"{RESULTS}/logs/figures/figure1.log",
    benchmark:
        f"{RESULTS}/benchmarks/figures/figure1.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank figure1 --metrics {input.metrics} --stats {input.stats}"
        " --pdf {output.pdf} --png {output.png} --caption {params.caption:q} 2>&1 | tee {log}"


rule learning_curves:
    input:
        curves=all_pairs(lambda: f"{model_dir()}/learning_curve.tsv"),
    output:
        pdf=report(
            figure_files("learning_curves")["pdf"], caption="../../report/learning_curves.rst", category="paper"
        ),
        png=figure_files("learning_curves")["png"],
    params:
        caption=BUDGET_CAPTION,
    log:
        f"{RESULTS}/logs/figures/learning_curves.log",
    benchmark:
        f"{RESULTS}/benchmarks/figures/learning_curves.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank learning-curves --curves {input.curves} --pdf {output.pdf} --png {output.png}"
        " --caption {params.caption:q} 2>&1 | tee {log}"


rule table4:
    input:
        stats=all_datasets(stats_file),
    output:
        markdown=report(f"{RESULTS}/tables/table4.md", caption="../../report/table4.rst", category="paper"),
        latex=f"{RESULTS}/tables/table4.tex",
    log:
        f"{RESULTS}/logs/tables/table4.log",
    benchmark:
        f"{RESULTS}/benchmarks/tables/table4.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank table4 --stats {input.stats} --markdown {output.markdown}"
        " --latex {output.latex} 2>&1 | tee {log}"


rule tables_1_to_3:
    output:
        table1=report(f"{RESULTS}/tables/table1.md", caption="../../report/table1.rst", category="paper"),
        table2=report(f"{RESULTS}/tables/table2.md", caption="../../report/table2.rst", category="paper"),
        table3=report(f"{RESULTS}/tables/table3.md", caption="../../report/table3.rst", category="paper"),
        latex=expand(f"{RESULTS}/tables/table{{number}}.tex", number=(1, 2, 3)),
    params:
        out_dir=lambda wildcards, output: os.path.dirname(output.table1),
        candidates=PAPER["table2_reference"]["num_candidates"],
        ranks=PAPER["table2_reference"]["num_ranks"],
    log:
        f"{RESULTS}/logs/tables/tables_1_to_3.log",
    benchmark:
        f"{RESULTS}/benchmarks/tables/tables_1_to_3.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank tables-1-3 --out-dir {params.out_dir} --table2-candidates {params.candidates}"
        " --table2-ranks {params.ranks} 2>&1 | tee {log}"


rule published_audit:
    input:
        published=PUBLISHED_VALUES or [],
        moments=all_datasets(moments_file),
        checks=all_datasets(montecarlo_file),
    output:
        audit=f"{RESULTS}/published/audit.tsv",
        markdown=report(
            f"{RESULTS}/tables/published_audit.md", caption="../../report/published.rst", category="paper"
        ),
        pdf=report(
            figure_files("published_audit")["pdf"], caption="../../report/published.rst", category="paper"
        ),
        png=figure_files("published_audit")["png"],
    params:
        data_dir=f"{RESULTS}/data",
        filter_splits=FILTER_SPLITS,
    log:
        f"{RESULTS}/logs/published/audit.log",
    benchmark:
        f"{RESULTS}/benchmarks/published/audit.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank published --published {input.published} --moments {input.moments} --checks {input.checks}"
        " --data-dir {params.data_dir} --filter-splits {params.filter_splits} --audit {output.audit}"
        " --markdown {output.markdown} --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


rule figure1_published:
    input:
        audit=f"{RESULTS}/published/audit.tsv",
        metrics=all_pairs(metrics_file),
        stats=all_datasets(stats_file),
    output:
        pdf=report(
            figure_files("figure1_published")["pdf"],
            caption="../../report/figure1_published.rst",
            category="paper",
        ),
        png=figure_files("figure1_published")["png"],
    params:
        caption_bottom=f"Bottom row: {BUDGET_CAPTION}",
    log:
        f"{RESULTS}/logs/figures/figure1_published.log",
    benchmark:
        f"{RESULTS}/benchmarks/figures/figure1_published.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank figure1-published --audit {input.audit} --metrics {input.metrics} --stats {input.stats}"
        " --pdf {output.pdf} --png {output.png} --caption {params.caption_bottom:q} 2>&1 | tee {log}"


rule compare_published:
    input:
        metrics=all_pairs(metrics_file),
        published=PUBLISHED_RESULTS or [],
    output:
        table=f"{RESULTS}/published/comparison.tsv",
        markdown=report(
            f"{RESULTS}/tables/published_comparison.md",
            caption="../../report/comparison.rst",
            category="paper",
        ),
        pdf=report(
            figure_files("published_comparison")["pdf"],
            caption="../../report/comparison.rst",
            category="paper",
        ),
        png=figure_files("published_comparison")["png"],
    params:
        profile=config["profile"],
        caption=BUDGET_CAPTION,
    log:
        f"{RESULTS}/logs/published/comparison.log",
    benchmark:
        f"{RESULTS}/benchmarks/published/comparison.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank compare-published --metrics {input.metrics} --published-results {input.published}"
        " --profile '{params.profile}' --out {output.table} --markdown {output.markdown}"
        " --pdf {output.pdf} --png {output.png} --caption {params.caption:q} 2>&1 | tee {log}"


# Light rules run where Snakemake runs, not as cluster jobs.
localrules:
    figure1,
    learning_curves,
    table4,
    tables_1_to_3,
    published_audit,
    figure1_published,
    compare_published,


if enabled("paper"):
    # Every per-pair output is a target, so that deleting any of them (a model, a ranks
    # file) and rerunning remakes it and what depends on it, and nothing else.
    TARGETS += [
        *all_pairs(lambda: f"{model_dir()}/model.pt"),
        *all_pairs(rank_file),
        *all_pairs(metrics_file),
        *figure_files("figure1").values(),
        *figure_files("learning_curves").values(),
        f"{RESULTS}/tables/table4.md",
        f"{RESULTS}/tables/table4.tex",
        *expand(f"{RESULTS}/tables/table{{number}}.md", number=(1, 2, 3)),
    ]
    if PUBLISHED_RESULTS:
        TARGETS += [f"{RESULTS}/tables/published_comparison.md", figure_files("published_comparison")["pdf"]]
    if PUBLISHED_VALUES:
        TARGETS += [
            f"{RESULTS}/tables/published_audit.md",
            figure_files("published_audit")["pdf"],
            *figure_files("figure1_published").values(),
        ]
