"""kgrank.garbage: full collections leave the objects held before a block alone, and
still collect what the block makes."""

import gc
import weakref

from kgrank.garbage import frozen_objects


class _Node:
    pass


def _cycle() -> weakref.ref:
    node = _Node()
    node.self = node  # garbage only a collection frees
    return weakref.ref(node)


def test_held_objects_are_frozen_inside_and_given_back_after():
    assert gc.get_freeze_count() == 0
    held = [_Node()]
    with frozen_objects():
        assert gc.get_freeze_count() >= len(held)
        made_inside = _cycle()
        gc.collect()
        assert made_inside() is None  # new garbage is still collected
    assert gc.get_freeze_count() == 0


def test_frozen_garbage_comes_back_to_the_collector():
    # no automatic collection between making the cycle and freezing it
    gc.disable()
    try:
        before = _cycle()
        with frozen_objects():
            gc.collect()
            assert before() is not None  # frozen: left out of the walk
        gc.collect()
        assert before() is None
    finally:
        gc.enable()


def test_an_inner_block_leaves_the_outer_one_frozen():
    with frozen_objects():
        with frozen_objects():
            pass
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
