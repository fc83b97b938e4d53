"""Study `openworld` (Yang, Lin & Zhang 2022, "Rethinking Knowledge Graph Evaluation Under
the Open-World Assumption"): how missing true facts make rank metrics saturate and invert
comparisons, whether less focus-on-top, adjusted and z-scored metrics do better, and the
same question on a closed-world graph with trained models.

Modules: ``simulation`` (the simulator and the closed form), ``consistency`` (inverted
comparisons, queries needed, saturation), ``familytree`` (training and sparse/full
evaluation on the family-tree graph), ``report`` (the report tables and their captions),
``figures``, ``settings`` (what the rule file reads at parse time, free of torch) and
``commands`` (the `kgrank openworld-*` commands).
"""
