# Stage 5: is one system better than another, on each dataset and across them? `kgrank
# compare` on the ranks of every evaluated system (every run of a trained pair, every
# external system) of every trained dataset.


# The systems are evaluated where a study that takes them runs: then every further training
# run (comparison.seeds) gets its metric table, and the comparison runs when it is switched
# on and some dataset has two systems (`kgrank compare` needs them).
EVALUATING = any(enabled(study) for study in external_studies())
if EVALUATING:
    TARGETS += [run_metrics_file(*run) for run in RUN_PAIRS]
COMPARED = (
    EVALUATING
    and config["comparison"]["enabled"]
    and any(len({name for name, _ in systems}) > 1 for systems in compared_systems().values())
)

if COMPARED:

    rule compare:
        input:
            ranks=[path for systems in compared_systems().values() for _, path in systems],
            splits=[path for dataset in compared_systems() for path in split_files(dataset).values()],
        output:
            pairs=f"{RESULTS}/comparison/pairs.tsv",
            systems=f"{RESULTS}/comparison/systems.tsv",
            summary=f"{RESULTS}/comparison/summary.tsv",
            markdown=report(table_files("comparison")["md"], category="comparison"),
            latex=table_files("comparison")["tex"],
        params:
            options=config_options("compare"),
            systems=compare_arguments,
            out_dir=lambda wildcards, output: os.path.dirname(output.pairs),
        threads: 1
        resources:
            mem_mb=4000,
            runtime=30,
        log:
            log_file("compare", "comparison"),
        benchmark:
            benchmark_file("compare", "comparison")
        conda:
            "../envs/kgrank.yaml"
        shell:
            "kgrank compare {params.options} {params.systems}"
            " --quiet --out-dir {params.out_dir} --markdown {output.markdown}"
            " --latex {output.latex} 2>&1 | tee {log}"

    TARGETS += table_files("comparison").values()

# the external systems' table: every external system joins the comparison where it runs
RESCORED_IN[COMPARISON_PART] = EXTERNAL_PAIRS if COMPARED else []
