"""attdec diff / attdec noise: self-diffs, edits with known deltas, alignment of changed code, the noise rule.

Fixtures are edited copies of the demo sample (attdec/data/demo) or of real ui_output folders, written by
tools/uiedit.py, whose code.json totals come from tools/uisynth.py's plain loop, not from attdec. Expected
deltas are the edit's size times the hit counts read straight from the source folder's code.json.
"""

from __future__ import annotations

import csv
import io
import json
import os
import statistics
import sys

import pytest
from conftest import FIXTURES, ROOT, cli, one_line_error, shared_path

from attdec.analysis.align import ADDED, CHANGED, REMOVED, SAME, align, matches, pair_lines
from attdec.analysis.compare import NOISE_K, Spread, significant, threshold

sys.path.insert(0, str(ROOT / "tools"))
import uiedit

DEMO = ROOT / "attdec" / "data" / "demo" / "ui_output_agent_4242_dispatch_7"
K = "/home/dev/demo/softmax_kernel.py"
PA_SMALL = ("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples", "pa_mqa_logits_fp4", "att_viewer")
PA_BIG = ("ui_output_samples", "jhinpan__flydsl-kernel-profiling", "examples", "pa_mqa_logits_fp4", "att_viewer", "big")


def run(*args) -> str:
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    return r.stdout


def js(*args) -> dict:
    return json.loads(run(*args, "--format", "json", "--top", "0"))


def code_rows(folder) -> dict[int, list]:
    """code.json rows by line id, read without attdec."""
    with open(os.path.join(folder, "code.json")) as f:
        return {r[2]: r for r in json.load(f)["code"]}


def edit(tmp, name, src=DEMO, **edits):
    """A copy of `src` with uiedit edits applied: edits = {method: [args tuple, ...]}."""
    f = uiedit.Folder(str(src))
    for method, calls in edits.items():
        for args in calls:
            getattr(f, method)(*args)
    return f.save(str(tmp / name / os.path.basename(src)))


def all_zero(row) -> bool:
    return all(v == 0 for v in row["delta"].values()) and row["significant"] is False


# ------------------------------------------------------------------------------------------ self-diff


@pytest.mark.parametrize("by", ["line", "instruction", "file", "type"])
def test_demo_diffed_with_itself_is_zero_and_within_noise(by):
    d = js("diff", DEMO, DEMO, "--by", by)
    assert d["unmatched"] == []
    (k,) = d["kernels"]
    assert k["name"] == "softmax_rows_0"
    assert k["before"]["cycles"] == sum(r[7] for r in code_rows(DEMO).values()) == k["after"]["cycles"]
    assert all_zero(k)
    assert k["alignment"] == {"same": 31, "changed": 0, "added": 0, "removed": 0}
    assert k["rows"] and k["by_type"]
    assert all(all_zero(r) for r in k["rows"] + k["by_type"])
    assert all(r["status"] in ("", "same") for r in k["rows"])


def test_real_capture_diffed_with_itself():
    gemm = shared_path("captures", "gfx1100", "gemm_run0")
    k = js("diff", gemm, gemm)["kernels"][0]
    assert k["by"] == "instruction"  # no line table in tinygrad's code objects
    assert all_zero(k) and all(all_zero(r) for r in k["rows"])
    assert k["before"]["cycles"] > 0


def test_repeated_runs_diffed_with_themselves_are_within_noise():
    runs = str(shared_path("captures", "gfx1100")) + "/gemm_run*"
    k = js("diff", runs, runs)["kernels"][0]
    assert len(k["runs"]["before"]) == 2 and len(k["runs"]["after"]) == 2
    assert all_zero(k) and all(all_zero(r) for r in k["rows"])
    # two runs that differ give a spread, hence a threshold
    assert k["noise"]["cycles"]["threshold"] > 0


# ------------------------------------------------------------------------------------------ known deltas


