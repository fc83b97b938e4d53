# Stage 3: the filtered rank of every test triple, both sides, every rank variant.


rule ranks:
    input:
        model=f"{RESULTS}/models/{{dataset}}/{{model}}/model.pt",
        config=f"{RESULTS}/models/{{dataset}}/{{model}}/config.json",
        train=f"{RESULTS}/data/{{dataset}}/train.tsv",
        valid=f"{RESULTS}/data/{{dataset}}/valid.tsv",
        test=f"{RESULTS}/data/{{dataset}}/test.tsv",
    output:
        f"{RESULTS}/ranks/{{dataset}}/{{model}}.parquet",
    params:
        model_dir=lambda wildcards: f"{RESULTS}/models/{wildcards.dataset}/{wildcards.model}",
        dataset_dir=lambda wildcards: f"{RESULTS}/data/{wildcards.dataset}",
        seed=config["seed"],
        batch_size=config["ranks"]["batch_size"],
        filter_splits=" ".join(config["ranks"]["filter_splits"]),
        scoring=config["ranks"]["scoring"],
        sampled="",
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    log:
        f"{RESULTS}/logs/ranks/{{dataset}}/{{model}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/ranks/{{dataset}}/{{model}}.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank ranks --dataset-dir {params.dataset_dir} --model-dir {params.model_dir}"
        " --out {output} --seed {params.seed} --batch-size {params.batch_size}"
        " --filter-splits {params.filter_splits} --scoring {params.scoring} --threads {threads}"
        " {params.sampled} 2>&1 | tee {log}"


# Sampled evaluation: each true entity against k random candidates that are not known
# answers (num_candidates = k + 1), for the k listed in ranks.sampled_candidates or any
# k asked for by file name.
use rule ranks as sampled_ranks with:
    output:
        f"{RESULTS}/ranks/{{dataset}}/{{model}}.sampled-{{candidates}}.parquet",
    wildcard_constraints:
        candidates=r"[1-9][0-9]*",
    params:
        model_dir=lambda wildcards: f"{RESULTS}/models/{wildcards.dataset}/{wildcards.model}",
        dataset_dir=lambda wildcards: f"{RESULTS}/data/{wildcards.dataset}",
        seed=config["seed"],
        batch_size=config["ranks"]["batch_size"],
        filter_splits=" ".join(config["ranks"]["filter_splits"]),
        scoring=config["ranks"]["scoring"],
        sampled=lambda wildcards: f"--sampled-candidates {wildcards.candidates}",
    log:
        f"{RESULTS}/logs/ranks/{{dataset}}/{{model}}.sampled-{{candidates}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/ranks/{{dataset}}/{{model}}.sampled-{{candidates}}.tsv"
