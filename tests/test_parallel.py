"""--jobs: raw dispatches decoded in worker processes give exactly what decoding them here gives."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED, SYNTHETIC_MORE, captures, invoke, real_data, repeated_capture

import attdec
from attdec.errors import ArchError, WorkerError
from attdec.model.options import DecodeOptions
from attdec.model.target import target
from attdec.sources import parallel
from attdec.sources.kind import Tracker, raw_weight
from attdec.sources.pipeline import open_raw


@pytest.fixture(autouse=True)
def small_pools(monkeypatch):
    """The captures here are small: let a pool start from 32 weight units (256 KiB of SQTT) so these tests
    compare what workers decode with what this process decodes."""
    monkeypatch.setattr(parallel, "MIN_PARALLEL_WEIGHT", 32)


def _same_dispatch(a, b) -> None:
    assert (a.name, a.kernel, a.target, a.problems, a.resources) == (
        b.name,
        b.kernel,
        b.target,
        b.problems,
        b.resources,
    )
    assert [vars(c) for c in a.code] == [vars(c) for c in b.code]
    assert np.array_equal(a.occupancy, b.occupancy)
    assert len(a.waves) == len(b.waves)
    for w, v in zip(a.waves, b.waves):
        assert (w.se, w.cu, w.simd, w.slot, w.seq, w.begin, w.end, w.contexts) == (
            v.se,
            v.cu,
            v.simd,
            v.slot,
            v.seq,
            v.begin,
            v.end,
            v.contexts,
        )
        assert np.array_equal(w.insts, v.insts)
        assert [tuple(x) for x in w.timeline] == [tuple(x) for x in v.timeline]


@pytest.fixture
def pool_for_small(monkeypatch):
    """A synthetic capture is far below the work a pool pays for: lower that bar for it (real data keeps it)."""

    def lower(cap):
        if SHARED not in cap.parents:
            monkeypatch.setattr(parallel, "MIN_PARALLEL_WEIGHT", 0)
            monkeypatch.setattr(parallel, "MAX_SHARE", 1.0)

    return lower


@pytest.mark.parametrize("cap", captures("gfx1201", "gfx950", synthetic=("gfx1100",)))
def test_workers_decode_what_serial_decodes(cap, pool_for_small):
    pool_for_small(cap)
    paths = [cap]
    assert parallel.workers_for([raw_weight(r) for r in open_raw(paths)], 2) == 2  # the pool is really used
    seen = []
    serial = attdec.open(paths, jobs=1)
    both = attdec.open(paths, jobs=2, progress=lambda label, done, total: seen.append((done, total)))
    assert len(serial) == len(both) > 1
    for a, b in zip(serial, both):
        _same_dispatch(a, b)
    assert seen and seen[-1][0] == seen[-1][1]  # progress reached its total


@pytest.mark.parametrize("cap", captures("gfx1201", synthetic=("gfx1100",)))
def test_an_error_is_raised_in_its_turn(cap, pool_for_small):
    pool_for_small(cap)
    raws = open_raw([cap])
    raws[1].target = target("gfx950")  # its code objects are RDNA: refused when that dispatch is decoded
    outcomes = list(parallel.decode_dispatches(raws, Tracker(), DecodeOptions(jobs=2)))
    assert [ok for ok, _ in outcomes] == [i != 1 for i in range(len(raws))]
    assert isinstance(outcomes[1][1], ArchError)
    with pytest.raises(ArchError):
        parallel.unwrap(outcomes[1])


def test_small_inputs_and_one_job_stay_here():
    assert parallel.workers_for([1, 2, 3], 2) == 1  # too little to pay for a pool
    assert parallel.workers_for([500, 500], 1) == 1
    assert parallel.workers_for([500], 4) == 1
    assert parallel.workers_for([500, 500, 500], 8) == 3
    assert parallel.workers_for([900, 10, 10], 2) == 1  # one dispatch is nearly all the work


@pytest.mark.parametrize("cap", captures("gfx1100", "gfx1200/gemm_gfx1200_run0", synthetic=("gfx1100",)))
def test_decode_command_jobs_same_json(cap, pool_for_small):
    pool_for_small(cap)
    tasks, weights = parallel._tasks(open_raw([cap]))
    assert parallel.workers_for(weights, 2) == 2
    if "gemm_gfx1200" in cap.name:  # one big dispatch: its blobs are decoded side by side
        assert any(blob is not None for _, blob in tasks)
    one = invoke(["decode", cap, "--format", "json", "--jobs", "1"])
    two = invoke(["decode", cap, "--format", "json", "--jobs", "2"])
    assert one.exit_code == two.exit_code == 0
    assert one.stdout == two.stdout and '"instructions"' in one.stdout
    assert invoke(["decode", cap, "--jobs", "0"]).exit_code == 2  # at least one


def _split_cases() -> list:
    """(how to get capture folders, whether their biggest dispatch is split across processes): synthetic, a
    capture with one blob repeated to most of the work (split), and two such captures (each big dispatch under
    half: whole; a dispatch under 1 MiB is never split); real, gemm_gfx1200_run0 among the gfx1200 captures
    (split) and among all 59 (whole)."""
    params = [
        pytest.param(lambda tmp: [repeated_capture(tmp / "a", 4000)], True, id="synthetic-one"),
        pytest.param(lambda tmp: [repeated_capture(tmp / "a", 4000), repeated_capture(tmp / "b", 4000)], False,
                     id="synthetic-two"),
    ]  # fmt: skip
    if real_data("captures", "gfx1200"):
        params.append(pytest.param(lambda _: [SHARED / "captures/gfx1200"], True, id="gfx1200"))
        params.append(pytest.param(lambda _: [SHARED / "captures"], False, id="all"))
    return params


@pytest.mark.parametrize("folders,split", _split_cases())
def test_a_big_dispatch_is_split_only_beyond_a_process_share(tmp_path, folders, split):
    """Its blobs decoded side by side cost a second load of its code; worth it only when it is more than
    one process's share of the work (gemm_gfx1200_run0 is half of the 59 captures: whole there)."""
    raws = open_raw(folders(tmp_path))
    share = sum(parallel._tasks(raws)[1]) / 2
    tasks, weights = parallel._tasks(raws, share)
    assert any(blob is not None for _, blob in tasks) == split
    assert sum(weights) == sum(parallel._tasks(raws)[1])


