# kgrank: rank-based evaluation of link prediction on knowledge graphs.
#   snakemake --cores 2                                 every study switched on in config/config.yaml
#   snakemake --cores 2 results/figures/figure1.pdf     one figure and what it needs
from snakemake.utils import min_version

from kgrank.workflow.config import check_yaml_file
from kgrank.errors import KgrankInputError, stop_with

min_version("9.20")


# A config file named on the command line (--configfile config/paper.yaml) replaces the
# default instead of extending it: Snakemake would otherwise merge the two, and the
# laptop budget's caps would silently carry over into the published configuration.
# Every config file is read once more by kgrank's loader before the checks walk it: named by
# file and line if it is not valid YAML (Snakemake's loader names neither), and refused if
# its aliases expand beyond what a config holds (a 1 KB alias bomb).
try:
    for path in workflow.overwrite_configfiles or ["config/config.yaml"]:
        check_yaml_file(path)
except KgrankInputError as error:
    stop_with(error, "snakemake")
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# A bad config, hyperparameter file or study setting stops here, before any job: its
# one-line message alone, exit code 2 (Snakemake would print it under a frame naming the
# rule file and line, then a traceback, with exit code 1).
try:
    # The stages every study shares (docs/architecture.md).
    include: "workflow/rules/common.smk"
    include: "workflow/rules/data.smk"
    include: "workflow/rules/train.smk"
    include: "workflow/rules/ranks.smk"
    include: "workflow/rules/metrics.smk"
    include: "workflow/rules/compare.smk"
    # One line per study: its rules, its localrules and its TARGETS.
    include: "workflow/rules/studies/paper.smk"
    include: "workflow/rules/studies/moments.smk"
    include: "workflow/rules/studies/openworld.smk"
    include: "workflow/rules/studies/ambiguity.smk"
    include: "workflow/rules/studies/ir.smk"
    include: "workflow/rules/studies/protocols.smk"
    # Every study's published claims against its tables (after the studies: it reads them).
    include: "workflow/rules/scorecard.smk"
except KgrankInputError as error:
    stop_with(error, "snakemake")


localrules:
    all,


rule all:
    default_target: True
    input:
        TARGETS,
