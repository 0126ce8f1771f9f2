"""What the user named with -o, and only that, is written (docs/reliability.md, "Outputs"): regular files
atomically with their permission bits, symlinks through to their target, fifos and stdout directly, read-only
files and the command's own inputs refused, export-ui folders swapped in whole; a full disk, Ctrl-C and SIGTERM
end a run with one line, the earlier output intact and no temporary file left."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import ROOT, SHARED, cli, one_line_error, real_data, repeated_capture

from attdec.errors import InputError
from attdec.report.output import open_output

DEMO_RAW = ROOT / "attdec" / "data" / "demo_raw"
DEMO_UI = ROOT / "attdec" / "data" / "demo"


def _capture(tmp_path: Path) -> Path:
    cap = tmp_path / "cap"
    shutil.copytree(DEMO_RAW, cap)
    return cap


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith((".tmp", ".old")))


def _subprocess(code: str, *args, limit_bytes: int | None = None, **kw) -> subprocess.CompletedProcess:
    """`code` run in a fresh interpreter of this tree (under a file-size limit when given)."""

    def limit():
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    kw.setdefault("stdout", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=limit,
        timeout=300,
        **kw,
    )


# ---- special targets ------------------------------------------------------------------------------------
def test_a_fifo_is_written_into_and_stays_a_fifo(tmp_path):
    cap = _capture(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    r = cli("timeline", "-o", fifo, cap)
    reader.join(30)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert got and json.loads(got[0])["traceEvents"]


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    cap = _capture(tmp_path)
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target.name)
    r = cli("timeline", "-o", link, cap)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == target.name
    assert json.loads(target.read_text())["traceEvents"]


def test_a_link_to_this_process_stdout_writes_to_the_stream(tmp_path):
    """`-o /dev/stdout` (here a link to /proc/self/fd/1, so that no system path is touched)."""
    cap = _capture(tmp_path)
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    code = "import sys; from attdec.cli import main; main(sys.argv[1:])"
    p = _subprocess(code, "timeline", "-o", link, cap)
    assert p.returncode == 0, p.stderr
    assert link.is_symlink()
    assert json.loads(p.stdout)["traceEvents"]


def test_a_read_only_file_is_refused_like_cp(tmp_path):
    cap = _capture(tmp_path)
    out = tmp_path / "ro.json"
    out.write_text("keep")
    out.chmod(0o444)
    one_line_error(cli("timeline", "-o", out, cap), str(out), "read-only")
    assert out.read_text() == "keep" and stat.S_IMODE(out.stat().st_mode) == 0o444


def test_an_existing_file_keeps_its_permission_bits(tmp_path):
    cap = _capture(tmp_path)
    out = tmp_path / "t.json"
    out.write_text("old")
    out.chmod(0o640)
    assert cli("timeline", "-o", out, cap).returncode == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o640 and out.read_text() != "old"


# ---- output = input ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["kern_1_se0.att", "capture.json", "kern.co"])
@pytest.mark.parametrize("cmd", [["timeline"], ["decode", "--format", "json"], ["hotspots", "--format", "csv"]])
def test_an_output_that_is_a_file_of_the_capture_is_refused(tmp_path, name, cmd):
    cap = _capture(tmp_path)
    before = (cap / name).read_bytes()
    one_line_error(cli(*cmd, "-o", cap / name, cap), name, "one of the files this command reads")
    assert (cap / name).read_bytes() == before


def test_report_onto_the_code_json_it_reads_is_refused(tmp_path):
    ui = tmp_path / "ui"
    shutil.copytree(DEMO_UI, ui)
    code = next(ui.glob("ui_output_*/code.json"))
    before = code.read_bytes()
    one_line_error(cli("report", "-o", code, ui), "code.json", "one of the files this command reads")
    assert code.read_bytes() == before


def test_a_hard_link_or_symlink_to_an_input_is_refused(tmp_path):
    cap = _capture(tmp_path)
    blob = cap / "kern_1_se1.att"
    before = blob.read_bytes()
    os.link(blob, tmp_path / "hard.att")
    (tmp_path / "soft.att").symlink_to(blob)
    for out in ("hard.att", "soft.att"):
        one_line_error(cli("waves", "--format", "csv", "-o", tmp_path / out, cap), out, "kern_1_se1.att")
    assert blob.read_bytes() == before


def test_blob_given_with_code_is_refused_as_output(tmp_path):
    cap = _capture(tmp_path)
    co = cap / "kern.co"
    before = co.read_bytes()
    r = cli("decode", "--format", "json", "-o", co, "--code", f"{co}@0x7fff00000000", cap / "kern_1_se0.att")
    one_line_error(r, "kern.co", "one of the files this command reads")
    assert co.read_bytes() == before


def test_an_output_next_to_the_input_folders_is_written(tmp_path):
    """`report -o runs/report.html runs` again: the earlier report is no input, only the capture under it."""
    runs = tmp_path / "runs"
    _capture(runs)
    (runs / "report.html").write_text("earlier")
    r = cli("report", "-o", runs / "report.html", runs)
    assert r.returncode == 0, r.stderr
    assert (runs / "report.html").read_text() != "earlier"


# ---- a target that changed meanwhile ------------------------------------------------------------------------
def test_a_file_changed_while_the_command_ran_is_not_clobbered(tmp_path):
    out = tmp_path / "o.txt"
    out.write_text("old")
    target = open_output(out)
    with pytest.raises(InputError, match="changed while this command ran"), target as f:
        f.write("new")
        out.write_text("someone else's, longer")
    assert out.read_text() == "someone else's, longer"
    assert _leftovers(tmp_path) == []


def test_a_file_that_appeared_while_the_command_ran_is_not_clobbered(tmp_path):
    out = tmp_path / "o.txt"
    target = open_output(out)
    with pytest.raises(InputError, match="appeared while this command ran"), target as f:
        f.write("new")
        out.write_text("someone else's")
    assert out.read_text() == "someone else's"
    assert _leftovers(tmp_path) == []


def test_api_save_goes_through_the_same_rules(tmp_path):
    import attdec

    out = tmp_path / "ro.npz"
    out.write_bytes(b"keep")
    out.chmod(0o444)
    with pytest.raises(InputError, match="read-only"):
        attdec.save(out, t={"a": [1, 2]})
    assert out.read_bytes() == b"keep"


# ---- export-ui: each dispatch folder swapped in whole -------------------------------------------------------
def _export(tmp_path: Path) -> tuple[Path, Path, dict[str, bytes]]:
    ex = tmp_path / "ex"
    assert cli("export-ui", "-o", ex, DEMO_RAW).returncode == 0
    folder = next(ex.glob("ui_output_*"))
    return ex, folder, {p.name: p.read_bytes() for p in folder.iterdir()}


def test_an_interrupted_export_leaves_the_earlier_one_whole(tmp_path, monkeypatch):
    from attdec.report import ui_output

    ex, folder, before = _export(tmp_path)
    real, n = ui_output._dump, []

    def dump(path, obj):
        n.append(path)
        if len(n) == 3:
            raise KeyboardInterrupt
        real(path, obj)

    monkeypatch.setattr(ui_output, "_dump", dump)
    r = cli("export-ui", "-o", ex, DEMO_RAW)
    assert r.returncode == 130 and r.stderr.strip() == "attdec: error: interrupted", r.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert _leftovers(ex) == []
    waves = cli("waves", "--format", "csv", ex)
    assert waves.returncode == 0 and len(waves.stdout.splitlines()) == 1 + 12


def test_a_re_export_replaces_its_files_and_keeps_the_users(tmp_path):
    ex, folder, before = _export(tmp_path)
    (folder / "notes.txt").write_text("mine")
    (folder / "se9_sm9_sl9_wv9.json").write_text("{}")  # a stale wave file of an earlier export
    assert cli("export-ui", "-o", ex, DEMO_RAW).returncode == 0
    assert (folder / "notes.txt").read_text() == "mine"
    assert not (folder / "se9_sm9_sl9_wv9.json").exists()
    assert {p.name for p in folder.iterdir()} == {*before, "notes.txt"}
    assert _leftovers(ex) == []


def test_a_left_temporary_folder_is_not_read_as_a_dispatch(tmp_path):
    ex, folder, _ = _export(tmp_path)
    shutil.copytree(folder, ex / f".{folder.name}.999999.tmp")  # a run killed with SIGKILL mid-write
    r = cli("waves", "--format", "csv", ex)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1 + 12


# ---- a full disk, Ctrl-C, SIGTERM ---------------------------------------------------------------------------
MAIN = "import sys; from attdec.cli import main; main(sys.argv[1:])"


@pytest.mark.parametrize(
    "cmd",
    [
        ["timeline", "-o", "{out}"],
        ["decode", "--format", "json", "-o", "{out}"],
        ["decode", "--format", "npz", "-o", "{out}"],
        ["report", "-o", "{out}"],
        ["waves", "--format", "json", "-o", "{out}"],
    ],
)
def test_a_full_disk_is_one_line_and_the_earlier_file_stays(tmp_path, cmd):
    cap = _capture(tmp_path)
    out = tmp_path / "out"
    out.write_bytes(b"earlier")
    p = _subprocess(MAIN, *[c.format(out=out) for c in cmd], cap, limit_bytes=4096)
    one_line_error(p, str(out), "File too large")
    assert out.read_bytes() == b"earlier"
    assert _leftovers(tmp_path) == []


def test_a_full_disk_under_redirected_stdout_is_one_line(tmp_path):
    cap = _capture(tmp_path)
    with open(tmp_path / "out", "w") as f:
        p = _subprocess(MAIN, "decode", "--format", "json", cap, limit_bytes=4096, stdout=f)
    one_line_error(p, "cannot write", "File too large")


def test_ctrl_c_is_one_line_and_130(tmp_path, monkeypatch):
    from attdec.report import trace_events

    cap = _capture(tmp_path)
    out = tmp_path / "t.json"
    out.write_text("earlier")

    def interrupted(*a, **k):
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(trace_events, "write_trace", interrupted)
    r = cli("timeline", "-o", out, cap)
    assert (r.returncode, r.stderr) == (130, "attdec: error: interrupted\n")
    assert out.read_text() == "earlier" and _leftovers(tmp_path) == []


SIGTERM_MIDWAY = """
import os, signal, sys
from attdec.report import trace_events
real = trace_events.write_trace
def write_trace(out, *a, **k):
    out.write("x" * 100000)
    os.kill(os.getpid(), signal.SIGTERM)
    return real(out, *a, **k)