@pytest.mark.parametrize("cap", captures("gfx1200", synthetic=("gfx1100",)))
def test_decode_command_jobs_same_summary(cap, pool_for_small):
    """The text summary is reduced where each blob is decoded (records.summarize): the same rows, bar the
    time column, whichever process decoded them."""
    pool_for_small(cap)
    assert parallel.workers_for(parallel._tasks(open_raw([cap]))[1], 2) == 2

    def rows(out: str) -> list[list[str]]:
        return [line.split()[:-1] for line in out.splitlines()]

    one = invoke(["decode", cap, "--jobs", "1"])
    two = invoke(["decode", cap, "--jobs", "2"])
    assert one.exit_code == two.exit_code == 0
    assert rows(one.stdout) == rows(two.stdout) and len(rows(one.stdout)) > 2
    assert any(r[5] != "0" for r in rows(one.stdout)[1:])  # instruction records were counted


@pytest.mark.parametrize("command", ["hotspots", "waves", "waits", "cfg", "loops", "kernel", "export-ui"])
def test_every_decoding_command_passes_jobs_on(monkeypatch, tmp_path, command):
    """--jobs travels with the other input options to the pipeline (no command drops it)."""
    from pathlib import Path

    import attdec

    seen = []
    real = parallel.workers_for
    monkeypatch.setattr(parallel, "workers_for", lambda weights, jobs: seen.append(jobs) or real(weights, 1))
    demo = Path(attdec.__file__).parent / "data" / "demo_raw"
    args = [command, str(demo), "--jobs", "3"] + (["-o", str(tmp_path / "out")] if command == "export-ui" else [])
    assert invoke(args).exit_code == 0
    assert seen and set(seen) == {3}


