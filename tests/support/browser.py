"""Drive the system's headless Chromium (Debian `chromium` + `chromium-driver`) to open attdec's HTML reports.

Used by tests/test_report_browser.py and tools/figures/report_screenshot.py. Never downloads a browser or a driver:
Selenium gets the system binaries' paths and runs offline (SE_OFFLINE), and Chromium starts with its
background networking off and a fresh profile, so a report that tried to reach the network would fail.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def binaries() -> tuple[str | None, str | None]:
    return shutil.which("chromium") or shutil.which("chromium-browser"), shutil.which("chromedriver")


def missing() -> str | None:
    """Why no browser test can run here, or None when Chromium, its driver and selenium are all present."""
    browser, driver = binaries()
    if browser is None:
        return "no Chromium (apt-get install chromium chromium-driver; .ci/run installs it)"
    if driver is None:
        return "no chromedriver (apt-get install chromium-driver; .ci/run installs it)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


@contextlib.contextmanager
def chromium(width: int = 1500, height: int = 1000):
    """A Selenium WebDriver on a headless Chromium with a throw-away profile; quits it afterwards."""
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not fetch anything
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver = binaries()
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    profile = tempfile.mkdtemp(prefix="attdec-chromium-")
    for f in [*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"]:
        opts.add_argument(f)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(options=opts, service=Service(driver))
    try:
        yield d
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_report(d, path: Path, timeout: float = 60.0) -> dict:
    """Load a report over file:// and wait until its script has drawn it.

    Returns the page's own render time (ms, from the script's start to its first complete draw), the load
    time the browser measured (navigation start to load event end, ms) and the console messages.
    """
    d.get(Path(path).resolve().as_uri())
    end = time.monotonic() + timeout
    rendered = None
    while time.monotonic() < end:
        rendered = d.execute_script("return document.body && document.body.dataset.rendered")
        if rendered:
            break
        time.sleep(0.05)
    load = d.execute_script(
        "const n = performance.getEntriesByType('navigation')[0]; return n ? n.loadEventEnd - n.startTime : null"
    )
    return {"rendered_ms": float(rendered) if rendered else None, "load_ms": load, "console": d.get_log("browser")}


def show(d, tab: str, settle: float = 0.3) -> None:
    """Switch the report to a tab (overview, hotspots, source, isa, timeline) and let it draw."""
    d.execute_script("attdecReport.show(arguments[0])", tab)
    time.sleep(settle)


def tab_times(d, tabs=("hotspots", "source", "isa", "timeline")) -> dict[str, float]:
    """Show each tab once and return the ms the page took to draw it (tabs are drawn when first shown)."""
    out = {}
    for tab in tabs:
        show(d, tab, settle=0.05)
        ms = d.execute_script("return document.getElementById('tab-' + arguments[0]).dataset.rendered", tab)
        out[tab] = float(ms) if ms else 0.0
    return out


def js(d, script, *args):
    """The value of `script` run in the page `d` shows."""
    return d.execute_script(script, *args)


def console_errors(d) -> list:
    """What the page wrote to the console as errors since the last call."""
    return [m for m in d.get_log("browser") if m.get("level") == "SEVERE"]
