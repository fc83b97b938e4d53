"""Study `paper` (Hoyt, Berrendorf et al. 2022): Figure 1, Tables 1-4, the audit of the
case study's published values and the comparison with published results.

Modules: ``commands`` (the `paper-*` commands), ``settings`` (what the rule file reads),
``figure1`` (the figure), ``learning_curves`` (validation MRR against training time),
``tables`` (Tables 1-3 from the metric registry), ``report`` (Tables 1-4 as the report
prints them, with their captions), ``published`` (the audit, Figure 1 from the published
MRRs, the comparison with published results).
"""
