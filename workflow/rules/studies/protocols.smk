# Study `protocols` (issue #31): the field's open questions about the evaluation protocol,
# one part per block below, each with a key studies.protocols.<part> in the schema, rules
# protocols_<part>... and its TARGETS: part 3, the weighted geometric mean rank (Tiwari,
# Bansal & Rivero 2021) with exact moments and its Monte Carlo check on each dataset's
# candidate counts; part 1, sampled negatives; part 2, ties.
# Logic: src/kgrank/studies/protocols/. Settings: studies.protocols
# (src/kgrank/schemas/studies/protocols.schema.yaml).
import kgrank.studies.protocols.settings as protocols_settings

PROTOCOLS = settings("protocols")
PROTOCOLS_DIR = f"{RESULTS}/protocols"


# --- part 3: weighted geometric mean rank ---------------------------------------------

PROTOCOLS_WEIGHTED_TABLES = {
    "values": table_files(protocols_settings.WEIGHTED_TABLE),
    "check": table_files(protocols_settings.WEIGHTED_CHECK_TABLE),
}
PROTOCOLS_WEIGHTED_FIGURE = figure_files(protocols_settings.WEIGHTED_FIGURE)


rule protocols_weighted:
    input:
        evaluated_pairs(rank_file),
    output:
        table=f"{RESULTS}/{protocols_settings.WEIGHTED_VALUES}",
        markdown=report(
            PROTOCOLS_WEIGHTED_TABLES["values"]["md"],
            caption="../../report/protocols_weighted.rst",
            category="protocols",
        ),
        latex=PROTOCOLS_WEIGHTED_TABLES["values"]["tex"],
    params:
        settings=command_settings("protocols", "protocols-weighted"),
    # exact moments per pair, scheme and side: seconds per pair on FB15k-237's ~40k tasks
    resources:
        mem_mb=4000,
        runtime=30,
    log:
        log_file("protocols", "weighted"),
    benchmark:
        benchmark_file("protocols", "weighted")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank protocols-weighted --ranks {input} --settings {params.settings:q} --out {output.table}"
        " --markdown {output.markdown} --latex {output.latex} 2>&1 | tee {log}"


# The candidate counts of a dataset are the model's business only through filtering, which
# is the same for every trained model: one rank table per dataset gives them.
rule protocols_weighted_check:
    input:
        [
            rank_file(dataset, model)
            for dataset, model in protocols_settings.dataset_representatives(TRAIN_DATASETS, MODELS)
        ],
    output:
        table=f"{RESULTS}/{protocols_settings.WEIGHTED_CHECK}",
        markdown=report(
            PROTOCOLS_WEIGHTED_TABLES["check"]["md"],
            caption="../../report/protocols_weighted_montecarlo.rst",
            category="protocols",
        ),
        latex=PROTOCOLS_WEIGHTED_TABLES["check"]["tex"],
    params:
        options=config_options("protocols-weighted-check"),
        settings=command_settings("protocols", "protocols-weighted-check"),
    resources:
        mem_mb=4000,
        runtime=30,
    log:
        log_file("protocols", "weighted_check"),
    benchmark:
        benchmark_file("protocols", "weighted_check")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank protocols-weighted-check {params.options} --ranks {input} --settings {params.settings:q}"
        " --out {output.table} --markdown {output.markdown} --latex {output.latex} 2>&1 | tee {log}"


rule protocols_weighted_figure:
    input:
        weighted=rules.protocols_weighted.output.table,
    output:
        pdf=report(
            PROTOCOLS_WEIGHTED_FIGURE["pdf"],
            caption="../../report/protocols_weighted_figure.rst",
            category="protocols",
        ),
        png=PROTOCOLS_WEIGHTED_FIGURE["png"],
    params:
        caption=EVALUATED_CAPTION,
    log:
        log_file("protocols", "weighted_figure"),
    benchmark:
        benchmark_file("protocols", "weighted_figure")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank protocols-weighted-figure --weighted {input.weighted} --caption {params.caption:q}"
        " --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


# Light rules run where Snakemake runs, not as cluster jobs.
localrules:
    protocols_weighted_figure,


