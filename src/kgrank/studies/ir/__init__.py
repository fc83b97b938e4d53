"""Study `ir`: Zhou et al. 2022, link prediction evaluated as information retrieval."""
