"""--jobs: raw dispatches decoded in worker processes give exactly what decoding them here gives."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import invoke, shared_path

from attdec.errors import ArchError
from attdec.sources import parallel
from attdec.sources.kind import Tracker, raw_weight
from attdec.sources.pipeline import open_dispatches, open_raw


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


@pytest.mark.parametrize("arch", ["gfx1201", "gfx950"])
def test_workers_decode_what_serial_decodes(arch):
    paths = [shared_path("captures", arch)]
    assert parallel.workers_for([raw_weight(r) for r in open_raw(paths)], 2) == 2  # the pool is really used
    seen = []
    serial = open_dispatches(paths, jobs=1)
    both = open_dispatches(paths, jobs=2, progress=lambda label, done, total: seen.append((done, total)))
    assert len(serial) == len(both) > 1
    for a, b in zip(serial, both):
        _same_dispatch(a, b)
    assert seen and seen[-1][0] == seen[-1][1]  # progress reached its total


def test_an_error_is_raised_in_its_turn():
    raws = open_raw([shared_path("captures", "gfx1201")])
    raws[1].arch = "gfx950"  # its code objects are gfx1201: refused when that dispatch is decoded
    outcomes = list(parallel.decode_dispatches(raws, Tracker(), jobs=2))
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


@pytest.mark.parametrize("rel", ["gfx1100", "gfx1200/gemm_gfx1200_run0"])
def test_decode_command_jobs_same_json(rel):
    cap = shared_path("captures", *rel.split("/"))
    tasks, weights = parallel._tasks(open_raw([cap]))
    assert parallel.workers_for(weights, 2) == 2
    if "gemm" in rel:  # one big dispatch: its blobs are decoded side by side
        assert any(blob is not None for _, blob in tasks)
    one = invoke(["decode", cap, "--format", "json", "--jobs", "1"])
    two = invoke(["decode", cap, "--format", "json", "--jobs", "2"])
    assert one.exit_code == two.exit_code == 0
    assert one.stdout == two.stdout and '"instructions"' in one.stdout
    assert invoke(["decode", cap, "--jobs", "0"]).exit_code == 2  # at least one


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
