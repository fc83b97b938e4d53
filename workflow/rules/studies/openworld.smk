# Study `openworld` (Yang, Lin & Zhang 2022): the open-world simulation against its closed
# form, the probability of an inverted comparison, which metrics saturate, and the
# family-tree experiment (trained models on sparse and on full test answers).
# Logic: src/kgrank/studies/openworld/. Settings: studies.openworld
# (workflow/schemas/studies/openworld.schema.yaml).
import json

from kgrank.studies.openworld.settings import check_family_tree_settings, family_tree_caption

OPENWORLD = settings("openworld")
SIMULATION = OPENWORLD["simulation"]
INCONSISTENCY = OPENWORLD["inconsistency"]
SATURATION = OPENWORLD["saturation"]
FAMILY_TREE = OPENWORLD["family_tree"]
if enabled("openworld"):
    check_family_tree_settings(FAMILY_TREE)
OPENWORLD_DIR = f"{RESULTS}/openworld"
WORLD_ARGUMENTS = (
    f"--entities {SIMULATION['entities']} --answers {SIMULATION['answers']}"
    f" --densities {' '.join(map(str, SIMULATION['densities']))} --seed {config['seed']}"
)
# Relative to the repository (the Snakefile's folder), like hyperparameters_dir, so that
# a run in another working directory (--directory) still finds the data beside the clone.
FAMILY_TREE_ROOT = Path(workflow.basedir) / FAMILY_TREE["root"]
CHECKPOINTS = f"{OPENWORLD_DIR}/family_tree/density-{{density}}/{{configuration}}.tsv"
FAMILY_TREE_CAPTION = family_tree_caption(config["profile"], FAMILY_TREE)


rule openworld_simulate:
    output:
        grid=f"{OPENWORLD_DIR}/simulation.tsv",
        precision=f"{OPENWORLD_DIR}/simulation_precision.tsv",
        markdown=report(
            f"{RESULTS}/tables/openworld_approximation.md",
            caption="../../report/openworld_approximation.rst",
            category="openworld",
        ),
        latex=f"{RESULTS}/tables/openworld_approximation.tex",
    params:
        world=WORLD_ARGUMENTS,
        strength=" ".join(str(SIMULATION["strength"][key]) for key in ("start", "stop", "step")),
        correlations=" ".join(map(str, SIMULATION["correlations"])),
        queries=SIMULATION["queries"],
        precision=(
            f"--precision-queries {SIMULATION['precision_queries']}"
            f" --precision-step {SIMULATION['precision_step']}"
        ),
    log:
        f"{RESULTS}/logs/openworld/simulate.log",
    benchmark:
        f"{RESULTS}/benchmarks/openworld/simulate.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-simulate {params.world} --strength {params.strength}"
        " --correlations {params.correlations} --queries {params.queries} {params.precision}"
        " --out {output.grid} --precision-out {output.precision}"
        " --markdown {output.markdown} --latex {output.latex} 2>&1 | tee {log}"


rule openworld_inconsistency:
    output:
        inversions=f"{OPENWORLD_DIR}/inversions.tsv",
        needed=f"{OPENWORLD_DIR}/queries_needed.tsv",
    params:
        world=WORLD_ARGUMENTS,
        weaker=" ".join(map(str, INCONSISTENCY["weaker_strengths"])),
        gaps=" ".join(map(str, INCONSISTENCY["gaps"])),
        query_counts=" ".join(map(str, INCONSISTENCY["query_counts"])),
        replicates=INCONSISTENCY["replicates"],
    log:
        f"{RESULTS}/logs/openworld/inconsistency.log",
    benchmark:
        f"{RESULTS}/benchmarks/openworld/inconsistency.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-inconsistency {params.world} --weaker-strengths {params.weaker}"
        " --gaps {params.gaps} --query-counts {params.query_counts}"
        " --replicates {params.replicates} --out {output.inversions} --needed {output.needed}"
        " 2>&1 | tee {log}"


