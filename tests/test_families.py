"""The family registry (decoders.FAMILIES): every stream format it names reaches a package with the parts
decode_blob, the token listing and the register scan call."""

from __future__ import annotations

import pytest

from attdec.decoders import DECODED, FAMILIES, detect_format, family
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


@pytest.mark.parametrize("gen", [9, 11, 12])
@pytest.mark.parametrize("vectorised", [False, True])
def test_a_decode_leaves_no_reference_cycles(gen, vectorised):
    """What a decode made is freed when its result is dropped, without waiting for the cyclic collector
    (decode_blob turns it off while it decodes; a windowed decode makes a pass per window)."""
    import gc
    import random

    from test_gfx9_vectorised import random_stream as gfx9_stream
    from test_rdna_vectorised_random import ARCH
    from test_rdna_vectorised_random import random_stream as rdna_stream

    rng = random.Random(gen)
    streams = [gfx9_stream(rng, 400) if gen == 9 else rdna_stream(gen, rng, barriers=True) for _ in range(5)]
    arch = "gfx950" if gen == 9 else ARCH[gen]
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        results = [family(detect_format(s)).decode(s, arch, None, 0, vectorised=vectorised) for s in streams]
        assert sum(len(r.waves) for r in results) > 0
        del results
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()
