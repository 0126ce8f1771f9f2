#!/usr/bin/env python3
"""Screenshots of `attdec report` pages, e.g. the README's docs/images/report.png.

    python3 tools/figures/report_screenshot.py                      # the README's images, from ../shared samples
    python3 tools/figures/report_screenshot.py PATH -o shot.png --tab timeline

Builds the report of PATH (any input attdec reads) into a temporary file, opens it in the system's
headless Chromium (tests/support/browser.py) and saves a screenshot of the tab. Prints the report's size and
render time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.support import browser  # noqa: E402

SHARED = Path(os.environ.get("ATTDEC_SHARED", ROOT.parent / "shared"))
GEMM12 = SHARED / "captures" / "gfx1200" / "gemm_gfx1200_run0"
SAMPLES = SHARED / "ui_output_samples" / "jhinpan__flydsl-kernel-profiling-lib" / "examples"
# (input, tab, image, dispatch index) of the README
README_SHOTS = [
    (SAMPLES / "pa", "overview", ROOT / "docs" / "images" / "report.png", 0),
    (SAMPLES / "moe_reduce", "timeline", ROOT / "docs" / "images" / "report-timeline.png", 0),
    # the ISA view of a kernel with a loop: waitcnt arrows of one wave, the loop navigator on an iteration
    (GEMM12, "isa", ROOT / "docs" / "images" / "report-isa.png", 2),
    (SAMPLES / "pa", "utilization", ROOT / "docs" / "images" / "report-utilization.png", 0),
    (GEMM12, "global", ROOT / "docs" / "images" / "report-global.png", 0),
    (SAMPLES / "pa", "cu", ROOT / "docs" / "images" / "report-cu.png", 0),
    (SAMPLES / "pa", "histogram", ROOT / "docs" / "images" / "report-histogram.png", 0),
    (SHARED / "captures" / "gfx1100" / "gemm_run0", "counters", ROOT / "docs" / "images" / "report-counters.png", 0),
]
TABS = ["overview", "hotspots", "source", "isa", "timeline", "utilization", "global", "cu", "histogram", "counters"]


def shoot(path: Path, tab: str, image: Path, width: int = 1500, height: int = 1000, dispatch: int = 0) -> None:
    from attdec.commands.common import open_dispatches
    from attdec.report.html import write_report

    dispatches = open_dispatches([str(path)])
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        with open(page, "w", encoding="utf-8") as f:
            write_report(f, dispatches)
        with browser.chromium(width, height) as d:
            r = browser.open_report(d, page)
            d.execute_script("attdecReport.go({dispatch: arguments[0], tab: arguments[1]})", dispatch, tab)
            browser.show(d, tab)
            image.parent.mkdir(parents=True, exist_ok=True)
            d.save_screenshot(str(image))
        errors = [m for m in r["console"] if m.get("level") == "SEVERE"]
        print(
            f"{image}: {path.name}, {tab} tab; report {page.stat().st_size / 1e6:.2f} MB, "
            f"rendered in {r['rendered_ms']:.0f} ms, loaded in {r['load_ms']:.0f} ms"
            + (f"; CONSOLE ERRORS: {errors}" if errors else "")
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", nargs="?", type=Path, help="input (default: the README's images)")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "images" / "report.png")
    ap.add_argument("--tab", default="overview", choices=TABS)
    ap.add_argument("--size", default="1500x1000", help="window WIDTHxHEIGHT")
    ap.add_argument("--dispatch", type=int, default=0, help="which dispatch of the page (index, default the first)")
    a = ap.parse_args()
    why = browser.missing()
    if why:
        print(f"report_screenshot: {why}", file=sys.stderr)
        return 1
    w, h = (int(x) for x in a.size.split("x"))
    shots = [(a.path, a.tab, a.output, a.dispatch)] if a.path else README_SHOTS
    for path, tab, image, dispatch in shots:
        shoot(path, tab, image, w, h, dispatch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
