"""The allocator setting every kgrank command makes: taken by glibc, harmless twice."""

from __future__ import annotations

import sys

import pytest
import torch

from kgrank.training.allocator import keep_freed_memory


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_glibc_takes_the_setting_and_large_tensors_still_work():
    assert keep_freed_memory() is True
    assert keep_freed_memory() is True  # cached: set once per process
    # large blocks now come from the heap; they are allocated, freed and reused alike
    for _ in range(3):
        block = torch.ones(2048, 8192)  # 64 MiB, above glibc's largest mmap threshold
        assert float(block.sum()) == 2048 * 8192
        del block
