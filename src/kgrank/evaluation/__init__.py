"""Metrics and their statistics: the registry, the random model's exact moments, intervals,
paired comparisons, and the weighted and sampled-candidate variants.

Everything here works on rank vectors and candidate counts (numpy, scipy, pandas); none of
it needs torch or a model.
"""