def test_slowed_lines_give_exact_deltas(tmp_path):
    rows = code_rows(DEMO)
    after = edit(tmp_path, "slow", slow_line=[(7, 50), (25, 3)])  # s_waitcnt vmcnt(0) @15, v_rcp @23
    d7, d25 = 50 * rows[7][6], 3 * rows[25][6]
    d = js("diff", DEMO, after)
    assert set(d) >= {"kernels", "unmatched"}  # the shape issue 15 asks for
    k = d["kernels"][0]
    assert set(k) >= {"name", "before", "after", "delta", "rows"}
    assert all(set(k[side]) >= {"cycles", "stall"} for side in ("before", "after", "delta"))
    assert all(set(r) >= {"key", "before", "after", "delta", "significant"} for r in k["rows"])
    assert k["delta"]["cycles"] == d7 + d25 == k["delta"]["stall"]
    assert k["delta"]["hits"] == 0
    assert k["delta_pct"]["cycles"] == pytest.approx(100 * (d7 + d25) / k["before"]["cycles"], abs=1e-3)
    by_key = {r["key"]: r for r in k["rows"]}
    assert by_key[f"{K}:15"]["delta"]["cycles"] == d7
    assert by_key[f"{K}:23"]["delta"]["cycles"] == d25
    assert all(all_zero(r) for key, r in by_key.items() if key not in (f"{K}:15", f"{K}:23"))
    assert [r["key"] for r in k["rows"][:2]] == [f"{K}:15", f"{K}:23"]  # ranked by |delta|
    types = {r["key"]: r["delta"]["stall"] for r in k["by_type"]}
    assert types["VMEM-wait"] == d7 and types["VALU"] == d25
    assert all(v == 0 for t, v in types.items() if t not in ("VMEM-wait", "VALU"))
    # one run per side: no noise estimate for the changed rows
    assert k["significant"] is None and by_key[f"{K}:15"]["significant"] is None


def test_file_rows_and_inline_frames(tmp_path):
    """Line 10 is inlined (warp_ops.py:8 -> softmax_kernel.py:17): --frame picks which line is charged."""
    rows = code_rows(DEMO)
    after = edit(tmp_path, "slow", slow_line=[(10, 5), (25, 3)])
    d10, d25 = 5 * rows[10][6], 3 * rows[25][6]
    h = "/home/dev/demo/warp_ops.py"

    def changed(*args):
        k = js("diff", DEMO, after, *args)["kernels"][0]
        return {r["key"]: r["delta"]["cycles"] for r in k["rows"] if r["delta"]["cycles"]}

    assert changed() == {f"{h}:8": d10, f"{K}:23": d25}
    assert changed("--frame", "outer") == {f"{K}:17": d10, f"{K}:23": d25}
    assert changed("--by", "file") == {h: d10, K: d25}
    assert changed("--by", "file", "--frame", "outer") == {K: d10 + d25}


def test_csv_md_and_table_say_the_same(tmp_path):
    after = edit(tmp_path, "slow", slow_line=[(7, 50)])
    d7 = 50 * code_rows(DEMO)[7][6]
    rows = list(csv.DictReader(io.StringIO(run("diff", DEMO, after, "--format", "csv"))))
    total = next(r for r in rows if r["kind"] == "total")
    assert int(total["delta_cycles"]) == d7 and total["significant_cycles"] == ""
    line = next(r for r in rows if r["kind"] == "line" and r["key"] == f"{K}:15")
    assert int(line["before_cycles"]) + d7 == int(line["after_cycles"])
    md = run("diff", DEMO, after, "--format", "md")
    assert "### softmax_rows_0" in md and "|---:|" in md and f"| +{d7} |" in md
    table = run("diff", DEMO, after)
    assert f"+{d7}" in table and "softmax_kernel.py:15" in table and "no noise estimate" in table


# ------------------------------------------------------------------------------------------ alignment


def test_align_unit():
    assert matches([1, 2, 3, 4], [1, 2, 9, 3, 4]) == [(0, 0), (1, 1), (2, 3), (3, 4)]
    assert (
        matches([1, 2, 1], [1]) == [(0, 0)] and matches([], [1]) == [] and matches([5, 5], [5, 5]) == [(0, 0), (1, 1)]
    )
    assert matches(list("xabcy"), list("zabcw")) == [(1, 1), (2, 2), (3, 3)]
    b = [("s_load a", "k:1"), ("v_add v1", "k:2"), ("v_mul v2", "k:2"), ("s_endpgm", "")]
    a = [("s_load a", "k:1"), ("v_add v1", "k:2"), ("s_nop 0", "k:2"), ("v_mul v3", "k:2"), ("s_endpgm", "")]
    al = align(b, a)
    assert al.pairs == [(0, 0, SAME), (1, 1, SAME), (None, 2, ADDED), (2, 3, CHANGED), (3, 4, SAME)]
    back = align(a, b)
    assert back.counts() == {SAME: 3, CHANGED: 1, ADDED: 0, REMOVED: 1}
    assert (2, None, REMOVED) in back.pairs
    # lines 2.. moved down by one (a source line inserted above): paired by content and shift
    shifted = [(t, s.replace("k:2", "k:3")) for t, s in b]
    assert pair_lines(b, shifted) == {("k", 1): ("k", 1), ("k", 2): ("k", 3)}
    assert align(b, shifted).counts()[SAME] == 4