if enabled("protocols") and protocols_settings.part_enabled(PROTOCOLS, "weighted"):
    TARGETS += [
        *(files["md"] for files in PROTOCOLS_WEIGHTED_TABLES.values()),
        *PROTOCOLS_WEIGHTED_FIGURE.values(),
    ]


# --- part 1: sampled negatives ---------------------------------------------------------
# Estimators of the full MRR and Hits@10 from k sampled negatives per task, with exact
# moments over the hypergeometric draw, on every evaluated pair's full ranks; and, for the
# datasets in studies.protocols.sampled.fixed_set, the rank engine's fixed set of k
# non-answers per query shared by every trained system and PyKEEN folder (OGB's protocol).

PROTOCOLS_SAMPLED = PROTOCOLS["sampled"]
PROTOCOLS_SAMPLED_FIXED_SET = protocols_settings.fixed_set_pairs(
    PROTOCOLS_SAMPLED["fixed_set"], TRAIN_DATASETS, SCORED_PAIRS, KNOWN_ENTITY_COUNTS
)
RESCORED_IN[f"protocols: {protocols_settings.FIXED_SET_PART}"] = [
    (dataset, model) for dataset, model, _ in PROTOCOLS_SAMPLED_FIXED_SET
    if protocols_settings.part_enabled(PROTOCOLS, "sampled")
]
PROTOCOLS_SAMPLED_TABLE = table_files(protocols_settings.SAMPLED_TABLE)
PROTOCOLS_SAMPLED_FIGURE = figure_files(protocols_settings.SAMPLED_FIGURE)


rule protocols_sampled:
    input:
        ranks=evaluated_pairs(rank_file),
        fixed_set=[
            sampled_rank_file(dataset, model, candidates)
            for dataset, model, candidates in PROTOCOLS_SAMPLED_FIXED_SET
        ],
    output:
        table=f"{RESULTS}/{protocols_settings.SAMPLED_VALUES}",
        agreement=f"{RESULTS}/{protocols_settings.SAMPLED_AGREEMENT}",
        markdown=report(
            PROTOCOLS_SAMPLED_TABLE["md"],
            caption="../../report/protocols_sampled.rst",
            category="protocols",
        ),
        latex=PROTOCOLS_SAMPLED_TABLE["tex"],
    params:
        options=config_options("protocols-sampled"),
        settings=command_settings("protocols", "protocols-sampled"),
        profile=config["profile"],
    # exact moments on every pair, k and estimator: ~3 minutes on 2 CPU cores for the laptop
    # config (FB15k-237 dominates; the corrected estimator's vectors at k <= 100 a minute of it)
    resources:
        mem_mb=4000,
        runtime=60,
    log:
        log_file("protocols", "sampled"),
    benchmark:
        benchmark_file("protocols", "sampled")
    conda:
        "../../envs/kgrank.yaml"
    # one BLAS thread: multithreaded BLAS was 15x slower on the corrected estimator's systems
    shell:
        "OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1"
        " kgrank protocols-sampled {params.options} --ranks {input.ranks} --fixed-set {input.fixed_set}"
        " --settings {params.settings:q} --profile {params.profile:q}"
        " --out {output.table} --agreement {output.agreement}"
        " --markdown {output.markdown} --latex {output.latex} 2>&1 | tee {log}"


rule protocols_sampled_figure:
    input:
        estimates=rules.protocols_sampled.output.table,
    output:
        pdf=report(
            PROTOCOLS_SAMPLED_FIGURE["pdf"],
            caption="../../report/protocols_sampled_figure.rst",
            category="protocols",
        ),
        png=PROTOCOLS_SAMPLED_FIGURE["png"],
    params:
        caption=EVALUATED_CAPTION,
    log:
        log_file("protocols", "sampled_figure"),
    benchmark:
        benchmark_file("protocols", "sampled_figure")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank protocols-sampled-figure --estimates {input.estimates} --caption {params.caption:q}"
        " --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


localrules:
    protocols_sampled_figure,


if enabled("protocols") and protocols_settings.part_enabled(PROTOCOLS, "sampled"):
    TARGETS += [PROTOCOLS_SAMPLED_TABLE["md"], *PROTOCOLS_SAMPLED_FIGURE.values()]


