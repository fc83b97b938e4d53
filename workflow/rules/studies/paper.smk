# Study `paper` (Hoyt, Berrendorf et al. 2022): Figure 1 and Tables 1-4, the audit of
# the case study's published values, and our test metrics next to the published ones.
# Logic: src/kgrank/studies/paper/. Settings: studies.paper
# (src/kgrank/schemas/studies/paper.schema.yaml). The audit reads the lookup tables and
# Monte Carlo checks of the `moments` study's rules.
import kgrank.studies.paper.settings as paper_settings

PAPER_SETTINGS = settings("paper")
PAPER_PUBLISHED_VALUES = PAPER_SETTINGS["published_values"]
PAPER_PUBLISHED_RESULTS = PAPER_SETTINGS["published_results"]
PAPER_AUDIT = f"{RESULTS}/published/audit.tsv"
# common.smk's hook: the scorecard reads the audit and the comparison only where written.
SCORECARD_MADE["published/audit.tsv"] = lambda path: bool(PAPER_PUBLISHED_VALUES)
SCORECARD_MADE["published/comparison.tsv"] = lambda path: bool(PAPER_PUBLISHED_RESULTS)


rule paper_figure1:
    input:
        metrics=evaluated_pairs(metrics_file),
        stats=all_datasets(stats_file, TRAIN_DATASETS),
    output:
        pdf=report(figure_files("figure1")["pdf"], caption="../../report/figure1.rst", category="paper"),
        png=figure_files("figure1")["png"],
    params:
        caption=EVALUATED_CAPTION,
        settings=command_settings("paper", "paper-figure1"),
    log:
        log_file("paper", "figure1"),
    benchmark:
        benchmark_file("paper", "figure1")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank paper-figure1 --metrics {input.metrics} --stats {input.stats} --settings {params.settings:q}"
        " --pdf {output.pdf} --png {output.png} --caption {params.caption:q} 2>&1 | tee {log}"


rule paper_learning_curves:
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
        log_file("paper", "learning_curves"),
    benchmark:
        benchmark_file("paper", "learning_curves")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank paper-learning-curves --curves {input.curves} --pdf {output.pdf} --png {output.png}"
        " --caption {params.caption:q} 2>&1 | tee {log}"


rule paper_table4:
    input:
        stats=all_datasets(stats_file),
    output:
        markdown=report(table_files("table4")["md"], caption="../../report/table4.rst", category="paper"),
        latex=table_files("table4")["tex"],
    log:
        log_file("paper", "table4"),
    benchmark:
        benchmark_file("paper", "table4")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank paper-table4 --stats {input.stats} --markdown {output.markdown}"
        " --latex {output.latex} 2>&1 | tee {log}"


rule paper_tables_1_to_3:
    output:
        **{
            name: report(table_files(name)["md"], caption=f"../../report/{name}.rst", category="paper")
            for name in paper_settings.TABLES_1_TO_3
        },
        latex=[table_files(name)["tex"] for name in paper_settings.TABLES_1_TO_3],
    params:
        out_dir=lambda wildcards, output: os.path.dirname(output.table1),
        settings=command_settings("paper", "paper-tables-1-3"),
    log:
        log_file("paper", "tables_1_to_3"),
    benchmark:
        benchmark_file("paper", "tables_1_to_3")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank paper-tables-1-3 --out-dir {params.out_dir} --settings {params.settings:q} 2>&1 | tee {log}"


rule paper_published_audit:
    input:
        published=PAPER_PUBLISHED_VALUES or [],
        moments=all_datasets(moments_file),
        checks=all_datasets(montecarlo_file),
    output:
        audit=PAPER_AUDIT,
        markdown=report(
            table_files("published_audit")["md"], caption="../../report/published.rst", category="paper"
        ),
        pdf=report(
            figure_files("published_audit")["pdf"], caption="../../report/published.rst", category="paper"
        ),
        png=figure_files("published_audit")["png"],
    params:
        options=config_options("paper-published"),
        data_dir=f"{RESULTS}/data",
    log:
        log_file("paper", "published_audit"),
    benchmark:
        benchmark_file("paper", "published_audit")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank paper-published {params.options} --published {input.published} --moments {input.moments} --checks {input.checks}"
        " --data-dir {params.data_dir} --audit {output.audit}"
        " --markdown {output.markdown} --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


rule paper_figure1_published:
    input:
        audit=PAPER_AUDIT,
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
        settings=command_settings("paper", "paper-figure1-published"),
    log:
        log_file("paper", "figure1_published"),
    benchmark:
        benchmark_file("paper", "figure1_published")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank paper-figure1-published --audit {input.audit} --metrics {input.metrics} --stats {input.stats}"
        " --settings {params.settings:q} --pdf {output.pdf} --png {output.png}"
        " --caption {params.caption_bottom:q} 2>&1 | tee {log}"


rule paper_compare_published:
    input:
        metrics=all_pairs(metrics_file),
        published=PAPER_PUBLISHED_RESULTS or [],
    output:
        table=f"{RESULTS}/published/comparison.tsv",
        markdown=report(
            table_files("published_comparison")["md"],
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
        log_file("paper", "published_comparison"),
    benchmark:
        benchmark_file("paper", "published_comparison")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank paper-compare-published --metrics {input.metrics} --published-results {input.published}"
        " --profile '{params.profile}' --out {output.table} --markdown {output.markdown}"
        " --pdf {output.pdf} --png {output.png} --caption {params.caption:q} 2>&1 | tee {log}"


# Light rules run where Snakemake runs, not as cluster jobs.
localrules:
    paper_figure1,
    paper_learning_curves,
    paper_table4,
    paper_tables_1_to_3,
    paper_published_audit,
    paper_figure1_published,
    paper_compare_published,


if enabled("paper"):
    # Every per-pair output is a target, so that deleting any of them (a model, a ranks
    # file) and rerunning remakes it and what depends on it, and nothing else.
    TARGETS += [
        *all_pairs(lambda: f"{model_dir()}/model.pt"),
        *all_pairs(rank_file),
        *evaluated_pairs(metrics_file),
        *figure_files("figure1").values(),
        *figure_files("learning_curves").values(),
        *table_files("table4").values(),
        *(table_files(name)["md"] for name in paper_settings.TABLES_1_TO_3),
    ]
    if PAPER_PUBLISHED_RESULTS:
        TARGETS += [table_files("published_comparison")["md"], figure_files("published_comparison")["pdf"]]
    if PAPER_PUBLISHED_VALUES:
        TARGETS += [
            table_files("published_audit")["md"],
            figure_files("published_audit")["pdf"],
            *figure_files("figure1_published").values(),
        ]
