"""Datasets and the files between steps: splits and their labels, the declared
intermediate tables with their checked reader, rank-table vocabulary, atomic writes and
the names that become paths."""
