"""`attdec info PATH...`: what each input is, before anything is decoded."""

from __future__ import annotations

from attdec.commands.common import attdec_command, emit, format_option, input_format_option, paths_argument


@attdec_command(
    paths_argument(),
    input_format_option("Input kind; detected when omitted."),
    format_option(("table", "json")),
)
def info(a) -> None:
    """What each input is: its kind and the dispatches it holds (arch, shader engines, code objects and
    load bases), not decoded. For an .rgp also the container, every chunk with its offset, size and what
    attdec read from it, and every repair the reader made (e.g. rgptool's padding bug)."""
    import sys

    from attdec import api
    from attdec.report import info as rep

    infos = api.describe(a.paths, a.input_format)
    emit(infos, a.fmt, sys.stdout, rep.reporters())
