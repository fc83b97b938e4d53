# Stage 4: every metric with its expectation and variance under the random model,
# its adjusted index and its z-score, per side and rank type; and the same per
# relation and per relation category.


rule metrics:
    input:
        ranks=f"{RESULTS}/ranks/{{dataset}}/{{model}}.parquet",
        config=f"{RESULTS}/models/{{dataset}}/{{model}}/config.json",
        train=f"{RESULTS}/data/{{dataset}}/train.tsv",
    output:
        table=f"{RESULTS}/metrics/{{dataset}}/{{model}}.tsv",
        groups=f"{RESULTS}/metrics/{{dataset}}/{{model}}.groups.tsv",
    params:
        model_dir=lambda wildcards: f"{RESULTS}/models/{wildcards.dataset}/{wildcards.model}",
        dataset_dir=lambda wildcards: f"{RESULTS}/data/{wildcards.dataset}",
        hits=" ".join(str(k) for k in config["metrics"]["hits"]),
    log:
        f"{RESULTS}/logs/metrics/{{dataset}}/{{model}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/metrics/{{dataset}}/{{model}}.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank metrics --ranks {input.ranks} --model-dir {params.model_dir}"
        " --dataset {wildcards.dataset} --model {wildcards.model} --hits {params.hits}"
        " --dataset-dir {params.dataset_dir} --out {output.table} --groups-out {output.groups} 2>&1 | tee {log}"
