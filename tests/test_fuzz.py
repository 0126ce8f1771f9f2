"""Property-based fuzzing in the normal suite (docs/reliability.md): every reader, fed damaged input, either
returns what it could read or raises one AttdecError; never another exception.

Inputs are built the way tools/fuzzers/fuzz.py builds its long runs (the same mutators), here driven by hypothesis
with a fixed budget: derandomized, so that CI runs the same examples every time; no example database, so
that nothing is written into the tree. ATTDEC_FUZZ_EXAMPLES raises the budget for a longer local run.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import re
import shutil
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed (pip install -e '.[test]')")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from attdec.errors import AttdecError, FormatError, parse_json  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
from conftest import FIXTURES, SYNTHETIC_CAPTURES, cli, real_data, shared_path  # noqa: E402

from tests.support import sqtt_encoder as enc  # noqa: E402
from tools.fuzzers import fuzz  # noqa: E402

EXAMPLES = int(os.environ.get("ATTDEC_FUZZ_EXAMPLES", "0"))
DEMO_RAW = ROOT / "attdec" / "data" / "demo_raw"


def budget(n: int):
    """A hypothesis profile of `n` examples (ATTDEC_FUZZ_EXAMPLES instead, when set)."""
    return settings(
        max_examples=EXAMPLES or n,
        deadline=None,
        derandomize=not EXAMPLES,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


def damaged(data: bytes, rnd: random.Random) -> bytes:
    return fuzz.mutate_bytes(data, rnd)


# ---- SQTT token streams built from the packet tables, then damaged -------------------------------------------
def _rdna_stream(draw, generation: int) -> bytes:
    e = enc.RdnaEncoder(generation, simd=draw(st.integers(0, 3)), wgp=draw(st.integers(0, 7)))
    names = sorted(p.name for p in e.table if p.name != "HEADER")
    for name in draw(st.lists(st.sampled_from(names), max_size=60)):
        p = e.table[name]
        fields = {k: draw(st.integers(0, f.mask)) for k, f in p.fields.items() if k != "id"}
        e.token(name, **fields)
    return e.data()


def _gfx9_stream(draw) -> bytes:
    e = enc.Gfx9Encoder(target_cu=draw(st.integers(0, 15)))
    e.kernel_entry(0x7FFF00000000)
    names = sorted(p.name for p in enc.GFX9)
    for name in draw(st.lists(st.sampled_from(names), max_size=60)):
        p = enc.GFX9[name]
        fields = {k: draw(st.integers(0, f.mask)) for k, f in p.fields.items() if k not in ("id", "type")}
        try:
            e.put(name, draw(st.booleans()), **fields)
        except (ValueError, KeyError):  # a field the encoder sets itself
            continue
    return e.data()


@st.composite
def sqtt_streams(draw):
    generation = draw(st.sampled_from((9, 10, 11, 12)))
    data = _gfx9_stream(draw) if generation == 9 else _rdna_stream(draw, generation)
    if draw(st.booleans()):
        data = damaged(data, draw(st.randoms(use_true_random=False)))
    return generation, data


ARCH = {9: "gfx942", 10: "gfx1030", 11: "gfx1100", 12: "gfx1201"}


@budget(300)
@given(sqtt_streams())
def test_decoders_on_damaged_token_streams(stream):
    from attdec.decoders import decode_blob
    from attdec.decoders.tokens import list_tokens

    generation, data = stream
    try:
        res = decode_blob(data, ARCH[generation], None, 0, where="t.att")
        for p in res.problems:  # every offset a problem names lies in the blob
            for m in re.finditer(r"byte (?:offset )?(\d+)", p):
                assert int(m.group(1)) <= len(data), p
    except AttdecError:
        pass
    try:
        listing = list_tokens(data, "t.att")
        rows = list(itertools.islice(listing.tokens, 5000))
        assert all(0 <= r.nibble <= 2 * len(data) for r in rows)
    except AttdecError:
        pass


# ---- code objects: ELF headers, sections, symbols, notes, DWARF ---------------------------------------------
CODE_OBJECTS = [*sorted((FIXTURES / "isa").glob("*.co")), DEMO_RAW / "kern.co"]


@budget(300)
@given(st.sampled_from(CODE_OBJECTS), st.randoms(use_true_random=False))
def test_code_object_readers_on_damaged_elves(path, rnd):
    from attdec.decoders import CodeMap
    from attdec.isa import disassemble, load_code_object

    data = fuzz.mutate_elf(path.read_bytes(), rnd)
    try:
        co = load_code_object(data, path.name)
        arch = co.arch or "gfx942"
        insts = disassemble(co.text, arch, co.text_vaddr)
        CodeMap().add(disassemble(co.text, arch, co.text_vaddr, lenient=True), 0x7FFF00000000)
        for k in co.kernels:
            co.resources(k)
        for i in insts[:40]:
            co.source_of(i.address)
    except AttdecError:
        pass


# ---- JSON: the guarded parse ---------------------------------------------------------------------------------
scalars = st.none() | st.booleans() | st.integers(-(1 << 63), (1 << 64) - 1) | st.text()
json_values = st.recursive(
    scalars | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)


@budget(300)
@given(json_values, st.randoms(use_true_random=False))
def test_parse_json_takes_json_and_refuses_the_rest_in_one_error(value, rnd):
    text = json.dumps(value).encode()
    assert parse_json(text, "f.json") == json.loads(text)
    bad = fuzz.mutate_json(text, rnd)
    try:
        parse_json(bad, "f.json")
    except FormatError as e:
        assert str(e).startswith("f.json: ") and "\n" not in str(e)


# ---- ui_output folders ---------------------------------------------------------------------------------------
UI_FOLDERS = sorted(p.parent for p in FIXTURES.rglob("filenames.json"))


@budget(150)
@given(st.sampled_from(UI_FOLDERS), st.randoms(use_true_random=False))
def test_ui_output_reader_on_damaged_folders(tmp_path_factory, folder, rnd):
    from attdec.sources.pipeline import open_dispatches

    dst = tmp_path_factory.mktemp("ui") / folder.name
    shutil.copytree(folder, dst)
    fuzz._damage_folder(dst, rnd, rnd.randint(1, 3))
    try:
        for d in open_dispatches([dst]):
            assert d.waves is not None and d.occupancy is not None  # what reports read, deferred or not
    except AttdecError:
        pass


# ---- tinygrad pickles ----------------------------------------------------------------------------------------
@budget(200)
@given(st.randoms(use_true_random=False), st.booleans())
def test_tinygrad_reader_on_hostile_pickles(rnd, bytes_too):
    from attdec.sources import tinygrad

    data = fuzz.synthetic_profile(rnd, DEMO_RAW)
    if bytes_too:
        data = damaged(data, rnd)
    with contextlib.suppress(AttdecError):
        tinygrad.dispatches_from_events(tinygrad.load_events(data, "p.pkl"), "p.pkl")


# ---- RGP (SQTT file and RDF containers) ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def rgp_files(tmp_path_factory):
    from tests.support import make_rgp

    # make_rgp needs a capture's device properties: a real capture's, or the synthetic one's
    real = ("captures", "gfx1100", "plus_run0")
    cap = shared_path(*real) if real_data(*real) else SYNTHETIC_CAPTURES["gfx1100"]
    d = tmp_path_factory.mktemp("rgp")
    files = [make_rgp.radv(cap, d / "radv.rgp"), make_rgp.rdf(cap, d / "rdf.rgp")]
    try:
        import zstandard  # noqa: F401

        files.append(make_rgp.rdf(cap, d / "rdfz.rgp", zstd=True))
    except ImportError:
        pass
    return [f.read_bytes() for f in files]


@budget(150)
@given(st.data())
def test_rgp_reader_on_damaged_containers(rgp_files, data):
    from attdec.sources import rgp
    from attdec.sources.raw import decode_dispatch
    from attdec.sources.rgp.container import read_rgp

    rnd = data.draw(st.randoms(use_true_random=False))
    blob = damaged(data.draw(st.sampled_from(rgp_files)), rnd)
    try:
        raws = rgp.build(read_rgp(blob, "t.rgp"))
    except AttdecError:
        return
    for raw in raws[:2]:
        with contextlib.suppress(AttdecError):
            decode_dispatch(raw)


# ---- the whole command line, a few cases of every kind -----------------------------------------------------
@budget(250)
@given(st.integers(0, 10**6))
def test_command_line_on_every_input_kind(tmp_path_factory, index):
    corpus = _own_corpus()
    root = tmp_path_factory.mktemp("case")
    case = fuzz.build(index, 1, fuzz.KINDS, corpus, root)
    r = cli(*case.args)
    assert "Traceback" not in r.stderr, (case.what, case.args, r.stderr)
    assert r.returncode in (0, 1, 3), (case.what, case.args, r.stderr)
    if r.returncode == 1:
        assert any(ln.startswith("attdec: error: ") for ln in r.stderr.splitlines()), r.stderr


_CORPUS = []


def _own_corpus():
    if not _CORPUS:
        _CORPUS.append(fuzz.Corpus.load(None))
    return _CORPUS[0]


@pytest.mark.parametrize("start", range(0, 180, 60))
def test_every_refusal_names_its_file_and_no_bare_exception(tmp_path_factory, start):
    """An error line says where: the input file (and in it the JSON path or byte offset), never a wrapped
    Python exception alone (`(KeyError: '../E_3_1_se2.att')`). Seeded cases of every kind, own data."""
    corpus = _own_corpus()
    bare = re.compile(r"(?:\(|: )[A-Z]\w*(?:Error|Exception): ")
    refused = 0
    for index in range(start, start + 60):
        root = tmp_path_factory.mktemp("case")
        case = fuzz.build(index, 11, fuzz.KINDS, corpus, root)
        r = cli(*case.args)
        if r.returncode != 1:
            continue
        refused += 1
        line = next(ln for ln in r.stderr.splitlines() if ln.startswith("attdec: error: "))
        assert str(root) in line, (index, case.what, line)
        assert not bare.search(line), (index, case.what, line)
    assert refused >= 10  # the cases do reach the error paths
