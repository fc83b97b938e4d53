# Stage 1: fetch each dataset once (PyKEEN, a local archive or a local folder of split files)
# and write it as labelled TSV splits with stats.json.


rule prepare_dataset:
    input:
        archive=dataset_archive,
    output:
        **split_files(),
        stats=stats_file(),
    params:
        source=dataset_source_arguments,
        out_dir=of_wildcards(dataset_dir),
    priority: prepare_priority
    log:
        log_file("data", "{dataset}"),
    benchmark:
        benchmark_file("data", "{dataset}")
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank prepare-dataset --name {wildcards.dataset} {params.source}"
        " --out-dir {params.out_dir} 2>&1 | tee {log}"
