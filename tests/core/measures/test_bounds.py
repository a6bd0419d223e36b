"""judged.core.measures.bounds helpers: block sums the same bits as query by query."""

import numpy as np
import pytest

from judged.core.measures.bounds import block_sums


@pytest.mark.parametrize("seed", range(3))
def test_block_sums_are_each_blocks_own_sum_bit_for_bit(seed):
    """Blocks of 0 to 40 rows (numpy sums 8 or more pairwise), some rows left out, values
    of every magnitude and signed zeros: each block's sum is the bytes of
    values[s:e][keep[s:e]].sum(), as the per-query loop it replaces computed it."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 41, 300)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    values = rng.random(offsets[-1]) * np.exp(rng.normal(0, 8, offsets[-1]))
    values[rng.random(offsets[-1]) < 0.05] = -0.0
    keep = rng.random(offsets[-1]) < 0.7
    got = block_sums(values, offsets, keep)
    want = np.array([values[s:e][keep[s:e]].sum() for s, e in zip(offsets[:-1], offsets[1:])])
    assert got.tobytes() == want.tobytes()
    assert (np.diff(offsets) > 8).sum() > 100  # many blocks summed pairwise


def test_block_sums_of_no_blocks_and_empty_blocks():
    assert block_sums(np.zeros(0), np.array([0]), np.zeros(0, bool)).shape == (0,)
    assert block_sums(np.array([1.0, 2.0]), np.array([0, 0, 2, 2]), np.array([True, True])).tolist() == [0.0, 3.0, 0.0]