rule openworld_saturation:
    input:
        grid=rules.openworld_simulate.output.grid,
        inversions=rules.openworld_inconsistency.output.inversions,
    output:
        table=f"{OPENWORLD_DIR}/saturation.tsv",
        markdown=report(
            f"{RESULTS}/tables/openworld_saturation.md",
            caption="../../report/openworld_saturation.rst",
            category="openworld",
        ),
        latex=f"{RESULTS}/tables/openworld_saturation.tex",
    params:
        low=SATURATION["low"],
        high=SATURATION["high"],
        half_width=SATURATION["half_width"],
        queries=SATURATION["comparison_queries"],
    log:
        f"{RESULTS}/logs/openworld/saturation.log",
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-saturation --grid {input.grid} --inversions {input.inversions}"
        " --low {params.low} --high {params.high} --half-width {params.half_width}"
        " --comparison-queries {params.queries} --out {output.table} --markdown {output.markdown}"
        " --latex {output.latex} 2>&1 | tee {log}"


# One model per density and configuration: the graph variants share the training triples
# and differ only in which test answers are sparse, so each checkpoint is evaluated on the
# full answers and on every variant's sparse ones.
rule openworld_family_tree:
    input:
        expand(
            f"{FAMILY_TREE_ROOT}/{{graph}}/density-{{{{density}}}}/{{split}}.tsv",
            graph=FAMILY_TREE["graphs"],
            split=["train", "test_answers"],
        ),
    output:
        CHECKPOINTS,
    wildcard_constraints:
        density=r"\d+",
    params:
        folders=lambda wildcards: " ".join(
            f"{graph}={FAMILY_TREE_ROOT}/{graph}/density-{wildcards.density}" for graph in FAMILY_TREE["graphs"]
        ),
        pipeline=lambda wildcards: json.dumps(FAMILY_TREE["configurations"][wildcards.configuration]),
        every=FAMILY_TREE["evaluate_every"],
        seed=config["seed"],
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    log:
        f"{RESULTS}/logs/openworld/family_tree/density-{{density}}/{{configuration}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/openworld/family_tree/density-{{density}}/{{configuration}}.tsv"
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-family-tree --graph-folders {params.folders}"
        " --density {wildcards.density} --configuration {wildcards.configuration}"
        " --pipeline {params.pipeline:q} --evaluate-every {params.every} --seed {params.seed}"
        " --threads {threads} --out {output} --quiet 2>&1 | tee {log}"


FAMILY_TREE_RUNS = expand(
    CHECKPOINTS,
    density=FAMILY_TREE["densities"],
    configuration=list(FAMILY_TREE["configurations"]),
)


rule openworld_inversions:
    input:
        FAMILY_TREE_RUNS,
    output:
        table=f"{OPENWORLD_DIR}/family_tree_inversions.tsv",
        markdown=report(
            f"{RESULTS}/tables/openworld_inversions.md",
            caption="../../report/openworld_inversions.rst",
            category="openworld",
        ),
        latex=f"{RESULTS}/tables/openworld_inversions.tex",
    params:
        caption=FAMILY_TREE_CAPTION,
    log:
        f"{RESULTS}/logs/openworld/inversions.log",
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
        f"{RESULTS}/logs/figures/openworld_simulation.log",
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
        f"{RESULTS}/logs/figures/openworld_inconsistency.log",
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
        f"{RESULTS}/logs/figures/openworld_metrics.log",
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank openworld-figure --kind metrics --grid {input.grid} --saturation {input.saturation}"
        " --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


rule openworld_family_tree_figure:
    input:
        FAMILY_TREE_RUNS,
    output:
        pdf=report(
            figure_files("openworld_family_tree")["pdf"],
            caption="../../report/openworld_family_tree.rst",
            category="openworld",
        ),
        png=figure_files("openworld_family_tree")["png"],
    params:
        caption=FAMILY_TREE_CAPTION,
    log:
        f"{RESULTS}/logs/figures/openworld_family_tree.log",
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
        f"{RESULTS}/tables/openworld_approximation.md",
        f"{RESULTS}/tables/openworld_saturation.md",
        *figure_files("openworld_simulation").values(),
        *figure_files("openworld_inconsistency").values(),
        *figure_files("openworld_metrics").values(),
    ]
    if FAMILY_TREE["enabled"]:
        TARGETS += [
            f"{RESULTS}/tables/openworld_inversions.md",
            *figure_files("openworld_family_tree").values(),
        ]
