"""The defaults and choices that the command line shows, in a module of light imports.

Every ``kgrank`` call builds the whole parser (the DAG starts one per job), and the modules
that compute with these values import scipy.stats, statsmodels, matplotlib or torch:
reading a tuple from them cost each call those imports, about three seconds. The modules
that compute with a value import it from here. A default that the config also has is
read from the config schema, so that the API, the options and the workflow share it.
"""

from __future__ import annotations

from kgrank.schemas import config_default

# The filtered setting: every known true triple leaves the candidate list but the one
# evaluated (kgrank.engine.candidates).
DEFAULT_FILTER_SPLITS = tuple(config_default("ranks.filter_splits"))
# Hits@k cut-offs of the metric registry (kgrank.evaluation.metrics)
DEFAULT_HITS = tuple(config_default("metrics.hits"))
# What kgrank.api.evaluate_system reports: each side alone, both together, or all three
SYSTEM_SIDES = ("both", "head", "tail", "all")
# Two-sided level of every interval (kgrank.evaluation.intervals)
DEFAULT_CONFIDENCE = config_default("metrics.confidence")
# How tasks are weighted in the weighted geometric mean rank (kgrank.evaluation.weighted)
WEIGHT_SCHEMES = ("negatives", "relation", "uniform")
# Estimators of a full-ranking metric from sampled negatives (kgrank.evaluation.sampled)
SAMPLED_ESTIMATORS = ("naive", "rescaled", "posterior-rank", "corrected")
# How an outside system's rank table or score rows name entities and relations (kgrank.systems)
IDENTIFIERS = ("auto", "ids", "labels")
