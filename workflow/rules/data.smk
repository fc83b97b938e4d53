# Stage 1: fetch each dataset once and write it as labelled TSV splits with stats.json.


rule prepare_dataset:
    input:
        archive=dataset_archive,
    output:
        train=f"{RESULTS}/data/{{dataset}}/train.tsv",
        valid=f"{RESULTS}/data/{{dataset}}/valid.tsv",
        test=f"{RESULTS}/data/{{dataset}}/test.tsv",
        stats=f"{RESULTS}/data/{{dataset}}/stats.json",
    params:
        source=dataset_source_arguments,
        out_dir=lambda wildcards: f"{RESULTS}/data/{wildcards.dataset}",
    log:
        f"{RESULTS}/logs/data/{{dataset}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/data/{{dataset}}.tsv"
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank prepare-dataset --name {wildcards.dataset} {params.source}"
        " --out-dir {params.out_dir} 2>&1 | tee {log}"
