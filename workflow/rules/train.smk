# Stage 2: train every (dataset, model) pair with its published hyperparameters,
# within the configured budget (epoch caps, and a cheaper training loop where the
# config names one).


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
        budget=budget_arguments,
        device=config["device"],
        sub_batch=f"--sub-batch-size {config['sub_batch_size']}" if config.get("sub_batch_size") else "",
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
        " --out-dir {params.out_dir} --seed {params.seed} {params.budget}"
        " {params.sub_batch} --device {params.device} --threads {threads} 2>&1 | tee {log}"
