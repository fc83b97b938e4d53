# Study `openworld` (Yang, Lin & Zhang 2022): the open-world simulation against its closed
# form, the probability of an inverted comparison, which metrics saturate, and the
# family-tree experiment (trained models on sparse and on full test answers).
# Logic: src/kgrank/studies/openworld/. Settings: studies.openworld
# (src/kgrank/schemas/studies/openworld.schema.yaml).
import kgrank.studies.openworld.settings as openworld_settings

OPENWORLD = settings("openworld")
OPENWORLD_FAMILY_TREE = OPENWORLD["family_tree"]
# What the schema cannot say (fewer answers than entities, a grid that runs upwards, each
# family-tree configuration as a hyperparameter file) stops the plan, not a job.
if enabled("openworld"):
    openworld_settings.check_simulation_settings(OPENWORLD, CONFIG_SOURCE)
    openworld_settings.check_family_tree_settings(OPENWORLD_FAMILY_TREE, CONFIG_SOURCE)
OPENWORLD_DIR = f"{RESULTS}/openworld"
# Relative to the repository (the Snakefile's folder), like hyperparameters_dir, so that
# a run in another working directory (--directory) still finds the data beside the clone.
OPENWORLD_FAMILY_TREE_ROOT = Path(workflow.basedir) / OPENWORLD_FAMILY_TREE["root"]
# common.smk's hook: the scorecard reads the family tree's inversions only where written.
SCORECARD_MADE["openworld/family_tree_inversions.tsv"] = lambda path: bool(OPENWORLD_FAMILY_TREE["enabled"])
OPENWORLD_FAMILY_TREE_PRIORITY = lambda wildcards: scheduling.priority(
    openworld_settings.family_tree_seconds(
        OPENWORLD_FAMILY_TREE, OPENWORLD_FAMILY_TREE_ROOT, wildcards.density, wildcards.configuration
    )
)
if enabled("openworld"):
    openworld_settings.check_family_tree_folders(OPENWORLD_FAMILY_TREE, OPENWORLD_FAMILY_TREE_ROOT, CONFIG_SOURCE)
# The densities are fractions in the config, per cent in the data's and the outputs'
# folder names (0.65: density-65).
OPENWORLD_FAMILY_TREE_PERCENTAGES = openworld_settings.density_percentages(
    OPENWORLD_FAMILY_TREE["densities"]
)
OPENWORLD_CHECKPOINTS = f"{OPENWORLD_DIR}/family_tree/density-{{density}}/{{configuration}}.tsv"
OPENWORLD_FAMILY_TREE_CAPTION = openworld_settings.family_tree_caption(
    config["profile"], OPENWORLD_FAMILY_TREE
)
OPENWORLD_TABLES = {
    name: table_files(f"openworld_{name}") for name in ("approximation", "saturation", "inversions")
}


rule openworld_simulate:
    output:
        grid=f"{OPENWORLD_DIR}/simulation.tsv",
        precision=f"{OPENWORLD_DIR}/simulation_precision.tsv",
        markdown=report(
            OPENWORLD_TABLES["approximation"]["md"],
            caption="../../report/openworld_approximation.rst",
            category="openworld",
        ),
        latex=OPENWORLD_TABLES["approximation"]["tex"],
    params:
        options=config_options("openworld-simulate"),
        settings=command_settings("openworld", "openworld-simulate"),
    log:
        log_file("openworld", "simulate"),
    benchmark:
        benchmark_file("openworld", "simulate")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-simulate {params.options} --settings {params.settings:q}"
        " --out {output.grid} --precision-out {output.precision}"
        " --markdown {output.markdown} --latex {output.latex} 2>&1 | tee {log}"


rule openworld_inconsistency:
    output:
        inversions=f"{OPENWORLD_DIR}/inversions.tsv",
        needed=f"{OPENWORLD_DIR}/queries_needed.tsv",
    params:
        options=config_options("openworld-inconsistency"),
        settings=command_settings("openworld", "openworld-inconsistency"),
    log:
        log_file("openworld", "inconsistency"),
    benchmark:
        benchmark_file("openworld", "inconsistency")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-inconsistency {params.options} --settings {params.settings:q}"
        " --out {output.inversions} --needed {output.needed} 2>&1 | tee {log}"


rule openworld_saturation:
    input:
        grid=rules.openworld_simulate.output.grid,
        inversions=rules.openworld_inconsistency.output.inversions,
    output:
        table=f"{OPENWORLD_DIR}/saturation.tsv",
        markdown=report(
            OPENWORLD_TABLES["saturation"]["md"],
            caption="../../report/openworld_saturation.rst",
            category="openworld",
        ),
        latex=OPENWORLD_TABLES["saturation"]["tex"],
    params:
        settings=command_settings("openworld", "openworld-saturation"),
    log:
        log_file("openworld", "saturation"),
    benchmark:
        benchmark_file("openworld", "saturation")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-saturation --grid {input.grid} --inversions {input.inversions}"
        " --settings {params.settings:q} --out {output.table} --markdown {output.markdown}"
        " --latex {output.latex} 2>&1 | tee {log}"


