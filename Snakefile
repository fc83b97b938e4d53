# kgrank: rank-based evaluation of link prediction on knowledge graphs.
#   snakemake --cores 2                                 everything in config/config.yaml
#   snakemake --cores 2 results/figures/figure1.pdf     one figure and what it needs
from snakemake.utils import min_version

min_version("9.20")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/ranks.smk"
include: "workflow/rules/metrics.smk"
include: "workflow/rules/paper.smk"


rule all:
    default_target: True
    input:
        all_pairs(f"{RESULTS}/metrics/{{dataset}}/{{model}}.tsv"),
        f"{RESULTS}/figures/figure1.pdf",
        f"{RESULTS}/figures/figure1.png",
        f"{RESULTS}/tables/table4.md",
        f"{RESULTS}/tables/table4.tex",
