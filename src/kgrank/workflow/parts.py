"""How a study's or a stage's part says which systems from outside it takes, in a module of
no imports: the studies' light ``settings`` modules read it at every Snakemake parse.

A part's value in a study's ``EXTERNAL_PARTS`` (``kgrank.studies.external_parts``) or in
``kgrank.workflow.external.STAGE_PARTS`` is None when every external system joins it,
:data:`RESCORES_MODEL` when it rescores a model (a PyKEEN folder joins where the
configuration runs the part on it; a rank table or score matrix cannot), or the reason no
external system joins it.
"""

RESCORES_MODEL = "rescores the model, which a rank table or score matrix does not hold"
# The stage part that rescores models: the sampled-candidate rank files of ranks.sampled_candidates
SAMPLED_RANKS_PART = "sampled-candidate ranks (ranks.sampled_candidates)"
