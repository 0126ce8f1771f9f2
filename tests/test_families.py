"""The family registry (decoders.FAMILIES): every stream format it names reaches a package with the parts
decode_blob, the token listing and the register scan call."""

from __future__ import annotations

import pytest

from attdec.decoders import DECODED, FAMILIES, family
from attdec.decoders.stitch import PcWalker


@pytest.mark.parametrize("fmt", sorted(FAMILIES))
def test_each_format_reaches_a_package_with_the_common_parts(fmt):
    assert callable(family(fmt, "tokens").list_tokens)
    assert callable(family(fmt, "tokens").register_writes)
    if fmt in DECODED:
        assert callable(family(fmt).decode)
        assert callable(family(fmt, "windowed").decode_windowed)
        walkers = [v for v in vars(family(fmt, "stitch")).values() if isinstance(v, type) and issubclass(v, PcWalker)]
        assert any(w is not PcWalker for w in walkers)


def test_decoded_formats_are_read_formats():
    assert set(DECODED) <= set(FAMILIES)
