"""The family registry (decoders.FAMILIES): every stream format attdec lists or decodes (model.target's
STREAM_FORMATS) reaches a package with the parts decode_blob, the token listing and the register scan call."""

from __future__ import annotations

import pytest

from attdec.decoders import FAMILIES, family
from attdec.decoders.stitch import PcWalker
from attdec.model.target import STREAM_FORMATS


@pytest.mark.parametrize("fmt", [f for f in STREAM_FORMATS.values() if f.listed], ids=str)
def test_each_format_reaches_a_package_with_the_common_parts(fmt):
    assert callable(family(fmt, "tokens").list_tokens)
    assert callable(family(fmt, "tokens").register_writes)
    if fmt.decoded:
        assert callable(family(fmt).decode)
        assert callable(family(fmt, "windowed").decode_windowed)
        walkers = [v for v in vars(family(fmt, "stitch")).values() if isinstance(v, type) and issubclass(v, PcWalker)]
        assert any(w is not PcWalker for w in walkers)


def test_the_registry_holds_exactly_the_read_formats():
    assert set(FAMILIES) == {f.name for f in STREAM_FORMATS.values() if f.listed}
    assert all(f.listed for f in STREAM_FORMATS.values() if f.decoded)
