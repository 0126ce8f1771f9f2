"""`attdec decode` on gfx9 streams end to end: JSON, --target-cu, bad input, and conformance on gfx950."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time

import pytest
from conftest import FIXTURES, ROOT, captures, one_line_error, shared_path
from conftest import run_decode as run

from tests.support import sqtt_encoder as enc


def blob(tmp_path, data, name="demo_se3.att"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_json_from_synthesized_stream(tmp_path):
    p = run("--arch", "gfx950", blob(tmp_path, enc.demo().data()), "--format", "json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)["dispatches"][0]
    assert sorted((w["se"], w["simd"], w["wave_id"]) for w in d["waves"]) == [(3, 0, 0), (3, 1, 3)]
    w = next(w for w in d["waves"] if w["simd"] == 0)
    assert [r[4] for r in w["instructions"]] == ["SALU", "VALU", "IMMED", "MESSAGE"]
    assert len(d["occupancy"]) == 6 and all(o[0] == 3 for o in d["occupancy"])


def test_target_cu_override(tmp_path):
    e = enc.Gfx9Encoder(target_cu=16).wave_start(0, 1, 2).advance(4).issue(1, {2: 2}).inst(1, 2, 5).advance(4)
    e.wave_end(0, 1, 2)
    f = blob(tmp_path, e.data())
    header_cu = json.loads(run("--arch", "gfx942", f, "--format", "json").stdout)["dispatches"][0]
    assert [w["instructions"] for w in header_cu["waves"]] == [[]]  # INST for the header's (absent) CU 16
    cu0 = json.loads(run("--arch", "gfx942", f, "--target-cu", "0", "--format", "json").stdout)["dispatches"][0]
    (w,) = cu0["waves"]
    assert (w["cu"], [r[4] for r in w["instructions"]]) == (0, ["VALU"])


def test_truncated_blob_keeps_what_it_has(tmp_path):
    data = enc.demo().inst_pc(0, 0, 0x4000).data()
    p = run("--arch", "gfx950", blob(tmp_path, data[:-3]), "--format", "json")
    assert p.returncode == 3 and "Traceback" not in p.stderr  # decoded, but damaged
    assert "truncated token at byte offset" in p.stderr
    assert len(json.loads(p.stdout)["dispatches"][0]["waves"]) == 2


def test_random_bytes_behind_a_gfx9_header(tmp_path):
    rng = random.Random(11)
    body = bytes(rng.getrandbits(8) for _ in range(300_000))
    t0 = time.perf_counter()
    p = run("--arch", "gfx950", blob(tmp_path, enc.header() + body), "--format", "json")
    assert time.perf_counter() - t0 < 60
    assert p.returncode == (3 if "warning" in p.stderr else 0) and "Traceback" not in p.stderr
    json.loads(p.stdout)


def test_rdna_blob_with_gfx9_arch_and_garbage(tmp_path):
    rdna = blob(tmp_path, (FIXTURES / "rdna_gfx11_tiny.att").read_bytes(), "r_se0.att")
    one_line_error(run("--arch", "gfx950", rdna), "gfx11", "gfx950")
    one_line_error(run("--arch", "gfx942", blob(tmp_path, b"\x00" * 64, "z_se0.att")), "z_se0.att")
    one_line_error(run("--arch", "gfx90a", blob(tmp_path, b"\x11\x80", "short_se0.att")), "short_se0.att")


def test_conformance_gfx950():
    """AMD's decoder output (oracle.json) must be reproduced exactly on every gfx950 capture."""
    tool = shared_path("tools", "conformance.py")
    caps = [str(p) for p in sorted(shared_path("captures", "gfx950").iterdir()) if (p / "oracle.json").exists()]
    p = subprocess.run(
        [sys.executable, str(tool), "--attdec", f"env PYTHONPATH={ROOT} {sys.executable} -m attdec", "--strict", *caps],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert p.returncode == 0 and ", 0 failed" in p.stdout, p.stdout[-3000:]
    assert (
        "waves exact 64/64 (100.0%), instruction rows 232/232 (100.0%), occupancy rows 2052/2052 (100.0%)" in p.stdout
    )


@pytest.mark.parametrize(
    "cdir", captures("gfx950/empty_run1", "gfx950/gemm_run1", "gfx950/plus_run1", synthetic=("gfx942",))
)
def test_captures_without_oracle_decode_cleanly(cdir):
    cap = json.loads((cdir / "capture.json").read_text())
    k = cap["kernels"][0]
    blobs = [cdir / b for b in cap["dispatches"][0]["blobs"]]
    p = run(
        "--arch", cap["gfx_arch"], "--code", f"{cdir / k['code_object']}@{k['base_hex']}", *blobs, "--format", "json"
    )
    assert p.returncode == 0 and p.stderr == "", p.stderr
    d = json.loads(p.stdout)["dispatches"][0]
    assert d["occupancy"] and all(r[0] for w in d["waves"] for r in w["instructions"])  # every row has a PC
