"""`attdec info PATH...`: what each input is, before anything is decoded."""

from __future__ import annotations

import click

from attdec.sources import KINDS


@click.command("info")
@click.argument("paths", nargs=-1, required=True)
@click.option("--input-format", type=click.Choice(list(KINDS)), default=None, help="Input kind; detected when omitted.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def command(paths, input_format, fmt):
    """What each input is: its kind and the dispatches it holds (arch, shader engines, code objects and
    load bases), not decoded. For an .rgp also the container, every chunk with its offset, size and what
    attdec read from it, and every repair the reader made (e.g. rgptool's padding bug)."""
    import sys

    from attdec.report import info as rep
    from attdec.sources.pipeline import describe

    infos = describe(paths, input_format)
    (rep.print_json if fmt == "json" else rep.print_table)(infos, sys.stdout)