def test_handout_heaviest_first_then_by_code_objects():
    """A free worker takes the heaviest item first, then the items whose code objects it has loaded."""
    h = parallel._Handout([1, 1, 9, 1, 1, 1], [("a",), ("b",), None, ("a",), ("b",), ("a",)], 2)
    assert h.pick(0) == 2  # the heavy one (a big blob: no code affinity)
    assert h.pick(1) == 0  # worker 1 meets code "a"
    assert h.pick(0) == 1  # "a" is worker 1's: worker 0 takes "b"
    assert [h.pick(1), h.pick(1)] == [3, 5]  # worker 1's own "a" items, though 4 is older
    assert h.pick(0) == 4
    assert h.flying == 14 and not h.pending


def test_a_bug_in_a_worker_is_raised_with_its_traceback():
    def work(x: int) -> int:
        if x == 30:
            raise ValueError("boom in the worker")
        return x * 2

    got = []
    # as soon as it is known: a RuntimeError from a worker, the error itself when this process decoded it
    with pytest.raises((RuntimeError, ValueError), match="boom in the worker"):
        for outcome in parallel.map_in_order(work, list(range(40)), [100] * 40, 2):  # enough for a pool
            got.append(parallel.unwrap(outcome))
    assert got == [2 * x for x in range(len(got))] and len(got) <= 30


def test_a_worker_that_dies_is_an_error_not_a_closed_pipe():
    import os

    def work(x: int) -> int:
        if os.getpid() != parent:
            os._exit(9)  # the worker is killed (the OOM killer, a signal): its pipes close mid-run
        return x

    parent = os.getpid()
    # not BrokenPipeError, which the command line takes for `attdec ... | head` and ends with status 0
    with pytest.raises(WorkerError, match="worker process ended unexpectedly"):  # one error line, no traceback
        for _ in parallel.map_in_order(work, list(range(200)), [100] * 200, 2):
            pass


def test_writing_to_a_dead_worker_is_not_a_broken_stdout():
    mine, theirs = parallel._Channel.pair()
    theirs.close()
    with pytest.raises(EOFError):  # (a BrokenPipeError here would end `attdec` quietly, with status 0)
        mine.sendall(b"x" * 100)
    mine.close()


def test_the_progress_bar_runs_no_thread(monkeypatch):
    """Workers are forked while the bar is up (a ui_output folder's waves read, then raw captures decoded):
    with a thread running (rich's refresh thread), a child can deadlock on a lock it held; Python 3.12+
    warns "This process is multi-threaded, use of fork() may lead to deadlocks"."""
    import io
    import threading

    from attdec.report.progress import progress_bar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Terminal()
    monkeypatch.setattr("sys.stderr", term)
    before = threading.active_count()
    with progress_bar(minimum=10) as progress:
        assert progress is not None
        for i in range(1, 101):
            progress("capture", i, 100)
            assert threading.active_count() == before
    assert "100/100" in term.getvalue()  # drawn, the last state included


def _pmc_profile(capture, dispatches: int) -> bytes:
    """A tinygrad profile of one capture's dispatch run `dispatches` times, each with its PMC buffer and a
    schedule of `PMCSample` objects, as tinygrad pickles it."""
    import json
    import pickle
    import sys
    import types

    cap = json.loads((capture / "capture.json").read_text())
    kernel, pmc = cap["kernels"][0], cap["pmc"][0]
    blobs = next(d for d in cap["dispatches"] if d["kernel"] == kernel["name"])["blobs"]
    mod = types.ModuleType("tinygrad.device")
    names = ("ProfileDeviceEvent", "ProfileProgramEvent", "ProfileSQTTEvent", "ProfilePMCEvent", "PMCSample")
    classes = {n: type(n, (), {"__module__": "tinygrad.device"}) for n in names}
    for n, c in classes.items():
        setattr(mod, n, c)

    def obj(cls: str, **state):
        o = classes[cls]()
        o.__dict__.update(state)
        return o

    events = [
        obj("ProfileDeviceEvent", device="AMD", props={"gfx_target_version": cap["gfx_target_version"]}),
        obj(
            "ProfileProgramEvent",
            device="AMD",
            name=kernel["name"],
            lib=(capture / kernel["code_object"]).read_bytes(),
            base=int(kernel["base"]),
            tag=1,
        ),
    ]
    pmc_bytes = (capture / pmc["file"]).read_bytes()
    for tag in range(dispatches):
        for b in blobs:
            se = int(b.rsplit("_se", 1)[1].split(".")[0])
            data = (capture / b).read_bytes()
            events.append(obj("ProfileSQTTEvent", device="AMD", kern=1, se=se, blob=data, itrace=True, exec_tag=tag))
        sched = [obj("PMCSample", **entry) for entry in pmc["sched"]]
        events.append(obj("ProfilePMCEvent", device="AMD", kern=1, exec_tag=tag, sched=sched, blob=pmc_bytes))
    saved = {k: sys.modules.get(k) for k in ("tinygrad", "tinygrad.device")}
    sys.modules.update({"tinygrad": types.ModuleType("tinygrad"), "tinygrad.device": mod})
    try:
        return pickle.dumps(events, protocol=4)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def _pmc_captures() -> list:
    """(capture with PMC buffers, dispatches to make of it: past 2 MiB of work, a counter it has)."""
    params = [pytest.param(SYNTHETIC_MORE, 130, "SQ_WAVES", id="synthetic")]
    if real_data("captures", "gfx1100", "plus_run0"):
        params.append(pytest.param(SHARED / "captures/gfx1100/plus_run0", 100, "SQ_BUSY_CYCLES", id="plus"))
    return params


