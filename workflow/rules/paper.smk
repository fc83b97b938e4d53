# Study `paper` (Hoyt, Berrendorf et al. 2022): Figure 1 and Table 4.
# Logic: src/kgrank/paper.py.


rule figure1:
    input:
        metrics=all_pairs(f"{RESULTS}/metrics/{{dataset}}/{{model}}.tsv"),
        stats=expand(f"{RESULTS}/data/{{dataset}}/stats.json", dataset=DATASETS),
    output:
        pdf=report(f"{RESULTS}/figures/figure1.pdf", caption="../report/figure1.rst", category="paper"),
        png=f"{RESULTS}/figures/figure1.png",
    params:
        caption=budget_caption(config["budget"], MODELS),
    log:
        f"{RESULTS}/logs/figures/figure1.log",
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank figure1 --metrics {input.metrics} --stats {input.stats}"
        " --pdf {output.pdf} --png {output.png} --caption '{params.caption}' 2>&1 | tee {log}"


rule table4:
    input:
        stats=expand(f"{RESULTS}/data/{{dataset}}/stats.json", dataset=DATASETS),
    output:
        markdown=report(f"{RESULTS}/tables/table4.md", caption="../report/table4.rst", category="paper"),
        latex=f"{RESULTS}/tables/table4.tex",
    log:
        f"{RESULTS}/logs/tables/table4.log",
    conda:
        "../envs/kgrank.yaml"
    shell:
        "kgrank table4 --stats {input.stats} --markdown {output.markdown}"
        " --latex {output.latex} 2>&1 | tee {log}"
