# Stage 2: train every (dataset, model) pair with its published hyperparameters,
# within the configured budget (epoch caps, and a cheaper training loop where the
# config names one).


rule train:
    input:
        **split_files(),
        hyperparameters=hyperparameters_file,
    output:
        model=f"{model_dir()}/model.pt",
        config=f"{model_dir()}/config.json",
        losses=f"{model_dir()}/losses.tsv",
        summary=f"{model_dir()}/training.json",
        curve=f"{model_dir()}/learning_curve.tsv",
    params:
        options=config_options("train"),
        out_dir=of_wildcards(model_dir),
        dataset_dir=of_wildcards(dataset_dir),
        budget=budget_arguments,
    priority: train_priority
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    log:
        log_file("train", "{dataset}/{model}"),
    benchmark:
        benchmark_file("train", "{dataset}/{model}")
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank train {params.options} --dataset-dir {params.dataset_dir} --hyperparameters {input.hyperparameters}"
        " --out-dir {params.out_dir} {params.budget} --threads {threads} 2>&1 | tee {log}"


# A further training run of a trained pair (comparison.seeds): the same training with the
# run's seed, in its own folder.
use rule train as train_run with:
    output:
        model=f"{run_model_dir()}/model.pt",
        config=f"{run_model_dir()}/config.json",
        losses=f"{run_model_dir()}/losses.tsv",
        summary=f"{run_model_dir()}/training.json",
        curve=f"{run_model_dir()}/learning_curve.tsv",
    wildcard_constraints:
        run=r"[0-9]+",
    priority: run_train_priority
    # the keyword params named here replace train's, the others stay
    params:
        out_dir=of_wildcards(run_model_dir),
        options=lambda wildcards: config_options("train", seed=wildcards.run),
    log:
        log_file("train", "{dataset}/{model}.seed-{run}"),
    benchmark:
        benchmark_file("train", "{dataset}/{model}.seed-{run}")
