"""Shared test helpers: where the project's real data (../shared) lives, and a skip when it is absent."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = Path(os.environ.get("ATTDEC_SHARED", ROOT.parent / "shared")).resolve()


# Small capture folders written from the decoder's own tables (tools/makers/make_synthetic_capture.py,
# tools/makers/make_demo_raw.py): what a test on a capture folder runs on when ../shared is absent.
SYNTHETIC_CAPTURES = {
    "gfx1100": FIXTURES / "captures" / "gfx1100" / "synth_run0",
    "gfx942": ROOT / "attdec" / "data" / "demo_raw",
}
# synth_run1: other-SIMD instructions and PMC buffers besides (not among the defaults of `captures`)
SYNTHETIC_MORE = FIXTURES / "captures" / "gfx1100" / "synth_run1"
# AMD's decoder library's answers for the synthetic captures (tools/makers/make_synthetic_oracles.py), in
# oracle.json's layout; a real capture's is its own oracle.json
SYNTHETIC_ORACLES = {
    SYNTHETIC_CAPTURES["gfx1100"]: FIXTURES / "oracles" / "gfx1100-synth_run0.json",
    SYNTHETIC_MORE: FIXTURES / "oracles" / "gfx1100-synth_run1.json",
    SYNTHETIC_CAPTURES["gfx942"]: FIXTURES / "oracles" / "gfx942-demo_raw.json",
}


def repeated_capture(out: Path, copies: int) -> Path:
    """A copy at `out` of the synthetic gfx1100 capture whose first SE blob's body is repeated `copies` times
    (its header line once, as tools/makers/make_repeated_blob.py writes them): a big input made small."""
    import json
    import shutil

    shutil.copytree(SYNTHETIC_CAPTURES["gfx1100"], out)
    meta = json.loads((out / "capture.json").read_text())
    blob = out / meta["dispatches"][0]["blobs"][0]
    data = blob.read_bytes()
    blob.chmod(0o644)
    blob.write_bytes(data[:32] + data[32:] * copies)
    for b in meta["blobs"]:  # sizes and digests of the original blobs no longer hold
        b.pop("size", None)
        b.pop("sha256", None)
    (out / "capture.json").chmod(0o644)
    (out / "capture.json").write_text(json.dumps(meta))
    return out


def without_line_tables(code_object: bytes) -> bytes:
    """An ELF code object whose .debug_* sections are renamed (.nodbg_*, the same length) in its section-name
    table: the same code, without DWARF as a reader finds it (tinygrad's code objects carry none)."""
    import struct

    (shoff,) = struct.unpack_from("<Q", code_object, 0x28)
    shentsize, _count, shstrndx = struct.unpack_from("<HHH", code_object, 0x3A)
    offset, size = struct.unpack_from("<QQ", code_object, shoff + shstrndx * shentsize + 0x18)
    names = code_object[offset : offset + size].replace(b".debug_", b".nodbg_")
    return code_object[:offset] + names + code_object[offset + size :]


def capture_without_line_tables(out: Path, capture: Path = SYNTHETIC_CAPTURES["gfx942"]) -> Path:
    """A copy at `out` of a synthetic capture whose code objects carry no DWARF (`without_line_tables`)."""
    import shutil

    shutil.copytree(capture, out)
    for co in out.glob("*.co"):
        co.chmod(0o644)
        co.write_bytes(without_line_tables(co.read_bytes()))
    return out


def real_data(*parts: str) -> bool:
    """Whether ../shared holds this path (a real-data variant of a test is collected only then)."""
    return SHARED.joinpath(*parts).exists()


def captures(*rels: str, synthetic: tuple[str, ...] = ("gfx1100", "gfx942")) -> list:
    """Parameters of a test on capture folders: the synthetic captures of `synthetic` (always), then each
    ../shared/captures/REL of `rels` that this machine has (none in a bare clone)."""
    params = [pytest.param(SYNTHETIC_CAPTURES[a], id=f"synthetic-{a}") for a in synthetic]
    params += [pytest.param(SHARED / "captures" / r, id=r) for r in rels if real_data("captures", r)]
    return params


def ui_samples(*rels: str) -> list:
    """Parameters of a test on ui_output samples with source lines: the demo's folder (always), then each
    ../shared/ui_output_samples/REL of `rels` that this machine has."""
    params = [pytest.param(ROOT / "attdec" / "data" / "demo", id="demo")]
    params += [
        pytest.param(SHARED / "ui_output_samples" / r, id=Path(r).name)
        for r in rels
        if real_data("ui_output_samples", r)
    ]
    return params


def oracle_captures(*rels: str, synthetic: tuple[Path, ...] = tuple(SYNTHETIC_ORACLES)) -> list:
    """Parameters (capture folder, its AMD oracle) of a test against AMD's decoder: the synthetic captures of
    `synthetic` (always), then each ../shared/captures/REL of `rels` that this machine has."""
    params = [pytest.param(c, SYNTHETIC_ORACLES[c], id=f"synthetic-{c.parent.name}-{c.name}") for c in synthetic]
    for r in rels:
        if real_data("captures", r):
            params.append(pytest.param(SHARED / "captures" / r, SHARED / "captures" / r / "oracle.json", id=r))
    return params


def capture_sets(least_real: int, pattern: str = "*/*", step: int = 1) -> list:
    """Parameters (folders, least) of a test over many capture folders: the synthetic ones (3 dispatches), then
    every `step`-th ../shared/captures/PATTERN folder with a capture.json, where this machine has them (their
    dispatches must number at least `least_real`)."""
    sets = [pytest.param(list(SYNTHETIC_CAPTURES.values()), 3, id="synthetic")]
    if real_data("captures"):
        real = sorted(p.parent for p in SHARED.glob(f"captures/{pattern}/capture.json"))[::step]
        sets.append(pytest.param(real, least_real, id="real"))
    return sets


def pytest_report_header(config) -> str:
    if SHARED.exists():
        return f"real data: {SHARED}"
    return f"real data: {SHARED} absent: tests on it skip, and their real-data variants are not collected"


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip the test with the reason when that data is not on this machine."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"real data not present: {p} (set ATTDEC_SHARED to the shared/ folder)")
    return p


@dataclass
class Run:
    """What a command-line run left: exit status and the two streams (a traceback lands in stderr)."""

    returncode: int
    stdout: str
    stderr: str


@dataclass
class Result:
    """An in-process `attdec` run: exit status, stdout, stderr, both interleaved as a terminal shows them
    (`output`), and the exception that escaped, if any (None for a normal exit)."""

    exit_code: int
    stdout: str
    stderr: str
    output: str
    exception: BaseException | None = None


class _Tee(io.StringIO):
    """A captured stream that also copies what it gets into the interleaved `both`."""

    def __init__(self, both: io.StringIO):
        super().__init__()
        self.both = both

    def write(self, s: str) -> int:
        self.both.write(s)
        return super().write(s)


def invoke(args) -> Result:
    """`attdec ARGS` in this process (counted by coverage): stdout and stderr captured, never a terminal."""
    from attdec.cli import main

    both = io.StringIO()
    out, err = _Tee(both), _Tee(both)
    code, exc = 0, None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main([str(a) for a in args])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, int) and e.code is not None:
            err.write(f"{e.code}\n")
    except Exception as e:  # a traceback: what a user must never see
        code, exc = 1, e
    return Result(code, out.getvalue(), err.getvalue(), both.getvalue(), exc)


