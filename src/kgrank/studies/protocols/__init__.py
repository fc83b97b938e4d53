"""Study `protocols` (issue #31): the field's open questions about the evaluation protocol
itself, in three parts. Part 1, sampled negatives (Krichene & Rendle 2020): metrics on
k sampled candidates and estimators of the full-ranking ones (``sampled``). Part 2, ties
(McSherry & Najork 2008): rank width, tie tolerance, tie-neutral IR measures (``ties``).
Part 3, the weighted geometric mean rank (Tiwari, Bansal & Rivero 2021) with exact moments
under the random model: WGMR/IWGMR of every trained pair under each weight scheme, its
derived variants, and a Monte Carlo check on each dataset's real candidate counts.

Modules: ``settings`` (what the rule file reads: parts, output names), ``inputs`` (the
tables the study reads and writes, declared), ``weighted`` (part 3's analysis), ``report``
(report tables and captions), ``figures``, ``commands`` (the ``kgrank protocols-...``
commands). A new part adds an analysis module, a command, a rule, a figure or table.
"""
