"""kgrank: reproducible rank-based evaluation of link prediction on knowledge graphs."""

__version__ = "0.1.0"
