"""The HTML report in a real browser (the system's headless Chromium, driven by selenium; tests/support/browser.py).

One page holds a real ui_output sample and a raw capture (so the dispatch selector is exercised too), another the
demo. Checked: no console errors, no network request, every view is there and holds attdec's own figures (read
from the DOM's data-v attributes and compared with the analyses, not with numbers written here), sorting,
zoom and hover work; screenshots of every tab go to the test's tmp directory.
"""

from __future__ import annotations

import pytest
from conftest import SHARED, SYNTHETIC_CAPTURES, real_data

import attdec
from attdec.analysis.advise import advise
from attdec.analysis.flame import stall_stacks
from attdec.analysis.hotspots import hotspots, instruction_stats
from attdec.analysis.occupancy import resident_waves
from attdec.analysis.timeline import assign_lanes
from attdec.commands.demo import demo_path
from attdec.report.html import write_report
from tests.support import browser
from tests.support.browser import js

WHY = browser.missing()
pytestmark = pytest.mark.skipif(WHY is not None, reason=f"no browser for the report tests: {WHY}")
TABS = ("overview", "hotspots", "source", "isa", "timeline")


TOPK = ("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples", "topk_gating_softmax")
# a ui_output listing and a raw capture in one report: the demo and the gfx9 synthetic capture, and flydsl's
# topk sample and the gfx1100 gemm capture where ../shared has them
MIXED = {
    "synthetic": [demo_path(), SYNTHETIC_CAPTURES["gfx942"]],
    **({"real": [SHARED.joinpath(*TOPK), SHARED / "captures/gfx1100/gemm_run0"]} if real_data(*TOPK) else {}),
}


def _write(path, ds):
    with open(path, "w", encoding="utf-8") as f:
        write_report(f, ds)
    return path, ds


@pytest.fixture(scope="module", params=list(MIXED))
def mixed(request, tmp_path_factory):
    """The report of MIXED's inputs, and the folder its screenshots go to."""
    out = tmp_path_factory.mktemp("report")
    return out, _write(out / "mixed.html", [d for src in MIXED[request.param] for d in attdec.open(src)])


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The demo's report."""
    out = tmp_path_factory.mktemp("report")
    return out, {"demo": _write(out / "demo.html", attdec.open(demo_path()))}


def severe(console):
    return [m for m in console if m.get("level") == "SEVERE"]


def check_dispatch(d, disp):
    """The views of the dispatch on screen against attdec's analyses of it."""
    h = hotspots([disp], by=None)  # what the page ranks by default: lines, or instructions without a line table
    cards = js(
        d,
        "return Object.fromEntries([...document.querySelectorAll('#summary [data-k]')]"
        ".map(c => [c.dataset.k, +c.dataset.v]))",
    )
    for k in ("hits", "latency", "stall", "idle"):
        assert cards[k] == h.totals[k], k
    # findings at the top: attdec advise's, in its order
    shown = js(d, "return [...document.querySelectorAll('#findings li')].map(li => [li.dataset.rule, +li.dataset.v])")
    assert shown == [[f.rule, f.cycles] for f in advise(disp).findings]
    assert cards["waves"] == len(disp.waves)
    types = js(d, "return [...document.querySelectorAll('#types g.ty')].map(g => [g.dataset.type, +g.dataset.v])")
    assert types == [[t, s] for t, s, _ in h.by_type]
    # overview: the top rows of the default ranking
    top = js(
        d,
        "return [...document.querySelectorAll('#tab-overview tr.hs')]"
        ".map(r => [r.querySelector('[data-k=key]').textContent, +r.querySelector('[data-k=stall]').dataset.v])",
    )
    assert [s for _, s in top] == [r.stall for r in h.rows[:10]]
    assert all(h.rows[i].key.endswith(k) for i, (k, _) in enumerate(top))  # keys shown below the common dir
    # flamegraph: the root carries all stall cycles
    root = js(d, "const s = document.querySelector('#flame svg'); return s ? +s.dataset.root : null")
    assert root == sum(s.stall for s in stall_stacks([disp])) == h.totals["stall"]
    # ISA view: one row per listing row, each instruction's stall
    isa = js(
        d,
        "return [...document.querySelectorAll('#tab-isa tr[data-line]')]"
        ".map(r => [+r.dataset.line, +r.querySelector('[data-k=stall]').dataset.v])",
    )
    stall = {st.code.line: st.stall for st in instruction_stats(disp)}
    assert len(isa) == len(disp.code) and all(s == stall.get(line, 0) for line, s in isa)
    # timeline: lanes and waves; the occupancy peak
    keys, _ = assign_lanes(disp.waves)
    lanes = js(d, "const c = document.getElementById('lanes'); return [+c.dataset.lanes, +c.dataset.waves]")
    assert lanes == [len(keys), len(disp.waves)]
    peak = js(d, "return +document.getElementById('occupancy').dataset.peak")
    assert peak == max(o.peak for o in resident_waves(disp.occupancy))
    head = js(
        d, "return [...document.querySelectorAll('h2')].find(h => h.textContent.startsWith('Occupancy'))?.textContent"
    )
    assert "untraced" in head


