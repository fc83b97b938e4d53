"""Keep the garbage collector's full collections off the objects a process already holds.

PyKEEN's training loop ends every epoch with ``gc.collect()``, and statsmodels' Holm
correction ends every call with one. A full collection walks every tracked object: 0.24 s
in a process that has imported torch and PyKEEN (about 400,000 objects), paid per epoch
and per call. Frozen objects (``gc.freeze``) are left out of the walk, so that it covers
only what the loop itself made and may have left behind."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_depth = 0  # blocks open now: the outermost one gives the objects back


@contextmanager
def frozen_objects() -> Iterator[None]:
    """Leave every object alive now out of full collections until the block ends.

    Nothing is lost: objects made inside the block are collected as usual, and when the
    outermost block ends the frozen ones go back to the collector (into its oldest
    generation, so garbage among them waits for the next full collection)."""
    global _depth
    gc.freeze()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            gc.unfreeze()
