# kgrank: rank-based evaluation of link prediction on knowledge graphs.
#   snakemake --cores 2                                 every study switched on in config/config.yaml
#   snakemake --cores 2 results/figures/figure1.pdf     one figure and what it needs
from snakemake.utils import min_version

from kgrank.config import check_yaml_file

min_version("9.20")


# A config file named on the command line (--configfile config/paper.yaml) replaces the
# default instead of extending it: Snakemake would otherwise merge the two, and the
# laptop budget's caps would silently carry over into the published configuration.
if not workflow.overwrite_configfiles:
    # named by file and line if it is not valid YAML (Snakemake's loader names neither)
    check_yaml_file("config/config.yaml")

    configfile: "config/config.yaml"


# The stages every study shares (docs/architecture.md).
include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/ranks.smk"
include: "workflow/rules/metrics.smk"
# One line per study: its rules, its localrules and its TARGETS.
include: "workflow/rules/studies/paper.smk"
include: "workflow/rules/studies/moments.smk"
include: "workflow/rules/studies/openworld.smk"
include: "workflow/rules/studies/ambiguity.smk"
include: "workflow/rules/studies/ir.smk"


localrules:
    all,


rule all:
    default_target: True
    input:
        TARGETS,