def cli(*args, cwd=None) -> Run:
    """`attdec ARGS` in this process (counted by coverage), from folder `cwd`."""
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        r = invoke(args)
    finally:
        os.chdir(old)
    err = r.stderr
    if r.exception is not None:
        err += "Traceback (most recent call last):\n" + "".join(traceback.format_exception(r.exception))
    return Run(r.exit_code, r.stdout, err)


def run_decode(*args, cwd=None) -> Run:
    """`attdec decode ARGS` (what the conformance tool runs)."""
    return cli("decode", *args, cwd=cwd)


def run_subprocess(*args, cwd=None, timeout=300) -> subprocess.CompletedProcess:
    """`python -m attdec ARGS` in a fresh process of this tree: for what only a real process shows
    (exit on a closed pipe, what a terminal sees, start-up imports)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "attdec", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


def one_line_error(p, *words: str) -> None:
    """The CLI refused the input the way users must see it: exit 1, one `attdec: error:` line naming `words`."""
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("attdec: error:"), p.stderr
    for w in words:
        assert w in lines[0], lines[0]


@functools.cache
def decoded(path: Path) -> tuple:
    """The dispatches at a real-data path, opened once per test session (analyses only read them)."""
    from attdec.sources.pipeline import open_dispatches

    return tuple(open_dispatches([path]))


def codemap(lines, base: int, vaddr: int = 0):
    """A CodeMap of (text, size) instructions laid end to end from `vaddr`, loaded at `base` (synthetic
    streams need PCs without a code object)."""
    from types import SimpleNamespace

    from attdec.decoders import CodeMap

    insts = []
    for text, size in lines:
        insts.append(SimpleNamespace(address=vaddr, text=text, size=size, mnemonic=text.split()[0], target=None))
        vaddr += size
    cm = CodeMap()
    cm.add(insts, base)
    return cm


@pytest.fixture(scope="module")
def driver():
    """A headless Chromium shared by a module's browser tests (tests/support/browser.py)."""
    from tests.support import browser

    with browser.chromium(1400, 1000) as d:
        yield d
