"""`attdec info PATH...`: what each input is, before anything is decoded."""

from __future__ import annotations

from attdec.commands.common import add_paths
from attdec.sources import KINDS


def arguments(p) -> None:
    add_paths(p)
    p.add_argument("--input-format", choices=list(KINDS), default=None, help="Input kind; detected when omitted.")
    p.add_argument("--format", dest="fmt", choices=("table", "json"), default="table")


def command(a) -> None:
    """What each input is: its kind and the dispatches it holds (arch, shader engines, code objects and
    load bases), not decoded. For an .rgp also the container, every chunk with its offset, size and what
    attdec read from it, and every repair the reader made (e.g. rgptool's padding bug)."""
    import sys

    from attdec.report import info as rep
    from attdec.sources.pipeline import describe

    infos = describe(a.paths, a.input_format)
    (rep.print_json if a.fmt == "json" else rep.print_table)(infos, sys.stdout)
