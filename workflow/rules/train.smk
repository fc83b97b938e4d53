# Stage 2: train every (dataset, model) pair with its published hyperparameters,
# capped by the configured budget.


rule train:
    input:
        train=f"{RESULTS}/data/{{dataset}}/train.tsv",
        valid=f"{RESULTS}/data/{{dataset}}/valid.tsv",
        test=f"{RESULTS}/data/{{dataset}}/test.tsv",
        hyperparameters=hyperparameters_file,
    output:
        model=f"{RESULTS}/models/{{dataset}}/{{model}}/model.pt",
        config=f"{RESULTS}/models/{{dataset}}/{{model}}/config.json",
        losses=f"{RESULTS}/models/{{dataset}}/{{model}}/losses.tsv",
        summary=f"{RESULTS}/models/{{dataset}}/{{model}}/training.json",
    params:
        out_dir=lambda wildcards: f"{RESULTS}/models/{wildcards.dataset}/{wildcards.model}",
        dataset_dir=lambda wildcards: f"{RESULTS}/data/{wildcards.dataset}",
        seed=config["seed"],
        max_epochs=max_epochs_argument,
        device=config["device"],
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    log:
        f"{RESULTS}/logs/train/{{dataset}}/{{model}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/train/{{dataset}}/{{model}}.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank train --dataset-dir {params.dataset_dir} --hyperparameters {input.hyperparameters}"
        " --out-dir {params.out_dir} --seed {params.seed} {params.max_epochs}"
        " --device {params.device} --threads {threads} 2>&1 | tee {log}"
