"""The number of threads a command computes with, for torch and for numpy's BLAS alike."""

from __future__ import annotations


def use_threads(threads: int) -> None:
    """Compute with ``threads`` threads from here on: torch's intra-op pool and the BLAS
    library numpy links (OpenBLAS in numpy's wheels).

    Both split sums across threads, so their last bits depend on the count: a dot product of
    the best-rank moments of an IR item table (``kgrank.evaluation.moments``) differs in the
    last bit between one BLAS thread and two. Snakemake limits BLAS to a job's threads
    through the environment; a command run by hand with ``--threads`` now does the same, so
    it writes the workflow's bytes. threadpoolctl is the maintained way to set a loaded BLAS
    library's pool (numpy has no call for it).
    """
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(threads)
    threadpool_limits(limits=threads, user_api="blas")