trace_events.write_trace = write_trace
from attdec.cli import main
main(sys.argv[1:])
"""


def test_sigterm_removes_the_temporary_file_and_exits_143(tmp_path):
    cap = _capture(tmp_path)
    out = tmp_path / "t.json"
    out.write_text("earlier")
    p = _subprocess(SIGTERM_MIDWAY, "timeline", "-o", out, cap)
    assert (p.returncode, p.stderr) == (143, "attdec: error: terminated\n")
    assert out.read_text() == "earlier" and _leftovers(tmp_path) == []


SIGTERM_AMID_WORKERS = """
import os, signal, sys
from attdec.sources import parallel
real = parallel.map_in_order
def map_in_order(*a, **k):
    for n, outcome in enumerate(real(*a, **k)):
        if n == 1:
            os.kill(os.getpid(), signal.SIGTERM)
        yield outcome
parallel.map_in_order = map_in_order
from attdec.cli import main
main(sys.argv[1:])
"""


def _many_dispatches() -> list:
    """(how to get captures worth a pool of workers: over 2 MiB of SQTT): two synthetic captures each with a
    blob repeated to ~1.1 MiB, then the real gfx1200 captures where ../shared has them."""

    def synthetic(tmp):
        for name in ("a", "b"):
            repeated_capture(tmp / "caps" / name, 4000)
        return tmp / "caps"

    params = [pytest.param(synthetic, id="synthetic")]
    if real_data("captures", "gfx1200"):
        params.append(pytest.param(lambda _: SHARED / "captures/gfx1200", id="gfx1200"))
    return params


@pytest.mark.parametrize("make", _many_dispatches())
def test_sigterm_with_workers_running_is_one_line_and_no_worker_traceback(tmp_path, make):
    captures = make(tmp_path)
    out = tmp_path / "d.json"
    p = _subprocess(SIGTERM_AMID_WORKERS, "decode", "--format", "json", "--jobs", "2", "-o", out, captures)
    assert p.returncode == 143, p.stderr
    assert [ln for ln in p.stderr.splitlines() if not ln.startswith("attdec: warning:")] == [
        "attdec: error: terminated"
    ]
    assert not out.exists() and _leftovers(tmp_path) == []


# ---- the fault classes of tools/fuzzers/fuzz.py run and judge ------------------------------------------------------
@pytest.mark.parametrize("fault", ["special_output", "output_is_input", "full_disk"])
def test_fault_cases_pass_on_this_tree(tmp_path, fault):
    from tools.fuzzers import fuzz

    corpus = fuzz.Corpus.load(None)
    for index in range(3):
        root = tmp_path / str(index)
        root.mkdir()
        c = fuzz.FAULTS[fault](fuzz.random.Random(f"1:fault:{index}"), corpus, root)
        before = fuzz._tree_digest(root)
        ran = fuzz.run_fault(c, ROOT)
        status, detail = fuzz.judge_fault(c, ran, before, fuzz._tree_digest(root))
        assert status in ("ok", "refused", "stopped"), (c.what, detail, ran.stderr)
