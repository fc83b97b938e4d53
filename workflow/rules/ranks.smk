# Stage 3: the filtered rank of every test triple, both sides, every rank variant.


rule ranks:
    input:
        unpack(scoring_inputs),
        **split_files(),
    output:
        rank_file(),
    params:
        options=config_options("ranks"),
        model_dir=scoring_model_dir,
        dataset_dir=of_wildcards(dataset_dir),
        sampled="",
    priority: ranks_priority
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    log:
        log_file("ranks", "{dataset}/{model}"),
    benchmark:
        benchmark_file("ranks", "{dataset}/{model}")
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank ranks {params.options} --dataset-dir {params.dataset_dir} --model-dir {params.model_dir}"
        " --out {output} --threads {threads} {params.sampled} 2>&1 | tee {log}"


# Sampled evaluation: each true entity against k random candidates that are not known
# answers (num_candidates = k + 1), for the k listed in ranks.sampled_candidates or any
# k asked for by file name, for every trained pair and external PyKEEN folder. A k that
# would keep every candidate of a dataset stops the plan (where the dataset's entity count
# is known yet), else the ranks job.
check_sampled_candidates(config["ranks"]["sampled_candidates"], KNOWN_ENTITY_COUNTS, CONFIG_SOURCE)
use rule ranks as sampled_ranks with:
    output:
        sampled_rank_file(),
    wildcard_constraints:
        candidates=r"[1-9][0-9]*",
        model=SCORED_MODEL,
    # the keyword params named here replace ranks', the others stay
    params:
        sampled=lambda wildcards: f"--sampled-candidates {wildcards.candidates}",
    log:
        log_file("ranks", "{dataset}/{model}.sampled-{candidates}"),
    benchmark:
        benchmark_file("ranks", "{dataset}/{model}.sampled-{candidates}")


# A further training run (comparison.seeds): its model ranked with its own seed.
use rule ranks as ranks_run with:
    input:
        model=f"{run_model_dir()}/model.pt",
        config=f"{run_model_dir()}/config.json",
        **split_files(),
    output:
        run_rank_file(),
    wildcard_constraints:
        run=r"[0-9]+",
    # the keyword params named here replace ranks', the others stay
    params:
        model_dir=of_wildcards(run_model_dir),
        options=lambda wildcards: config_options("ranks", seed=wildcards.run),
    log:
        log_file("ranks", "{dataset}/{model}.seed-{run}"),
    benchmark:
        benchmark_file("ranks", "{dataset}/{model}.seed-{run}")


# A system kgrank did not train: its rank table, its PyKEEN folder's ranks or its score
# matrix's ranks, through `kgrank evaluate` (which also logs its metrics), in the same
# format and with the same filter and seed as a trained model's.
if EXTERNAL_PAIRS:

    rule external_ranks:
        input:
            **split_files(),
            system=external_inputs,
        output:
            rank_file(),
        wildcard_constraints:
            model="|".join(EXTERNAL_NAMES),
        params:
            options=config_options("evaluate"),
            dataset_dir=of_wildcards(dataset_dir),
            system=external_arguments,
        threads: 1
        resources:
            mem_mb=4000,
            runtime=60,
        log:
            log_file("ranks", "{dataset}/{model}"),
        benchmark:
            benchmark_file("ranks", "{dataset}/{model}")
        conda:
            "../envs/kgrank.yaml"
        shell:
            "kgrank evaluate {params.options} --dataset {params.dataset_dir} {params.system} --name {wildcards.model}"
            " --ranks-out {output} --threads {threads} --quiet 2>&1 | tee {log}"


# Sampled rank files named in the config are asked for by name, whatever study runs.
RESCORED_IN[SAMPLED_RANKS_PART] = SCORED_PAIRS if config["ranks"]["sampled_candidates"] else []
TARGETS += [
    sampled_rank_file(dataset, model, candidates)
    for candidates in config["ranks"]["sampled_candidates"]
    for dataset, model in SCORED_PAIRS
]
