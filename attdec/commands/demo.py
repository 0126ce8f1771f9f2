"""`attdec demo`: `hotspots` on the small synthetic sample that ships inside the package."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import click

from attdec.analysis import BY, FRAMES
from attdec.commands.common import FORMATS
from attdec.commands.hotspots import run
from attdec.errors import InputError


def demo_path() -> Path:
    p = Path(str(files("attdec") / "data" / "demo"))
    if not (p / "ui_output_agent_4242_dispatch_7" / "filenames.json").is_file():
        raise InputError("the demo sample is missing from this installation", str(p))
    return p


@click.command("demo")
@click.option("--by", type=click.Choice(BY), default="line", show_default=True)
@click.option("--top", type=int, default=10, show_default=True)
@click.option("--frame", type=click.Choice(FRAMES), default="inner", show_default=True)
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
def command(by, top, frame, fmt):
    """Show `attdec hotspots` on a synthetic sample shipped with attdec (made by tools/make_demo_sample.py).

    Try the other commands on it too: its path is printed first.
    """
    p = demo_path()
    if fmt == "table":
        click.echo(
            f"attdec demo: a made-up softmax kernel, 4 waves, in {p}\n"
            f"(the same as: attdec hotspots {p}{'' if by == 'line' else ' --by ' + by})\n"
        )
    run([str(p)], by=by, top=top, frame=frame, fmt=fmt)
