"""Keep freed memory in the process, so that large tensors are not page-faulted in anew.

A 1-N step allocates several (batch × entities) float tensors (scores, the loss's
intermediates, their gradients: 83 MB each for a WN18RR batch of 512). glibc serves every
block above its mmap threshold (at most 32 MB) with a fresh ``mmap`` and returns it to the
kernel on ``free``, so each of those tensors is page-faulted in again, one 4 KiB page at a
time, on every step. Measured on a 512 × 40,559 tensor on 2 cores: ``torch.exp`` 61 → 15 ms,
``softmax`` 62 → 18 ms, the score product 178 → 125 ms, a whole WN18RR TuckER step
632 → 380 ms. Telling glibc to serve large blocks from its heap and never to trim it keeps
the pages mapped for the next step. The arithmetic is untouched (torch aligns every
tensor to 64 bytes either way), so results are bit-identical; the price is that the
process keeps its peak memory until it exits. Nothing in torch or the standard library
sets this, hence ``mallopt`` through ctypes; elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys

# glibc's malloc.h
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4


@functools.cache
def keep_freed_memory() -> bool:
    """Serve large blocks from the heap and keep freed ones; True where glibc took it."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and other C libraries have no mallopt
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success
    return mallopt(_M_MMAP_MAX, 0) == 1 and mallopt(_M_TRIM_THRESHOLD, 2**31 - 1) == 1
