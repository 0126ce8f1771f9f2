"""The report's time views (Utilization, Global, Compute Unit, Histogram, Counters) in headless Chromium,
on a page built by `attdec report` from a raw gfx11 capture and a ui_output folder: every figure read from
the DOM equals what another attdec command prints for the same input (`hotspots`, `waves`, `timeline`,
`counters`, `kernel`, all run here with --format json), never a number written in this file.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from conftest import SHARED, SYNTHETIC_CAPTURES, captures, invoke, real_data

from attdec.commands.demo import demo_path
from attdec.isa.categories import class_of
from attdec.model.target import target
from attdec.report.views import UTIL_CLASS_OF, UTIL_CLASSES
from tests.support import browser
from tests.support.browser import js

WHY = browser.missing()
pytestmark = pytest.mark.skipif(WHY is not None, reason=f"no browser for the report tests: {WHY}")
VIEWS = ("utilization", "global", "cu", "histogram", "counters")
# The cards of one element: {data-k: exact value}
CARDS = (
    "return Object.fromEntries([...document.querySelectorAll('#ID [data-k]')].map(c => [c.dataset.k, +c.dataset.v]))"
)


def run(*args) -> dict:
    r = invoke([str(a) for a in args])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


TOPK = ("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples", "topk_gating_softmax")
REAL = {"real": [SHARED.joinpath(*TOPK), SHARED / "captures/gfx1100/gemm_run0"]} if real_data(*TOPK) else {}
# [a ui_output listing, a raw capture of one dispatch]: the demo and the gfx9 synthetic capture, and flydsl's
# topk sample and the gfx1100 gemm capture where ../shared has them
PAGES = {"synthetic": [demo_path(), SYNTHETIC_CAPTURES["gfx942"]], **REAL}
# the same with realtime samples in the raw capture (the RDNA synthetic one has two dispatches)
REALTIME_PAGES = {"synthetic": [demo_path(), SYNTHETIC_CAPTURES["gfx1100"]], **REAL}


def _report(tmp_path_factory, inputs):
    """The inputs in one page, as `attdec report` writes it."""
    out = tmp_path_factory.mktemp("views")
    path = out / "views.html"
    r = invoke(["report", *map(str, inputs), "-o", str(path)])
    assert r.exit_code == 0, r.output
    return out, path, inputs


@pytest.fixture(scope="module", params=list(PAGES))
def page(request, tmp_path_factory):
    return _report(tmp_path_factory, PAGES[request.param])


@pytest.fixture(scope="module", params=list(REALTIME_PAGES))
def realtime_page(request, tmp_path_factory):
    return _report(tmp_path_factory, REALTIME_PAGES[request.param])


def choose(d, i):
    js(d, "window.attdecReport.renderDispatch(arguments[0])", i)


def test_views_draw_without_errors(driver, page):
    out, path, inputs = page
    r = browser.open_report(driver, path)
    assert not [m for m in r["console"] if m.get("level") == "SEVERE"], r["console"]
    for i in range(len(inputs)):
        choose(driver, i)
        for tab in VIEWS:
            browser.show(driver, tab, settle=0.2)
            assert js(driver, "return document.getElementById('tab-' + arguments[0]).dataset.rendered", tab) is not None
            driver.save_screenshot(str(out / f"{i}-{tab}.png"))
    assert not [m for m in driver.get_log("browser") if m.get("level") == "SEVERE"]
    assert js(driver, "return performance.getEntriesByType('resource').length") == 0


def test_utilization_equals_hotspots_per_simd(driver, page):
    _, path, inputs = page
    browser.open_report(driver, path)
    for i, src in enumerate(inputs):
        choose(driver, i)
        browser.show(driver, "utilization", settle=0.1)
        rows = js(
            driver,
            "return [...document.querySelectorAll('#util-table tbody tr')].map(r => [r.dataset.simd,"
            " Object.fromEntries([...r.querySelectorAll('td[data-k]')].map(td => [td.dataset.k, +td.dataset.v]))])",
        )
        assert rows
        legend = js(
            driver,
            "return Object.fromEntries([...document.querySelectorAll('#util-legend [data-class]')]"
            ".map(s => [s.dataset.class, +s.dataset.v]))",
        )
        assert legend == {c: sum(r[c] for _, r in rows) for c in UTIL_CLASSES}
        for simd, shown in rows[:: max(1, len(rows) // 3)]:  # a spread of SIMDs: one CLI run each
            se, cu, n = simd.split(",")
            h = run(
                "hotspots", src, "--by", "instruction", "--top", "0", "--format", "json",
                "--se", se, "--cu", cu, "--simd", n,
            )  # fmt: skip
            busy: dict[str, int] = defaultdict(int)
            for row in h["rows"]:
                busy[UTIL_CLASS_OF.get(class_of(row["key"], target(h["arch"])), "OTHER")] += (
                    row["latency"] - row["stall"]
                )
            assert {c: shown[c] for c in UTIL_CLASSES} == {c: busy[c] for c in UTIL_CLASSES}, simd
            assert shown["hits"] == h["totals"]["hits"]


def test_global_view_holds_every_wave(driver, realtime_page):
    _, path, inputs = realtime_page
    browser.open_report(driver, path)
    browser.show(driver, "global", settle=0.1)
    per = js(
        driver,
        "return [...document.querySelectorAll('#global-legend [data-dispatch]')]"
        ".map(s => [s.dataset.dispatch, +s.dataset.v])",
    )
    expected: dict[str, int] = {}
    for src in inputs:
        for w in run("waves", src, "--format", "json")["waves"]:
            expected[w["dispatch"]] = expected.get(w["dispatch"], 0) + 1
    assert per == [list(x) for x in expected.items()]
    assert js(driver, "return +document.getElementById('global').dataset.waves") == sum(expected.values())
    # where each wave is drawn: `attdec timeline --clock realtime`'s wave slices (one origin for all dispatches)
    drawn = js(driver, "return document.getElementById('tab-global').waves.map(w => [w[0], w[2], w[3]])")
    names = js(driver, "return window.attdecReport.data.dispatches.map(x => x.name)")
    trace = path.parent / "global.json"
    r = invoke(["timeline", *map(str, inputs), "--clock", "realtime", "--granularity", "wave", "-o", str(trace)])
    assert r.exit_code == 0, r.output
    events = json.loads(trace.read_text())["traceEvents"]
    process = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    slices = [
        (process[e["pid"]].rsplit("[", 1)[1].split("]")[0], e["ts"], e["dur"]) for e in events if e.get("cat") == "wave"
    ]
    t0, u0 = min(t for _, t, _ in slices), min(b for _, b, _ in drawn)
    want = sorted((n, t - t0, du) for n, t, du in slices)
    got = sorted((names[i], b - u0, e - b) for i, b, e in drawn)
    assert [g[0] for g in got] == [w[0] for w in want]
    assert all(abs(g[1] - w[1]) < 2e-3 and abs(g[2] - w[2]) < 2e-3 for g, w in zip(got, want))


def test_compute_unit_selector_equals_waves(driver, page):
    _, path, inputs = page
    browser.open_report(driver, path)
    for i, src in enumerate(inputs):
        choose(driver, i)
        browser.show(driver, "cu", settle=0.1)
        ses = js(driver, "return [...document.querySelectorAll('#cu-se option')].map(o => o.value).filter(v => v)")
        se = ses[-1]
        js(
            driver,
            "const s = document.getElementById('cu-se'); s.value = arguments[0]; s.dispatchEvent(new Event('change'))",
            se,
        )
        js(driver, "const s = document.getElementById('cu-simd'); s.value = '0'; s.dispatchEvent(new Event('change'))")
        shown = js(
            driver,
            "return [...document.querySelectorAll('#cu-waves tbody tr')].map(r =>"
            " Object.fromEntries([...r.querySelectorAll('td[data-k]')].map(td => [td.dataset.k, +td.dataset.v])))",
        )
        waves = run("waves", src, "--format", "json", "--se", se, "--simd", "0")["waves"]
        keys = ("se", "cu", "simd", "slot", "wave", "begin", "end", "duration", "instructions", "stall")
        want = sorted(([w[k] for k in keys] for w in waves), key=lambda r: (r[5], r))
        got = sorted(([r[k] for k in keys] for r in shown), key=lambda r: (r[5], r))
        assert got == want and got
        legend = js(
            driver, "return [...document.querySelectorAll('#cu-legend [data-state]')].map(s => s.dataset.state)"
        )
        assert legend == ["EMPTY", "IDLE", "EXEC", "WAIT", "STALL"]


def test_histogram_totals_and_a_range_equal_the_cli(driver, page):
    _, path, inputs = page
    browser.open_report(driver, path)
    for i, src in enumerate(inputs):
        choose(driver, i)
        browser.show(driver, "histogram", settle=0.1)
        cards = CARDS.replace("ID", "hist-range")
        whole = js(driver, cards)
        h = run("hotspots", src, "--format", "json")
        assert [whole["latency"], whole["stall"], whole["hits"]] == [
            h["totals"][k] for k in ("latency", "stall", "hits")
        ]
        # the middle half of the bins against the instruction slices of `attdec timeline --granularity inst`
        nb = js(driver, "return +document.getElementById('hist-range').dataset.hi")
        js(
            driver,
            "document.getElementById('tab-histogram').selectBins(arguments[0], arguments[1])",
            nb // 4,
            3 * nb // 4,
        )
        part = js(driver, cards)
        hist = js(driver, "return window.attdecReport.data.dispatches[arguments[0]].views.histogram", i)
        lo, hi = hist["t0"] + nb // 4 * hist["q"], hist["t0"] + 3 * nb // 4 * hist["q"]
        assert part["from"] == lo
        trace = path.parent / f"trace{i}.json"
        r = invoke(["timeline", str(src), "--granularity", "inst", "-o", str(trace)])
        assert r.exit_code == 0, r.output
        ev = json.loads(trace.read_text())
        slices = [e for e in ev["traceEvents"] if e.get("ph") == "X" and e.get("cat") != "wave" and lo <= e["ts"] < hi]
        assert slices
        assert part["latency"] == sum(e["args"]["duration"] for e in slices)
        assert part["stall"] == sum(e["args"]["stall"] for e in slices)
        assert part["hits"] == len(slices)


def test_counters_summary_equals_the_cli(driver, page):
    _, path, inputs = page
    browser.open_report(driver, path)
    for i, src in enumerate(inputs):
        choose(driver, i)
        browser.show(driver, "counters", settle=0.1)
        cards = js(
            driver,
            CARDS.replace("ID", "ctr-summary"),
        )
        h = run("hotspots", src, "--format", "json")
        assert cards["cost"] == pytest.approx(h["totals"]["latency"] / h["totals"]["hits"], rel=1e-12)
        [k] = run("kernel", src, "--format", "json")["kernels"]
        assert cards["occupancy"] == pytest.approx(k["occupancy"]["achieved_mean"], abs=5e-5)
        shown = js(
            driver,
            "return [...document.querySelectorAll('#ctr-table tbody tr')].map(r =>"
            " [r.dataset.source, r.dataset.counter, +r.querySelector('td[data-k=total]').dataset.v])",
        )
        [c] = run("counters", src, "--format", "json")["dispatches"]
        assert sorted(shown) == sorted([x["source"], x["name"], x["total"]] for x in c["counters"])
        per_se = js(
            driver,
            "return [...document.querySelectorAll('#ctr-table tbody tr')].map(r => Object.fromEntries("
            "[...r.querySelectorAll('td[data-k^=xcc]')].map(td => [td.dataset.k, +td.dataset.v])))",
        )
        for row, x in zip(shown, per_se):
            [want] = [y for y in c["counters"] if [y["source"], y["name"]] == row[:2]]
            cells = {f"xcc{p['xcc']}.se{p['se']}": p["value"] for p in want["per_se"]}
            assert {k: v for k, v in x.items() if v or k in cells} == cells
    # occupancy per dispatch: one row per dispatch, `attdec kernel`'s achieved figures
    rows = js(
        driver,
        "return [...document.querySelectorAll('#ctr-occ-dispatch tbody tr')].map(r => [r.dataset.dispatch,"
        " +r.querySelector('td[data-k=peak]').dataset.v, +r.querySelector('td[data-k=waves]').dataset.v])",
    )
    want = []
    for src in inputs:
        for k in run("kernel", src, "--format", "json")["kernels"]:
            want.append([k["dispatch"], k["occupancy"]["achieved_peak"], k["occupancy"]["achieved_waves"]])
    assert rows == want


@pytest.mark.parametrize("cap", captures("gfx1100/gemm_run0", synthetic=("gfx942",)))
def test_a_time_resolved_counter_is_drawn_on_the_trace_axis(driver, tmp_path, cap):
    """No capture here has PERFEVENT samples: a real capture with a series added, drawn and totalled."""
    import numpy as np

    import attdec
    from attdec.analysis.counters import counter_report
    from attdec.model import CounterSamples
    from attdec.model.records import COUNTER_DTYPE
    from attdec.report.html import write_report

    [d] = attdec.open(cap)
    begin, end = min(w.begin for w in d.waves), max(w.end for w in d.waves)
    s = np.zeros(50, COUNTER_DTYPE)
    s["counter"], s["se"], s["cu"], s["sa"], s["xcc"], s["inst"] = 0, np.arange(50) % 2, 0, 0, 0, -1
    s["time"], s["value"] = np.linspace(begin, end, 50).astype(np.int64), np.arange(50) % 7
    d.counters = [*d.counters, CounterSamples("SQTT PERFEVENT", ["SQ_WAVES"], ["SQ"], s)]
    path = tmp_path / "series.html"
    with open(path, "w", encoding="utf-8") as f:
        write_report(f, [d])
    browser.open_report(driver, path)
    browser.show(driver, "counters", settle=0.2)
    [row] = [r for r in counter_report(d).rows if r.source == "SQTT PERFEVENT"]
    shown = js(driver, "return +document.querySelector('#ctr-series-0-legend [data-v]').dataset.v")
    assert shown == row.total == int(s["value"].sum())
    assert js(driver, "return document.querySelector('#ctr-series-0 canvas').width") > 0
    assert not [m for m in driver.get_log("browser") if m.get("level") == "SEVERE"]
