"""The reproduction scorecard: the claims of the five papers (``claims/<paper>.tsv``, data)
judged against a run's tables (:mod:`kgrank.scorecard.card`)."""
