"""How a study's or a stage's part says which systems from outside it takes, in a module of
no imports: the studies' light ``settings`` modules read it at every Snakemake parse.

A part's value in a study's ``EXTERNAL_PARTS`` (``kgrank.studies.external_parts``) or in
``kgrank.workflow.external.STAGE_PARTS`` is None when every external system joins it,
:data:`RESCORES_MODEL` when it rescores a model (a PyKEEN folder joins where the
configuration runs the part on it; a rank table or score matrix cannot),
:data:`WHERE_RUN` when every kind joins where the configuration runs the part, or the
reason no external system joins it.
"""

RESCORES_MODEL = "rescores the model, which a rank table or score matrix does not hold"
WHERE_RUN = "runs where the configuration runs it"
# The stage part of every kind of system where it runs: the comparison (rule compare)
COMPARISON_PART = "comparison (results/comparison, tables/comparison)"
# The stage part that rescores models: the sampled-candidate rank files of ranks.sampled_candidates
SAMPLED_RANKS_PART = "sampled-candidate ranks (ranks.sampled_candidates)"
