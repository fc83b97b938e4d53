"""Study `moments` (unified-framework paper, Appendix B): the lookup table of every
metric's expectation and variance under the random model per dataset, split and side,
the Monte Carlo check of each, and the errata of the published closed forms.

Modules: ``commands`` (the `moments-*` commands), ``settings`` (what the rule file reads),
``montecarlo`` (lookup table and check), ``errata`` (published formulas).
"""