def test_inserted_instruction_is_the_only_change(tmp_path):
    rows = code_rows(DEMO)
    after = edit(tmp_path, "ins", insert=[(8, "v_add_f32_e32 v9, v4, v4", rows[8][3], 12, 4)])
    k = js("diff", DEMO, after, "--by", "instruction")["kernels"][0]
    assert k["alignment"] == {"same": 31, "changed": 0, "added": 1, "removed": 0}
    (added,) = [r for r in k["rows"] if r["status"] == "added"]
    assert added["key"] == "v_add_f32_e32 v9, v4, v4"
    assert added["before"]["cycles"] == 0 and added["after"]["cycles"] == 12 * rows[8][6]
    assert added["after"]["stall"] == 4 * rows[8][6] and added["delta_pct"]["cycles"] is None
    assert k["rows"][0] is not None and k["rows"][0]["key"] == added["key"]
    assert all(all_zero(r) for r in k["rows"] if r["status"] == "same")
    # the instruction after it moved by 4 bytes and is still the same instruction
    moved = next(r for r in k["rows"] if r["line"] == 10)
    assert moved["status"] == "same" and moved["before_vaddr"] == rows[9][5] and moved["vaddr"] == rows[9][5] + 4
    assert k["delta"]["cycles"] == 12 * rows[8][6]
    line = next(r for r in js("diff", DEMO, after)["kernels"][0]["rows"] if r["key"] == f"{K}:17")
    assert line["delta"]["cycles"] == 12 * rows[8][6]
    # and the other way round it is removed
    back = js("diff", after, DEMO, "--by", "instruction")["kernels"][0]
    assert back["alignment"]["removed"] == 1 and back["alignment"]["same"] == 31


def test_changed_operands_are_paired(tmp_path):
    after = edit(tmp_path, "retext", retext=[(3, "v_lshlrev_b32_e32 v9, 2, v0")])
    k = js("diff", DEMO, after, "--by", "instruction")["kernels"][0]
    assert k["alignment"] == {"same": 30, "changed": 1, "added": 0, "removed": 0}
    (ch,) = [r for r in k["rows"] if r["status"] == "changed"]
    assert ch["before_text"] == "v_lshlrev_b32_e32 v1, 2, v0" and all_zero(ch)
    assert "v_lshlrev_b32_e32 v1, 2, v0 → v_lshlrev_b32_e32 v9, 2, v0" in run(
        "diff", DEMO, after, "--by", "instruction", "--top", "0"
    )


def test_source_lines_shifted_by_an_inserted_line(tmp_path):
    """softmax_kernel.py lines 17.. move down by one and an instruction is added on (new) line 19."""
    rows = code_rows(DEMO)
    after = edit(
        tmp_path,
        "shift",
        shift_source=[(K, 17, 1)],
        insert=[(16, "v_mov_b32_e32 v9, v4", f"{K}:19", 8, 0)],  # after line id 16, itself on :18 -> :19
    )
    k = js("diff", DEMO, after)["kernels"][0]
    by_key = {r["key"]: r for r in k["rows"]}
    assert f"{K}:24" in by_key and by_key[f"{K}:25"]["before_key"] == f"{K}:24"
    changed = {key: r["delta"]["cycles"] for key, r in by_key.items() if r["delta"]["cycles"]}
    assert changed == {f"{K}:19": 8 * rows[16][6]}
    assert by_key[f"{K}:19"]["before_key"] == f"{K}:18" and by_key[f"{K}:19"]["status"] == ""
    assert f"{K}:15" in by_key and "before_key" not in by_key[f"{K}:15"]  # above the insertion: unmoved
    assert js("diff", DEMO, after, "--by", "instruction")["kernels"][0]["alignment"] == {
        "same": 31,
        "changed": 0,
        "added": 1,
        "removed": 0,
    }


