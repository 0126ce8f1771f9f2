"""attdec.model.version_shims: numpy 1.x's stand-ins give what numpy 2's own functions give."""

from __future__ import annotations

import numpy as np
import pytest

from attdec.model.version_shims import bitwise_count, bitwise_count_by_bytes


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_bitwise_count_by_bytes_counts_every_bit(dtype):
    rng = np.random.default_rng(5)
    top = np.iinfo(dtype).max
    a = np.concatenate([rng.integers(0, top, 500, dtype=dtype, endpoint=True), np.array([0, top], dtype)])
    want = np.array([int(x).bit_count() for x in a.tolist()], np.uint8)
    for got, sel in ((bitwise_count_by_bytes(a), slice(None)), (bitwise_count_by_bytes(a[::3]), slice(None, None, 3))):
        assert got.dtype == np.uint8 and got.tolist() == want[sel].tolist()
    grid = bitwise_count_by_bytes(a[:500].reshape(20, 25))
    assert grid.shape == (20, 25) and (grid == want[:500].reshape(20, 25)).all()
    one = bitwise_count_by_bytes(a[-1])
    assert np.ndim(one) == 0 and one == np.iinfo(dtype).bits
    assert bitwise_count(a).dtype == np.uint8 and (bitwise_count(a) == want).all()  # numpy's own, where it has one