# One model per density and configuration: the graph variants share the training triples
# and differ only in which test answers are sparse, so each checkpoint is evaluated on the
# full answers and on every variant's sparse ones.
rule openworld_family_tree:
    input:
        expand(
            f"{OPENWORLD_FAMILY_TREE_ROOT}/{{graph}}/density-{{{{density}}}}/{{split}}.tsv",
            graph=OPENWORLD_FAMILY_TREE["graphs"],
            split=[name.removesuffix(".tsv") for name in openworld_settings.FAMILY_TREE_FILES],
        ),
    output:
        OPENWORLD_CHECKPOINTS,
    wildcard_constraints:
        density=r"\d+",
    params:
        options=config_options("openworld-family-tree"),
        folders=lambda wildcards: " ".join(
            f"{graph}={OPENWORLD_FAMILY_TREE_ROOT}/{graph}/density-{wildcards.density}"
            for graph in OPENWORLD_FAMILY_TREE["graphs"]
        ),
        # the job's own configuration: adding another reruns none of this one's trainings
        settings=lambda wildcards: command_settings(
            "openworld", "openworld-family-tree", only={"family_tree.configurations": wildcards.configuration}
        ),
    priority: OPENWORLD_FAMILY_TREE_PRIORITY
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    log:
        log_file("openworld", "family_tree/density-{density}/{configuration}"),
    benchmark:
        benchmark_file("openworld", "family_tree/density-{density}/{configuration}")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-family-tree {params.options} --graph-folders {params.folders}"
        " --density {wildcards.density} --configuration {wildcards.configuration}"
        " --settings {params.settings:q} --threads {threads} --out {output} --quiet 2>&1 | tee {log}"


OPENWORLD_FAMILY_TREE_RUNS = expand(
    OPENWORLD_CHECKPOINTS,
    density=OPENWORLD_FAMILY_TREE_PERCENTAGES,
    configuration=list(OPENWORLD_FAMILY_TREE["configurations"]),
)


rule openworld_inversions:
    input:
        OPENWORLD_FAMILY_TREE_RUNS,
    output:
        table=f"{OPENWORLD_DIR}/family_tree_inversions.tsv",
        markdown=report(
            OPENWORLD_TABLES["inversions"]["md"],
            caption="../../report/openworld_inversions.rst",
            category="openworld",
        ),
        latex=OPENWORLD_TABLES["inversions"]["tex"],
    params:
        caption=OPENWORLD_FAMILY_TREE_CAPTION,
    log:
        log_file("openworld", "inversions"),
    benchmark:
        benchmark_file("openworld", "inversions")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-inversions --checkpoints {input} --out {output.table}"
        " --markdown {output.markdown} --latex {output.latex} --caption {params.caption:q} 2>&1 | tee {log}"


rule openworld_simulation_figure:
    input:
        grid=rules.openworld_simulate.output.grid,
    output:
        pdf=report(
            figure_files("openworld_simulation")["pdf"],
            caption="../../report/openworld_simulation.rst",
            category="openworld",
        ),
        png=figure_files("openworld_simulation")["png"],
    log:
        log_file("openworld", "simulation_figure"),
    benchmark:
        benchmark_file("openworld", "simulation_figure")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-figure --kind simulation --grid {input.grid}"
        " --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


rule openworld_inconsistency_figure:
    input:
        inversions=rules.openworld_inconsistency.output.inversions,
        needed=rules.openworld_inconsistency.output.needed,
    output:
        pdf=report(
            figure_files("openworld_inconsistency")["pdf"],
            caption="../../report/openworld_inconsistency.rst",
            category="openworld",
        ),
        png=figure_files("openworld_inconsistency")["png"],
    log:
        log_file("openworld", "inconsistency_figure"),
    benchmark:
        benchmark_file("openworld", "inconsistency_figure")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-figure --kind inconsistency --inversions {input.inversions}"
        " --needed {input.needed} --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


rule openworld_metrics_figure:
    input:
        grid=rules.openworld_simulate.output.grid,
        saturation=rules.openworld_saturation.output.table,
    output:
        pdf=report(
            figure_files("openworld_metrics")["pdf"],
            caption="../../report/openworld_metrics.rst",
            category="openworld",
        ),
        png=figure_files("openworld_metrics")["png"],
    log:
        log_file("openworld", "metrics_figure"),
    benchmark:
        benchmark_file("openworld", "metrics_figure")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-figure --kind metrics --grid {input.grid} --saturation {input.saturation}"
        " --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


rule openworld_family_tree_figure:
    input:
        OPENWORLD_FAMILY_TREE_RUNS,
    output:
        pdf=report(
            figure_files("openworld_family_tree")["pdf"],
            caption="../../report/openworld_family_tree.rst",
            category="openworld",
        ),
        png=figure_files("openworld_family_tree")["png"],
    params:
        caption=OPENWORLD_FAMILY_TREE_CAPTION,
    log:
        log_file("openworld", "family_tree_figure"),
    benchmark:
        benchmark_file("openworld", "family_tree_figure")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-figure --kind family-tree --checkpoints {input} --caption {params.caption:q}"
        " --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


# Light rules run where Snakemake runs, not as cluster jobs.
localrules:
    openworld_saturation,
    openworld_inversions,
    openworld_simulation_figure,
    openworld_inconsistency_figure,
    openworld_metrics_figure,
    openworld_family_tree_figure,


if enabled("openworld"):
    TARGETS += [
        OPENWORLD_TABLES["approximation"]["md"],
        OPENWORLD_TABLES["saturation"]["md"],
        *figure_files("openworld_simulation").values(),
        *figure_files("openworld_inconsistency").values(),
        *figure_files("openworld_metrics").values(),
    ]
    if OPENWORLD_FAMILY_TREE["enabled"]:
        TARGETS += [
            OPENWORLD_TABLES["inversions"]["md"],
            *figure_files("openworld_family_tree").values(),
        ]