def test_inserted_instruction_in_real_listing_without_line_info(tmp_path):
    """pa_mqa_logits_fp4 has no source lines: the whole listing (726 instructions) is aligned by mnemonic."""
    src = next(shared_path(*PA_SMALL).glob("*/ui_output_agent_*"))
    rows = code_rows(src)
    mid = next(n for n in sorted(rows)[len(rows) // 2 :] if rows[n][6])  # an executed one past the middle
    after = edit(tmp_path, "pa", src=src, insert=[(mid, "s_nop 0", "", 4, 0)])
    k = js("diff", src, after)["kernels"][0]
    assert k["by"] == "instruction"
    n = sum(1 for r in rows.values() if not r[0].startswith(";"))
    assert k["alignment"] == {"same": n, "changed": 0, "added": 1, "removed": 0}
    (added,) = [r for r in k["rows"] if r["status"] == "added"]
    assert added["after"]["hits"] == rows[mid][6] and added["after"]["cycles"] == 4 * rows[mid][6]
    assert all(all_zero(r) for r in k["rows"] if r["status"] == "same")


# ------------------------------------------------------------------------------------------ noise


def test_spread_and_rule():
    s = Spread.of([100, 110])
    assert (s.median, s.mad, s.noise, s.lo, s.hi) == (105, 5, 5, 100, 110)  # two runs: MAD = half the range
    assert Spread.of([7]).mad is None and Spread.of([7]).noise is None
    assert Spread.of([1, 2, 9]).mad == 1
    assert Spread.of([1, 2, 9, 10, 11, 12, 13, 14]).noise == pytest.approx(2 * 0.5)  # MAD 2 x sqrt(2/8)
    before, far, near = Spread.of([100, 110]), Spread.of([200, 204]), Spread.of([120, 125])
    assert threshold(before, far) == NOISE_K * (5 + 2)
    assert significant(before, far) is True and significant(before, near) is False
    assert significant(before, Spread.of([140, 170])) is False  # far enough apart, but 140 < 105 + 4 x 20
    assert significant(Spread.of([100]), Spread.of([200])) is None
    assert significant(Spread.of([100]), Spread.of([100])) is False
    assert threshold(Spread.of([100]), far) == pytest.approx(NOISE_K * (2 + 2 * 2**0.5))  # borrowed MAD x sqrt 2
    assert significant(Spread.of([300, 300]), Spread.of([301, 301])) is True  # exact repeats: any change
    assert significant(Spread.of([100, 200, 300]), Spread.of([1000, 1000, 1000])) is True
    assert significant(Spread.of([100, 200, 1300]), Spread.of([1000, 1000, 1000])) is False  # 1000 in 100-1300


@pytest.fixture(scope="module")
def jittered(tmp_path_factory):
    """3 before runs and 3 after runs (random stall noise, sigma 6 cycles); after has line 7 slowed by 60."""
    tmp = tmp_path_factory.mktemp("jitter")
    for seed in (1, 2, 3):
        edit(tmp / "before", f"r{seed}", jitter=[(seed, 6)])
    for seed in (4, 5, 6):
        edit(tmp / "after", f"r{seed}", slow_line=[(7, 60)], jitter=[(seed, 6)])
    return tmp


def test_noise_marks_the_real_change(jittered):
    d = js("diff", jittered / "before", jittered / "after")
    (k,) = d["kernels"]
    assert len(k["runs"]["before"]) == 3 and len(k["runs"]["after"]) == 3
    top = k["rows"][0]
    assert top["key"] == f"{K}:15" and top["significant"] is True and k["significant"] is True
    for r in k["rows"] + k["by_type"] + [k]:
        for f in ("cycles", "stall"):
            # the mark is the documented rule, recomputed here from the runs the JSON lists
            b, a = r["values"]["before"][f], r["values"]["after"][f]
            mb, ma = statistics.median(b), statistics.median(a)
            noise = [statistics.median(abs(v - m) for v in vs) * (2 / len(vs)) ** 0.5 for vs, m in ((b, mb), (a, ma))]
            apart = not (min(b) <= ma <= max(b) or min(a) <= mb <= max(a))
            assert r["noise"][f]["significant"] == (ma != mb and abs(ma - mb) > NOISE_K * sum(noise) and apart)
    unchanged = [r for r in k["rows"] if r["key"] != f"{K}:15"]
    assert sum(r["significant"] for r in unchanged) <= len(unchanged) // 4


def test_noise_command_spread(jittered):
    d = json.loads(run("noise", jittered / "before", "--format", "json", "--top", "0"))
    (k,) = d["kernels"]
    totals = [sum(r[7] for r in code_rows(p).values()) for p in sorted((jittered / "before").glob("*/ui_output_*"))]
    assert sorted(k["total"]["cycles"]["values"]) == sorted(totals)
    med = statistics.median(totals)
    assert k["total"]["cycles"]["median"] == med
    assert k["total"]["cycles"]["mad"] == statistics.median(abs(t - med) for t in totals)
    assert k["floor"]["cycles"] == pytest.approx(NOISE_K * 2 * k["total"]["cycles"]["mad"] * (2 / 3) ** 0.5, abs=1e-3)
    assert {r["key"] for r in k["rows"]} >= {f"{K}:15", f"{K}:12"}
    table = run("noise", jittered / "before")
    assert "3 runs" in table and "MAD" in table and "significant above" in table
    rows = list(csv.DictReader(io.StringIO(run("noise", jittered / "before", "--format", "csv"))))
    total = next(r for r in rows if r["kind"] == "total")
    assert float(total["mad_cycles"]) == k["total"]["cycles"]["mad"] and total["runs"] == "3"
    assert int(total["min_cycles"]) == min(totals) and int(total["max_cycles"]) == max(totals)
    assert "| # | median cycles | MAD |" in run("noise", jittered / "before", "--format", "md")


def test_noise_of_the_repeated_real_dispatches():
    """pa_mqa_logits_fp4 captured twice (dispatches 234 and 236): two runs, MAD = half their difference."""
    big = shared_path(*PA_BIG)
    totals = sorted(sum(r[7] for r in code_rows(p).values()) for p in big.glob("ui_output_agent_*"))
    (k,) = json.loads(run("noise", big, "--format", "json"))["kernels"]
    assert k["name"] == "pa_mqa_logits_fp4_kernel_0" and len(k["runs"]) == 2
    c = k["total"]["cycles"]
    assert (c["min"], c["max"]) == tuple(totals) and c["mad"] == (totals[1] - totals[0]) / 2
    assert k["by"] == "instruction" and k["rows"][0]["cycles"]["median"] >= k["rows"][1]["cycles"]["median"]


def test_one_run_has_no_spread():
    (k,) = json.loads(run("noise", DEMO, "--format", "json"))["kernels"]
    assert k["total"]["cycles"]["mad"] is None and k["floor"]["cycles"] is None
    assert "one run: no spread" in run("noise", DEMO)


# ------------------------------------------------------------------------------------------ CLI


def test_fail_above_gate(tmp_path):
    after = edit(tmp_path, "slow", slow_line=[(7, 50)])
    k = js("diff", DEMO, after)["kernels"][0]
    grew, grew_stall = k["delta_pct"]["cycles"], k["delta_pct"]["stall"]
    r = cli("diff", DEMO, after, "--fail-above", grew - 0.01)
    assert r.returncode == 4 and "softmax_rows_0" in r.stderr and "cycles" in r.stderr  # not 1, an unreadable input
    assert cli("diff", DEMO, after, "--fail-above", grew + 0.01).returncode == 0
    assert cli("diff", DEMO, after, "--fail-above", grew_stall - 0.01, "--metric", "stall").returncode == 4
    assert cli("diff", DEMO, after, "--fail-above", grew_stall + 0.01, "--metric", "stall").returncode == 0
    assert cli("diff", after, DEMO, "--fail-above", 0).returncode == 0  # it got faster


def test_unmatched_kernels_are_listed():
    tiny = FIXTURES / "tiny" / "ui_output_agent_7_dispatch_3"
    d = js("diff", DEMO, tiny)
    assert d["kernels"] == []
    assert {(u["kernel"], u["side"]) for u in d["unmatched"]} == {
        ("softmax_rows_0", "before"),
        ("tiny_kernel", "after"),
    }
    assert "before only: softmax_rows_0" in run("diff", DEMO, tiny)
    r = cli("diff", DEMO, tiny, "--fail-above", 5)
    assert r.returncode == 1 and "nothing was compared" in r.stderr
    # several paths per side
    d = js("diff", "--before", DEMO, "--before", tiny, "--after", tiny)
    assert [k["name"] for k in d["kernels"]] == ["tiny_kernel"] and d["unmatched"][0]["kernel"] == "softmax_rows_0"


@pytest.mark.parametrize(
    "args, words",
    [
        ((DEMO, DEMO, DEMO), ("expected 2 paths", "--before")),
        (("--before", DEMO), ("--after",)),
        ((DEMO, DEMO, "--after", DEMO), ("not both",)),
        ((DEMO, "/nonexistent/folder"), ("/nonexistent/folder",)),
    ],
)
def test_bad_command_lines_give_one_line(args, words):
    one_line_error(cli("diff", *args), *words)
