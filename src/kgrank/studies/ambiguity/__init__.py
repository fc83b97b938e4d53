"""Study `ambiguity` (Berrendorf, Faerman, Vermue & Tresp 2020, "On the Ambiguity of
Rank-Based Evaluation of Entity Alignment or Link Prediction Methods"): how far the rank
definitions differ and what each does to the metrics, how MR and Hits@k drift with the
number of candidates while AMRI does not, the paper's Table 1 regenerated, and which
differences between models are real.

Modules: ``variants`` (rank definitions, the constant and random scorers), ``drift``
(sampled candidates, slopes per decade), ``subsets`` (the entity-alignment protocol:
test subsets with their own entities as candidates; the one module that scores),
``table1``, ``pairwise``, ``inputs``, ``figures``, ``report`` (report tables and
captions), ``commands`` (the ``kgrank ambiguity-...`` commands), ``settings`` (what the
rule file reads); ``published_table1.tsv`` holds the published values.
"""
