# Stage 4: every metric with its expectation and variance under the random model,
# its adjusted index and its z-score, and its sampling interval over the test tasks,
# per side and rank type; and the same (without intervals) per relation and per
# relation category.


rule metrics:
    input:
        ranks=rank_file(),
        config=f"{model_dir()}/config.json",
        train=split_files()["train"],
    output:
        table=metrics_file(),
        groups=f"{RESULTS}/metrics/{{dataset}}/{{model}}.groups.tsv",
    params:
        model_dir=of_wildcards(model_dir),
        dataset_dir=of_wildcards(dataset_dir),
        hits=HITS,
        confidence=config["metrics"]["confidence"],
    log:
        log_file("metrics", "{dataset}/{model}"),
    benchmark:
        benchmark_file("metrics", "{dataset}/{model}")
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank metrics --ranks {input.ranks} --model-dir {params.model_dir}"
        " --dataset {wildcards.dataset} --model {wildcards.model} --hits {params.hits}"
        " --confidence {params.confidence}"
        " --dataset-dir {params.dataset_dir} --out {output.table} --groups-out {output.groups} 2>&1 | tee {log}"


localrules:
    metrics,