# --- part 2: ties ----------------------------------------------------------------------
# Rank widths of every evaluated pair's rank table; per scored pair a scoring pass under
# the model, quantised and constant scorers: ranks under each tie tolerance, and trec_eval's
# IR measures under renamed entities against the tie-neutral ones (McSherry & Najork 2008).

PROTOCOLS_TIES_PAIR = f"{RESULTS}/{protocols_settings.TIES_PAIR}"
PROTOCOLS_TIES_TABLE = table_files(protocols_settings.TIES_TABLE)
RESCORED_IN[f"protocols: {protocols_settings.TIE_RESCORING_PART}"] = (
    SCORED_PAIRS if protocols_settings.part_enabled(PROTOCOLS, "ties") else []
)
PROTOCOLS_TIES_FIGURE = figure_files(protocols_settings.TIES_FIGURE)


rule protocols_ties_pair:
    input:
        unpack(scoring_inputs),
        **split_files(),
    output:
        PROTOCOLS_TIES_PAIR,
    wildcard_constraints:
        model=SCORED_MODEL,
    params:
        options=config_options("protocols-ties-pair"),
        model_dir=scoring_model_dir,
        dataset_dir=of_wildcards(dataset_dir),
        settings=command_settings("protocols", "protocols-ties-pair"),
        profile=config["profile"],
    threads: 1
    # laptop profile, measured on a shared 2-core machine with random scores of FB15k-237's
    # and WN18RR's sizes (300 test triples): ~7 s and ~20 s CPU per pair, Nations ~7 s
    # (start-up); trec_eval through ir-measures costs ~7.5 µs per run row
    resources:
        mem_mb=4000,
        runtime=30,
    log:
        log_file("protocols", "ties/{dataset}/{model}"),
    benchmark:
        benchmark_file("protocols", "ties/{dataset}/{model}")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank protocols-ties-pair {params.options} --dataset {wildcards.dataset} --model {wildcards.model}"
        " --dataset-dir {params.dataset_dir} --model-dir {params.model_dir}"
        " --settings {params.settings:q} --profile {params.profile:q} --threads {threads}"
        " --out {output} 2>&1 | tee {log}"


rule protocols_ties:
    input:
        ranks=evaluated_pairs(rank_file),
        pairs=[PROTOCOLS_TIES_PAIR.format(dataset=dataset, model=model) for dataset, model in SCORED_PAIRS],
    output:
        table=f"{RESULTS}/{protocols_settings.TIES_VALUES}",
        widths=f"{RESULTS}/{protocols_settings.TIES_WIDTHS}",
        markdown=report(
            PROTOCOLS_TIES_TABLE["md"],
            caption="../../report/protocols_ties.rst",
            category="protocols",
        ),
        latex=PROTOCOLS_TIES_TABLE["tex"],
    params:
        profile=config["profile"],
    log:
        log_file("protocols", "ties"),
    benchmark:
        benchmark_file("protocols", "ties")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank protocols-ties --ranks {input.ranks} --pairs {input.pairs} --profile {params.profile:q}"
        " --out {output.table} --widths {output.widths}"
        " --markdown {output.markdown} --latex {output.latex} 2>&1 | tee {log}"


rule protocols_ties_figure:
    input:
        ties=rules.protocols_ties.output.table,
    output:
        pdf=report(
            PROTOCOLS_TIES_FIGURE["pdf"],
            caption="../../report/protocols_ties_figure.rst",
            category="protocols",
        ),
        png=PROTOCOLS_TIES_FIGURE["png"],
    params:
        caption=EVALUATED_CAPTION,
    log:
        log_file("protocols", "ties_figure"),
    benchmark:
        benchmark_file("protocols", "ties_figure")
    conda:
        "../../envs/kgrank.yaml"
    shell:
        "kgrank protocols-ties-figure --ties {input.ties} --caption {params.caption:q}"
        " --pdf {output.pdf} --png {output.png} 2>&1 | tee {log}"


localrules:
    protocols_ties,
    protocols_ties_figure,


if enabled("protocols") and protocols_settings.part_enabled(PROTOCOLS, "ties"):
    TARGETS += [PROTOCOLS_TIES_TABLE["md"], *PROTOCOLS_TIES_FIGURE.values()]
