# kgrank: rank-based evaluation of link prediction on knowledge graphs.
#   snakemake --cores 2                                 everything in config/config.yaml
#   snakemake --cores 2 results/figures/figure1.pdf     one figure and what it needs
from snakemake.utils import min_version

min_version("9.20")


# A config file named on the command line (--configfile config/paper.yaml) replaces the
# default instead of extending it: Snakemake would otherwise merge the two, and the
# laptop budget's caps would silently carry over into the published configuration.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/ranks.smk"
include: "workflow/rules/metrics.smk"
include: "workflow/rules/paper.smk"
include: "workflow/rules/moments.smk"


# Light rules run where Snakemake runs, not as cluster jobs.
localrules:
    all,
    metrics,
    figure1,
    table4,
    tables_1_to_3,
    montecarlo_figure,
    errata,
    published_audit,
    figure1_published,
    compare_published,


# Every per-pair output is a target, so that deleting any of them (a model, a ranks
# file) and rerunning remakes it and what depends on it, and nothing else.
rule all:
    default_target: True
    input:
        all_pairs(f"{RESULTS}/models/{{dataset}}/{{model}}/model.pt"),
        all_pairs(f"{RESULTS}/ranks/{{dataset}}/{{model}}.parquet"),
        [
            path
            for candidates in config["ranks"]["sampled_candidates"]
            for path in all_pairs(f"{RESULTS}/ranks/{{dataset}}/{{model}}.sampled-{candidates}.parquet")
        ],
        all_pairs(f"{RESULTS}/metrics/{{dataset}}/{{model}}.tsv"),
        f"{RESULTS}/figures/figure1.pdf",
        f"{RESULTS}/figures/figure1.png",
        f"{RESULTS}/tables/table4.md",
        f"{RESULTS}/tables/table4.tex",
        expand(f"{RESULTS}/tables/table{{number}}.md", number=(1, 2, 3)),
        expand(f"{RESULTS}/moments/{{dataset}}/moments.tsv", dataset=DATASETS),
        f"{RESULTS}/figures/montecarlo.pdf",
        f"{RESULTS}/figures/montecarlo.png",
        f"{RESULTS}/tables/errata.md",
        published_outputs(),
