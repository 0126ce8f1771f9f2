"""The report's ISA view, search, selection history and findings in a real browser, against the command line.

Pages are written by `attdec report` and every figure read from the DOM is compared with what another attdec
command prints for the same input (`waits`, `loops`, `advise` with --format json): the waitcnt arrows of a
wave are the `attdec waits` pairs of that wave alone, the loop navigator's iterations those of `attdec loops`.
Inputs: raw gfx11 captures (the synthetic one; gfx1151 gemm, which has a loop) and ui_output folders (with
source lines: the demo; flydsl's topk sample).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from conftest import ROOT, SHARED, SYNTHETIC_CAPTURES, real_data, shared_path

from attdec.commands.demo import demo_path
from tests.support import browser
from tests.support.browser import console_errors, js

WHY = browser.missing()
pytestmark = pytest.mark.skipif(WHY is not None, reason=f"no browser for the report tests: {WHY}")


def attdec(*args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "attdec", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


def per_dispatch(obj: dict) -> list[dict]:
    return obj.get("dispatches", [obj])


LOOP_CAPTURE = ("captures", "gfx1151", "gemm_run0")  # a gfx11 gemm with a loop
TOPK = ("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples", "topk_gating_softmax")
RAW = {"raw-synthetic": SYNTHETIC_CAPTURES["gfx1100"]}
UI_OUTPUT = {"ui_output-demo": demo_path()}
if real_data(*LOOP_CAPTURE):
    RAW["raw-gfx11"] = SHARED.joinpath(*LOOP_CAPTURE)
if real_data(*TOPK):
    UI_OUTPUT["ui_output"] = SHARED.joinpath(*TOPK)
INPUTS = {**RAW, **UI_OUTPUT}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("isaview")
    made = {}
    for name, src in INPUTS.items():
        page = out / f"{name}.html"
        attdec("report", str(src), "-o", str(page))
        made[name] = (src, page)
    return out, made


def dispatch_names(d) -> list[str]:
    return js(d, "return attdecReport.data.dispatches.map(x => x.name)")


def select_wave(d, value: int) -> None:
    js(
        d,
        "const s = document.getElementById('isa-wave'); s.value = String(arguments[0]);"
        "s.dispatchEvent(new Event('change'))",
        value,
    )
    time.sleep(0.2)


@pytest.mark.parametrize("name", list(INPUTS))
def test_arrows_of_a_wave_are_its_waits_pairs(driver, pages, name):
    out, made = pages
    src, page = made[name]
    d = driver
    browser.open_report(d, page)
    waits = per_dispatch(json.loads(attdec("waits", str(src), "--format", "json", "--top", "0")))
    checked = 0
    for i, disp in enumerate(dispatch_names(d)):
        js(d, "attdecReport.go({dispatch: arguments[0], tab: 'isa'})", i)
        time.sleep(0.3)
        options = js(
            d,
            "return [...document.querySelectorAll('#isa-wave option')].map(o => Object.fromEntries("
            "['se', 'cu', 'simd', 'slot', 'wave', 'pairs'].map(k => [k, +o.dataset[k]])))",
        )
        # the wave with the most arrows, and the last wave
        picks = {max(range(len(options)), key=lambda k: options[k]["pairs"]), len(options) - 1}
        for k in sorted(picks):
            select_wave(d, k)
            assert js(d, "return +document.getElementById('isa-arrows').dataset.wave") == k
            shown = js(
                d,
                "return [...document.querySelectorAll('#isa-arrows path.arrow')].map(p => "
                "[+p.dataset.wait, +p.dataset.producer, +p.dataset.executions, +p.dataset.stall])",
            )
            o = options[k]
            sel = [f"--{f}={o[f]}" for f in ("se", "cu", "simd", "slot", "wave")]
            cli = per_dispatch(json.loads(attdec("waits", str(src), *sel, "--format", "json", "--top", "0")))
            (mine,) = [c for c in cli if c["dispatch"] == disp]
            assert mine["waves"] == 1
            pairs = sorted(
                [w["line"], p["line"], p["executions"], p["stall"]] for w in mine["waits"] for p in w["producers"]
            )
            assert sorted(shown) == pairs
            assert len(shown) == o["pairs"]
            checked += len(pairs)
        # the arrows are drawn between the rows they name
        drawn = js(d, "return [...document.querySelectorAll('#isa-arrows path.arrow')].every(p => p.getAttribute('d'))")
        assert drawn
    assert checked > 0  # some wave waited on something
    assert sum(len(w["waits"]) for w in waits) > 0
    d.save_screenshot(str(out / f"{name}-isa.png"))
    assert not console_errors(d)


def test_loop_navigator_steps_through_attdec_loops(driver, pages):
    shared_path(*LOOP_CAPTURE)  # no synthetic capture has a loop
    _, made = pages
    src, page = made["raw-gfx11"]
    d = driver
    browser.open_report(d, page)
    loops = per_dispatch(json.loads(attdec("loops", str(src), "--format", "json")))
    names = dispatch_names(d)
    stepped = 0
    for lp_disp in loops:
        if not lp_disp["loops"]:
            continue
        i = names.index(lp_disp["dispatch"])
        js(d, "attdecReport.go({dispatch: arguments[0], tab: 'isa'})", i)
        time.sleep(0.3)
        options = js(
            d,
            "return [...document.querySelectorAll('#isa-wave option')].map(o => "
            "['se', 'cu', 'simd', 'slot', 'wave'].map(k => +o.dataset[k]))",
        )
        loop = next(lp for lp in lp_disp["loops"] if lp["main"])
        for w in loop["waves"][:2]:
            k = options.index([w["se"], w["cu"], w["simd"], w["slot"], w["wave"]])
            select_wave(d, k)
            assert js(d, "return document.querySelector('.loopnav').dataset.loop") == str(loop["id"])
            seen = []
            for _ in range(min(4, w["iterations"])):
                seen.append(js(d, "return +document.getElementById('isa-iter-info').dataset.cycles"))
                js(d, "document.getElementById('iter-next').click()")
            assert seen == w["cycles"][: len(seen)]
            # jump to the last iteration by number
            js(
                d,
                "const n = document.getElementById('isa-iter'); n.value = arguments[0];"
                "n.dispatchEvent(new Event('change'))",
                w["iterations"],
            )
            assert js(d, "return +document.getElementById('isa-iter-info').dataset.cycles") == w["cycles"][-1]
            # the loop's body rows are marked, its header first
            header = js(d, "return +document.querySelector('#tab-isa tr.inloop.header').dataset.line")
            assert header == loop["header"]["line"]
            stepped += len(seen)
    assert stepped > 0
    assert not console_errors(d)


@pytest.mark.parametrize("name", list(INPUTS))
def test_findings_at_the_top_are_attdec_advise(driver, pages, name):
    _, made = pages
    src, page = made[name]
    d = driver
    browser.open_report(d, page)
    advice = {a["dispatch"]: a for a in per_dispatch(json.loads(attdec("advise", str(src), "--format", "json")))}
    for i, disp in enumerate(dispatch_names(d)):
        for tab in ("overview", "timeline"):  # above every tab
            js(d, "attdecReport.go({dispatch: arguments[0], tab: arguments[1]})", i, tab)
            shown = js(
                d,
                "const b = document.getElementById('findings-bar');"
                "return b.getBoundingClientRect().top < document.querySelector('main').getBoundingClientRect().top"
                " ? [...b.querySelectorAll('#findings li')].map(li => [li.dataset.rule, +li.dataset.v]) : null",
            )
            assert shown == [[f["rule"], f["cycles"]] for f in advice[disp]["findings"]]
    assert any(advice[x]["findings"] for x in advice)
    assert not console_errors(d)


@pytest.mark.parametrize("name", list(UI_OUTPUT))
def test_search_and_history(driver, pages, name):
    _, made = pages
    src, page = made[name]
    d = driver
    browser.open_report(d, page)
    waits = per_dispatch(json.loads(attdec("waits", str(src), "--format", "json", "--top", "1")))
    site = waits[0]["waits"][0]  # the wait with the most stall: an instruction the listing holds
    js(d, "const s = document.getElementById('search'); s.focus(); s.value = arguments[0];", site["text"])
    js(d, "document.getElementById('search').dispatchEvent(new Event('input'))")
    hits = js(
        d,
        "return [...document.querySelectorAll('#search-results li[data-kind]')].map(li => [li.dataset.kind, "
        "+li.dataset.line, li.textContent])",
    )
    assert ["isa", site["line"]] in [h[:2] for h in hits]
    assert all(site["text"] in h[2] for h in hits if h[0] == "isa")
    k = [h[:2] for h in hits].index(["isa", site["line"]])
    js(
        d,
        "document.querySelectorAll('#search-results li[data-kind]')[arguments[0]]"
        ".dispatchEvent(new MouseEvent('mousedown'))",
        k,
    )
    time.sleep(0.2)
    assert js(d, "return document.querySelector('nav.tabs [aria-selected=true]').dataset.tab") == "isa"
    selected = js(d, "return [...document.querySelectorAll('#tab-isa tr.selected')].map(r => +r.dataset.line)")
    assert selected == [site["line"]]
    # a source line: its location as the listing names it
    loc = site["source"].split(" -> ")[0]
    path, line = loc.rsplit(":", 1)
    js(d, "const s = document.getElementById('search'); s.value = arguments[0];", loc)
    js(d, "document.getElementById('search').dispatchEvent(new Event('input'))")
    src_hits = js(
        d,
        "return [...document.querySelectorAll('#search-results li[data-kind=source]')].map(li => +li.dataset.line)",
    )
    assert int(line) in src_hits
    js(d, "document.querySelector('#search-results li[data-kind=source]').dispatchEvent(new MouseEvent('mousedown'))")
    time.sleep(0.2)
    assert js(d, "return document.querySelector('nav.tabs [aria-selected=true]').dataset.tab") == "source"
    assert js(d, "return document.querySelector('#files li[aria-selected=true]').title") == path
    # history: back to the ISA row, back to the start, forward again
    states = [js(d, "return document.body.dataset.history")]
    js(d, "document.getElementById('back').click()")
    assert js(d, "return document.querySelector('nav.tabs [aria-selected=true]').dataset.tab") == "isa"
    js(d, "document.getElementById('back').click()")
    assert js(d, "return document.querySelector('nav.tabs [aria-selected=true]').dataset.tab") == "overview"
    assert js(d, "return document.getElementById('back').disabled")
    js(d, "document.getElementById('forward').click()")
    assert js(d, "return document.querySelector('nav.tabs [aria-selected=true]').dataset.tab") == "isa"
    states.append(js(d, "return document.body.dataset.history"))
    assert states == ["3/3", "2/3"]
    assert not console_errors(d)
