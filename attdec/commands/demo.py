"""`attdec demo`: `hotspots` on the small synthetic sample that ships inside the package."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import click

from attdec.analysis import BY, FRAMES
from attdec.commands.common import COUNT, attdec_command, format_option
from attdec.errors import InputError
from attdec.report.common import printable


def demo_path(raw: bool = False) -> Path:
    """The shipped ui_output sample, or (raw) the shipped raw capture: per-SE SQTT blobs and a code object
    (tools/makers/make_demo_raw.py) that `decode`, `hotspots`, `waves` and `export-ui` read like a real one."""
    p = Path(str(files("attdec") / "data" / ("demo_raw" if raw else "demo")))
    marker = p / ("capture.json" if raw else "ui_output_agent_4242_dispatch_7/filenames.json")
    if not marker.is_file():
        raise InputError("the demo sample is missing from this installation", str(p))
    return p


@attdec_command(
    click.option("--by", type=click.Choice(BY), default="line"),
    click.option("--top", type=COUNT, default=10, help="Rows to show (0 = all)."),
    click.option("--frame", type=click.Choice(FRAMES), default="inner"),
    format_option(),
)
def demo(a) -> None:
    """Show `attdec hotspots` on a synthetic sample shipped with attdec (made by tools/makers/make_demo_sample.py).

    Try the other commands on it too: its path is printed first, and so is the path of a small raw capture
    (SQTT blobs and a code object, tools/makers/make_demo_raw.py) for `decode`, `hotspots`, `waves`, `export-ui`.
    """
    p = demo_path()
    if a.fmt == "table":
        ui, raw = printable(p), printable(demo_path(raw=True))
        print(
            f"attdec demo: a made-up softmax kernel, 4 waves, in {ui}\n"
            f"(the same as: attdec hotspots {ui}{'' if a.by == 'line' else ' --by ' + a.by})\n"
            f"A raw capture ships too (synthetic gfx942 SQTT of 12 waves + its code object), try:\n"
            f"  attdec decode {raw}\n  attdec hotspots {raw}\n  attdec waves {raw}\n"
        )
    ctx = click.get_current_context()
    group = ctx.find_root().command
    hotspots = group.get_command(ctx, "hotspots") if isinstance(group, click.Group) else None
    if hotspots is None:  # through the group: no command imports another
        raise click.UsageError("demo runs within the attdec command group")
    return ctx.invoke(hotspots, paths=(str(p),), by=a.by, top=a.top, frame=a.frame, fmt=a.fmt)
