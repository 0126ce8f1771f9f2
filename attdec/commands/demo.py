"""`attdec demo`: `hotspots` on the small synthetic sample that ships inside the package."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import click

from attdec.analysis import BY, FRAMES
from attdec.commands.common import FORMATS, TOP
from attdec.commands.hotspots import run
from attdec.errors import InputError
from attdec.report.common import printable


def demo_path(raw: bool = False) -> Path:
    """The shipped ui_output sample, or (raw) the shipped raw capture: per-SE SQTT blobs and a code object
    (tools/make_demo_raw.py) that `decode`, `hotspots`, `waves` and `export-ui` read like a real one."""
    p = Path(str(files("attdec") / "data" / ("demo_raw" if raw else "demo")))
    marker = p / ("capture.json" if raw else "ui_output_agent_4242_dispatch_7/filenames.json")
    if not marker.is_file():
        raise InputError("the demo sample is missing from this installation", str(p))
    return p


@click.command("demo")
@click.option("--by", type=click.Choice(BY), default="line", show_default=True)
@click.option("--top", type=TOP, default=10, show_default=True, help="Rows to show (0 = all).")
@click.option("--frame", type=click.Choice(FRAMES), default="inner", show_default=True)
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
def command(by, top, frame, fmt):
    """Show `attdec hotspots` on a synthetic sample shipped with attdec (made by tools/make_demo_sample.py).

    Try the other commands on it too: its path is printed first, and so is the path of a small raw capture
    (SQTT blobs and a code object, tools/make_demo_raw.py) for `decode`, `hotspots`, `waves`, `export-ui`.
    """
    p = demo_path()
    if fmt == "table":
        ui, raw = printable(p), printable(demo_path(raw=True))
        click.echo(
            f"attdec demo: a made-up softmax kernel, 4 waves, in {ui}\n"
            f"(the same as: attdec hotspots {ui}{'' if by == 'line' else ' --by ' + by})\n"
            f"A raw capture ships too (synthetic gfx942 SQTT of 12 waves + its code object), try:\n"
            f"  attdec decode {raw}\n  attdec hotspots {raw}\n  attdec waves {raw}\n"
        )
    run([str(p)], by=by, top=top, frame=frame, fmt=fmt)