@pytest.mark.parametrize("cap,copies,counter", _pmc_captures())
def test_a_profile_with_pmc_samples_decodes_on_workers(tmp_path, cap, copies, counter):
    """PMC schedules (tinygrad `PMCSample`s, rebuilt as records of classes made at run time) travel back from
    the workers as plain data: the command ends, with what one process gives."""
    from conftest import run_subprocess

    profile = tmp_path / "profile.pkl"
    profile.write_bytes(_pmc_profile(cap, copies))
    from attdec.sources import tinygrad

    raws = tinygrad.load(profile)
    assert len(raws) == copies and all(r.counters for r in raws)
    weights = [raw_weight(r) for r in raws]
    assert sum(weights) >= (2 << 20) // parallel.UNIT  # a pool in the command line too (no small_pools there)
    assert parallel.workers_for(weights, 2) == 2
    runs = [run_subprocess("counters", profile, "--jobs", str(j), "--format", "json", timeout=120) for j in (1, 2)]
    assert [r.returncode for r in runs] == [0, 0], runs[1].stderr
    assert runs[0].stdout == runs[1].stdout and counter in runs[0].stdout


@pytest.fixture
def no_hang():
    """A hang fails the test (an exception raised from SIGALRM ends a wait in select or read)."""
    import signal

    def fail(*_):
        raise TimeoutError("hung: still waiting after 120 s")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(120)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


class _Unpicklable:
    def __reduce__(self):
        raise TypeError("cannot pickle this on purpose")


def test_a_result_that_cannot_be_sent_back_is_one_error_line_not_a_hang(no_hang):
    import os

    parent = os.getpid()

    def work(x: int):
        return _Unpicklable() if os.getpid() != parent else x

    got = []
    with pytest.raises(WorkerError, match=r"cannot be sent back .*cannot pickle this on purpose"):
        for outcome in parallel.map_in_order(work, list(range(40)), [100] * 40, 2):
            got.append(parallel.unwrap(outcome))
    assert got == list(range(len(got))) and len(got) < 40


def test_a_worker_killed_mid_run_is_one_error_line_not_a_hang(no_hang):
    import os
    import signal
    import time

    parent = os.getpid()

    def work(x: int) -> int:
        if os.getpid() != parent:
            time.sleep(0.01)  # a worker busy decoding when it is killed
        return x

    killed = []

    def done(i: int) -> None:
        if i >= 10 and not killed:  # mid-run: the pool is up and has results in flight
            (pid,) = _children()
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    with pytest.raises(WorkerError, match="worker process ended unexpectedly"):
        for _ in parallel.map_in_order(work, list(range(400)), [100] * 400, 2, done):
            pass
    assert killed


def _children() -> list[int]:
    """This process's child processes (Linux)."""
    import os

    me = os.getpid()
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                out.append(int(entry))
    return out
