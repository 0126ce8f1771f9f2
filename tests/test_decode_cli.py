"""`attdec decode` end to end: JSON shape, and bad input giving one clear line (never a traceback)."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest
from conftest import (
    FIXTURES,
    ROOT,
    SHARED,
    SYNTHETIC_CAPTURES,
    SYNTHETIC_MORE,
    captures,
    one_line_error,
    oracle_captures,
    real_data,
    shared_path,
)
from conftest import run_decode as run


@pytest.fixture
def tiny(tmp_path):
    p = tmp_path / "tiny_se2.att"
    p.write_bytes((FIXTURES / "rdna_gfx11_tiny.att").read_bytes())
    return p


def test_json_output_and_se_from_file_name(tiny):
    p = run("--arch", "gfx1100", tiny, "--format", "json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)["dispatches"][0]
    (w,) = d["waves"]
    assert (w["se"], w["begin_time"], w["end_time"]) == (2, 10, 50)
    assert [r[4] for r in w["instructions"]] == ["SMEM", "VALU", "VALU", "IMMED", "MESSAGE"]
    assert sorted(o[:6] for o in d["occupancy"])[0] == [2, 0, 0, 0, 0, 50]


def test_human_summary(tiny):
    p = run("--arch", "gfx1100", tiny)
    assert p.returncode == 0
    header, row = p.stdout.splitlines()[:2]
    assert header.split()[:3] == ["blob", "se", "waves"]
    assert row.split()[:6] == [
        "tiny_se2.att",
        "2",
        "1",
        "1",
        "5",
        "5",
    ]  # 1 wave, traced, 5 records, no code: 5 without pc


def test_se_override_and_missing_se(tmp_path, tiny):
    other = tmp_path / "blob.att"
    other.write_bytes(tiny.read_bytes())
    one_line_error(run("--arch", "gfx1100", other), "blob.att", "--se")
    p = run("--arch", "gfx1100", "--se", "5", other, "--format", "json")
    assert json.loads(p.stdout)["dispatches"][0]["waves"][0]["se"] == 5


def test_truncated_blob_decodes_what_it_has(tmp_path, tiny):
    cut = tmp_path / "cut_se0.att"
    cut.write_bytes(tiny.read_bytes()[:40])
    p = run("--arch", "gfx1100", cut, "--format", "json")
    assert p.returncode == 3 and "Traceback" not in p.stderr  # decoded, but damaged
    assert "truncated" in p.stderr and "byte" in p.stderr and "cut_se0.att" in p.stderr
    assert json.loads(p.stdout)["dispatches"][0]["occupancy"]  # what came before the cut


def test_random_bytes(tmp_path):
    f = tmp_path / "noise_se0.att"
    f.write_bytes(random.Random(3000).randbytes(3000))  # seeded: the same bytes every run
    p = run("--arch", "gfx1100", f)
    if p.returncode == 1:  # no header: refused in one line
        one_line_error(p, "noise_se0.att")
    else:  # (a lucky header byte) decoded with reported sync loss
        assert p.returncode == 3 and ("lost sync" in p.stderr or "truncated" in p.stderr)


def test_header_then_garbage_reports_lost_sync(tmp_path, tiny):
    f = tmp_path / "garbage_se0.att"
    f.write_bytes(tiny.read_bytes()[:8] + bytes((i * 37 + 11) % 256 for i in range(5000)))
    p = run("--arch", "gfx1100", f)
    assert p.returncode == 3 and "lost sync" in p.stderr and "byte" in p.stderr


def test_wrong_arch(tiny):
    one_line_error(run("--arch", "gfx1201", tiny), "gfx11", "gfx1201")
    one_line_error(run("--arch", "gfx90a", tiny), "gfx11")
    one_line_error(run("--arch", "banana", tiny), "banana")


def test_empty_and_missing_file(tmp_path):
    e = tmp_path / "empty_se0.att"
    e.write_bytes(b"")
    one_line_error(run("--arch", "gfx1100", e), "empty_se0.att", "empty")
    one_line_error(run("--arch", "gfx1100", tmp_path / "nope_se0.att"), "nope_se0.att", "no such file")


def test_bad_code_spec(tiny, tmp_path):
    one_line_error(run("--arch", "gfx1100", "--code", "x.co", tiny), "FILE@LOADBASE")
    one_line_error(run("--arch", "gfx1100", "--code", f"{tmp_path / 'x.co'}@0x1000", tiny), "no such file")


def _first_blob(cap):
    return cap / json.loads((cap / "capture.json").read_text())["dispatches"][0]["blobs"][0]


def test_code_object_of_another_arch():
    blob = _first_blob(SYNTHETIC_CAPTURES["gfx1100"])
    co9 = FIXTURES / "isa" / "dwarf4_gfx942.co"
    one_line_error(run("--arch", "gfx1100", "--code", f"{co9}@0x7fff00000000", blob), "gfx942", "gfx1100")


def test_code_object_of_another_arch_real():
    cap = shared_path("captures", "gfx1100", "gemm_run0")
    co12 = next(shared_path("captures", "gfx1201", "gemm_run0").glob("*.co"))
    p = run("--arch", "gfx1100", "--code", f"{co12}@0x200001006000", cap / "r_32_32_16_2_1_se0.att")
    one_line_error(p, "gfx1201", "gfx1100")


@pytest.mark.parametrize("cap", captures("gfx1100/gemm_run0", synthetic=("gfx1100",)))
def test_code_object_of_another_kernel(cap):
    co = next(cap.glob("*.co"))
    p = run("--arch", "gfx1100", "--code", f"{co}@0x300000000000", _first_blob(cap), "--format", "json")
    assert p.returncode == 3 and "not in any loaded code object" in p.stderr


def test_conformance_every_rdna_capture():
    """AMD's decoder output (oracle.json) must be reproduced exactly on every gfx11/gfx12 capture."""
    tool = shared_path("tools", "conformance.py")
    caps = [
        str(p)
        for a in ("gfx1100", "gfx1200", "gfx1201")
        for p in sorted((SHARED / "captures" / a).iterdir())
        if (p / "oracle.json").exists() or (p / "oracle.json.gz").exists()
    ]
    p = subprocess.run(
        [sys.executable, str(tool), "--attdec", f"env PYTHONPATH={ROOT} {sys.executable} -m attdec", "--strict", *caps],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert p.returncode == 0 and ", 0 failed" in p.stdout, p.stdout[-3000:]
    assert "(100.0%), instruction rows" in p.stdout


@pytest.mark.parametrize(
    "root",
    [
        pytest.param(SYNTHETIC_CAPTURES["gfx1100"].parent, id="synthetic-gfx1100"),
        *[
            pytest.param(SHARED / "captures" / a, id=a)
            for a in ("gfx1100", "gfx1151", "gfx1200", "gfx1201")
            if real_data("captures", a)
        ],
    ],
)
def test_captures_without_oracle_decode_cleanly(root):
    """Captures kept back from us (no oracle.json) decode without error or problem."""
    n = 0
    for cap_dir in sorted(root.iterdir()):
        if (cap_dir / "oracle.json").exists() or cap_dir.name == "gemm_gfx1200_run0":
            continue
        cap = json.loads((cap_dir / "capture.json").read_text())
        for disp in cap["dispatches"]:
            args = ["--arch", cap["gfx_arch"]]
            for k in cap["kernels"]:
                if k["name"] == disp["kernel"]:
                    args += ["--code", f"{k['code_object']}@{k['base_hex']}"]
            p = run(*args, *disp["blobs"], "--format", "json", cwd=cap_dir)
            assert p.returncode == 0 and "Traceback" not in p.stderr, (cap_dir, p.stderr)
            assert "lost sync" not in p.stderr and "truncated" not in p.stderr, (cap_dir, p.stderr)
            json.loads(p.stdout)
            n += 1
    assert n > 0


@pytest.mark.parametrize(
    "cap_dir,oracle_file",
    oracle_captures(
        "gfx1100/gemm_run0",
        "gfx1200/sync_run0",
        "gfx1201/handwritten_run0",
        synthetic=(SYNTHETIC_CAPTURES["gfx1100"], SYNTHETIC_MORE, SYNTHETIC_CAPTURES["gfx942"]),
    ),
)
def test_wave_state_timelines_match_oracle(cap_dir, oracle_file):
    """The per-wave state timeline (EMPTY/IDLE/EXEC/WAIT/STALL durations) of every traced wave."""
    cap = json.loads((cap_dir / "capture.json").read_text())
    oracle = {(d["kernel"], d["exec_tag"]): d for d in json.loads(oracle_file.read_text())["dispatches"]}
    for disp in cap["dispatches"]:
        codes = [f"{k['code_object']}@{k['base_hex']}" for k in cap["kernels"] if k["name"] == disp["kernel"]]
        args = ["--arch", cap["gfx_arch"]] + [a for c in codes for a in ("--code", c)]
        p = run(*args, *disp["blobs"], "--format", "json", cwd=cap_dir)
        got = {
            (w["se"], w["cu"], w["simd"], w["wave_id"], w["begin_time"]): w["timeline"]
            for w in json.loads(p.stdout)["dispatches"][0]["waves"]
        }
        exp = oracle[(disp["kernel"], disp["exec_tag"])]["waves"]
        assert exp
        for w in exp:
            tl = [[s["type"], s["duration"]] if isinstance(s, dict) else list(s) for s in w["timeline"]]
            assert got[(w["se"], w["cu"], w["simd"], w["wave_id"], w["begin_time"])] == tl


@pytest.mark.parametrize(
    "name,se", [("k_1_se3.att", 3), ("run/shader_engine_12_x.att", 12), ("se1_k_se0.att", 0), ("kernel.att", None)]
)
def test_se_from_file_name(name, se):
    from attdec.sources.explicit import se_of

    assert se_of(name) == se


@pytest.mark.parametrize("cap", captures("gfx1100", synthetic=("gfx1100",)))
def test_json_is_written_as_a_stream(cap):
    """decode --format json never holds the document as one string: it is written in pieces of a wave."""
    from attdec.report import records
    from attdec.sources.pipeline import open_raw
    from attdec.sources.raw import decode_blobs

    raws = open_raw([cap])
    sizes: list[int] = []

    class Sink:
        def write(self, s: str) -> None:
            sizes.append(len(s))

    waves = [0]

    def counted(r):
        for b, res, dt in decode_blobs(r):
            waves[0] += len(res.waves)
            yield b.label, res, dt

    records.write_json(((r.name, counted(r)) for r in raws), Sink())
    assert sum(sizes) > 10 * max(sizes) and len(sizes) > waves[0] > 0