def test_mixed_report(driver, mixed):
    out, (path, ds) = mixed
    d = driver
    r = browser.open_report(d, path)
    assert not severe(r["console"]), r["console"]
    assert r["rendered_ms"] is not None
    assert js(d, "return performance.getEntriesByType('resource').length") == 0  # nothing fetched
    assert js(d, "return document.querySelectorAll('#dispatch option').length") == 2
    for i, disp in enumerate(ds):
        js(
            d,
            "const s = document.getElementById('dispatch'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('change'))",
            str(i),
        )
        assert js(d, "return document.body.dataset.dispatch") == disp.name
        for tab in TABS:
            browser.show(d, tab, settle=0.2)
            d.save_screenshot(str(out / f"mixed-{i}-{tab}.png"))
        check_dispatch(d, disp)
    assert not severe(d.get_log("browser"))
    assert len(list(out.glob("mixed-*.png"))) == 2 * len(TABS)


def test_hotspot_tables_sort_and_switch(driver, pages):
    path, (disp,) = pages[1]["demo"]
    d = driver
    browser.open_report(d, path)
    browser.show(d, "hotspots")
    for by in ("instruction", "file", "line"):
        js(d, "document.querySelector(`#tab-hotspots button[data-by=${arguments[0]}]`).click()", by)
        h = hotspots([disp], by=by)
        got = js(
            d, "return [...document.querySelectorAll('#tab-hotspots tr.hs [data-k=stall]')].map(td => +td.dataset.v)"
        )
        assert got == [r.stall for r in h.rows]
    # click "hits": largest first, again: smallest first
    js(d, "[...document.querySelectorAll('#tab-hotspots th')].find(th => th.textContent.startsWith('hits')).click()")
    hits = js(d, "return [...document.querySelectorAll('#tab-hotspots tr.hs [data-k=hits]')].map(td => +td.dataset.v)")
    assert hits == sorted(hits, reverse=True) and len(set(hits)) > 1
    js(d, "[...document.querySelectorAll('#tab-hotspots th')].find(th => th.textContent.startsWith('hits')).click()")
    hits = js(d, "return [...document.querySelectorAll('#tab-hotspots tr.hs [data-k=hits]')].map(td => +td.dataset.v)")
    assert hits == sorted(hits)


def test_timeline_draws_zooms_and_hovers(driver, pages):
    out, made = pages
    path, (disp,) = made["demo"]
    d = driver
    browser.open_report(d, path)
    browser.show(d, "timeline")
    painted = js(
        d,
        "const c = document.getElementById('lanes');"
        "const x = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        "let n = 0; for (let i = 0; i < x.length; i += 4) if (x[i + 3] && (x[i] < 250 || x[i + 1] < 250)) n++;"
        "return n",
    )
    assert painted > 1000
    before = js(d, "return document.querySelector('#tab-timeline .toolbar .mono').textContent")
    js(d, "[...document.querySelectorAll('#tab-timeline button')].find(b => b.textContent === 'zoom in').click()")
    after = js(d, "return document.querySelector('#tab-timeline .toolbar .mono').textContent")
    assert before != after
    # hover the middle of the first lane: the tip names the wave and (all instructions are embedded) the instruction
    js(d, "[...document.querySelectorAll('#tab-timeline button')].find(b => b.textContent === 'reset').click()")
    tip = js(
        d,
        "const c = document.getElementById('lanes'), r = c.getBoundingClientRect();"
        "const x = r.left + 118 + (r.width - 126) * 0.5;"
        "c.dispatchEvent(new MouseEvent('mousemove', {clientX: x, clientY: r.top + 24, bubbles: true}));"
        "const t = document.getElementById('tip'); return t.hidden ? '' : t.textContent",
    )
    assert "wave" in tip and "issued at" in tip
    texts = {c.text for c in disp.code}
    assert any(t in tip for t in texts)
    js(
        d,
        "[...document.querySelectorAll('#tab-timeline .seg button')].find(b => b.dataset.kind === 'category').click()",
    )
    legend = js(d, "return document.getElementById('tl-legend').textContent")
    assert "VALU" in legend and "SMEM" in legend
    d.save_screenshot(str(out / "demo-timeline-category.png"))
    assert not severe(d.get_log("browser"))


def test_links_show_in_the_isa_view(driver, pages, tmp_path):
    _, made = pages
    _, (disp,) = made["demo"]
    waits = [c.line for c in disp.code if c.text.startswith("s_waitcnt")]
    loads = [c.line for c in disp.code if "load" in c.text]
    path = tmp_path / "links.html"
    with open(path, "w", encoding="utf-8") as f:
        write_report(f, [disp], links={disp.name: [(waits[0], loads[0], "waits for")]})
    d = driver
    browser.open_report(d, path)
    browser.show(d, "isa")
    row = js(d, "return document.querySelector(`#tab-isa tr[data-line='${arguments[0]}']`).textContent", waits[0])
    assert f"→ {loads[0]}" in row and "waits for" in row
    back = js(d, "return document.querySelector(`#tab-isa tr[data-line='${arguments[0]}']`).textContent", loads[0])
    assert f"← {waits[0]}" in back
    assert not severe(d.get_log("browser"))
