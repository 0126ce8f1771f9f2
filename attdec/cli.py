"""The `attdec` command line: argparse (standard library) and one thin module per command in attdec/commands/.

A command module has `arguments(p)`, which adds its options to `p` (a `Parser`), and the function COMMANDS
names, which takes the parsed arguments, does the work and returns the exit status (None = 0); that
function's docstring is the command's --help. A module is imported only when its command runs, so
`attdec --help` imports none and each command imports only what it uses (no click, no rich, numpy only
when arrays are made: `attdec hotspots` on a ui_output folder starts like a one-page script).

Exit status: 0 success, 1 an input error (one `attdec: error: <where>: <what>` line), 2 a usage error.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys
from collections.abc import Callable

from attdec import __version__
from attdec.errors import AttdecError

# name -> ("module:function", one line for `attdec --help`). Each command lives in its own module under
# attdec/commands/ and is imported only when run, so the command line starts without numpy.
COMMANDS = {
    "hotspots": ("attdec.commands.hotspots:command", "Rank source lines, instructions or files by stall cycles."),
    "diff": ("attdec.commands.diff:command", "Compare runs kernel by kernel: per-line deltas, marked against noise."),
    "noise": ("attdec.commands.noise:command", "Run-to-run spread of repeated runs, per kernel and per line."),
    "waves": ("attdec.commands.waves:command", "One row per traced wave: where, when, how long, stall."),
    "decode": ("attdec.commands.decode:decode", "Decode raw SQTT blobs or captures into records."),
    "disasm": ("attdec.commands.disasm:command", "Disassemble an AMDGPU code object like llvm-objdump."),
    "info": ("attdec.commands.info:command", "What an input is: kind, dispatches, GPU; an .rgp's chunks."),
    "export-ui": ("attdec.commands.export_ui:export_ui", "Write a raw capture as rocprofv3 ui_output folders."),
    "prune-empty": ("attdec.commands.prune:command", "Remove dispatch folders with zero waves (dry run by default)."),
    "demo": ("attdec.commands.demo:command", "Show hotspots on a sample that ships with attdec."),
    "waits": ("attdec.commands.waits:command", "Which loads, stores and other operations each wait waited for."),
    "latency": ("attdec.commands.latency:command", "How much memory latency was hidden behind other work."),
    "cfg": ("attdec.commands.cfg:command", "Basic blocks and control-flow graph per kernel, loops nested."),
    "loops": ("attdec.commands.loops:command", "Loop iterations per wave: count, first vs steady, outliers."),
    "kernel": ("attdec.commands.kernel:command", "Kernel resources, theoretical and achieved occupancy."),
    "counters": ("attdec.commands.counters:command", "Performance counters of each dispatch (tinygrad PMC)."),
    "report": ("attdec.commands.report:command", "Write a one-file HTML report: hotspots, source, ISA, timeline."),
    "timeline": ("attdec.commands.timeline:command", "Write a Chrome trace (Perfetto, chrome://tracing) of the waves."),
}

ABOUT = """Decode AMD GPU thread traces (SQTT/ATT) and rank where kernels stall.

Point it at rocprofv3 --att output (ui_output_agent_* folders, raw .att files) or a tinygrad profile.pkl;
`attdec demo` shows it on a sample that ships with the package."""

HELP_WIDTH = 80  # help text is wrapped at the terminal's width, at most this
OPTION_COLUMN = 30  # where option help starts


def _width() -> int:
    try:
        return max(40, min(HELP_WIDTH, int(os.environ.get("COLUMNS", "")) - 2))
    except ValueError:
        return HELP_WIDTH


def _paragraphs(text: str, width: int, indent: str = "  ") -> str:
    """A docstring as paragraphs rewrapped to `width` (blank lines between paragraphs kept)."""
    import textwrap

    paras = textwrap.dedent(text or "").strip().split("\n\n")
    return "\n\n".join(
        textwrap.fill(" ".join(p.split()), width, initial_indent=indent, subsequent_indent=indent) for p in paras
    )


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose --help reads like the rest of attdec: usage, the command's docstring, then
    every option with its help and, when it has one, its default. Usage errors exit 2."""

    def __init__(self, name: str, doc: str, usage: str):
        super().__init__(prog=f"attdec {name}", description=doc, add_help=False)
        self.usage_line = usage

    def format_usage(self) -> str:
        return f"Usage: {self.prog} {self.usage_line}\n"

    def format_help(self) -> str:
        import textwrap

        width = _width()
        lines = [self.format_usage(), _paragraphs(self.description or "", width), "", "Options:"]
        for a in self._actions:
            if not a.option_strings:
                continue
            flags = ", ".join(a.option_strings)
            if a.nargs != 0:
                flags += f" {a.metavar or _metavar(a)}"
            text = (a.help or "").replace("%%", "%")
            if _shows_default(a):
                text += f"  [default: {a.default}]"
            body = textwrap.wrap(text, width - OPTION_COLUMN) or [""]
            if len(flags) + 4 > OPTION_COLUMN:
                lines.append(f"  {flags}")
                lines += [" " * OPTION_COLUMN + b for b in body if b]
            else:
                lines.append(f"  {flags:<{OPTION_COLUMN - 2}}{body[0]}".rstrip())
                lines += [" " * OPTION_COLUMN + b for b in body[1:]]
        return "\n".join(lines) + "\n"

    def error(self, message: str):
        self.exit(2, f"{self.format_usage()}Try '{self.prog} --help' for help.\n\nError: {message}\n")


def _metavar(a: argparse.Action) -> str:
    if a.choices is not None:
        return "[" + "|".join(map(str, a.choices)) + "]"
    kind = getattr(a.type, "__name__", "")
    return {"int": "INTEGER", "integer": "INTEGER", "float": "FLOAT"}.get(kind, "TEXT")


def _shows_default(a: argparse.Action) -> bool:
    """Every option with a default value says it (flags and repeatable options have none to say)."""
    return a.nargs != 0 and a.default not in (None, (), argparse.SUPPRESS) and a.option_strings != ["-h", "--help"]


def command_parser(name: str) -> tuple[Parser, Callable]:
    """The parser of command `name` and the function that runs it (the command's module is imported)."""
    module, attr = COMMANDS[name][0].split(":")
    mod = importlib.import_module(module)
    fn = getattr(mod, attr)
    p = Parser(name, fn.__doc__ or "", getattr(mod, "USAGE", "[OPTIONS] PATHS..."))
    mod.arguments(p)
    p.add_argument("-h", "--help", action="help", help="Show this message and exit.")
    return p, fn


def main_help() -> str:
    import textwrap

    width = _width()
    names = sorted(COMMANDS)
    pad = max(map(len, names)) + 2
    lines = ["Usage: attdec [OPTIONS] COMMAND [ARGS]...", "", _paragraphs(ABOUT, width), "", "Options:"]
    lines += ["  --version   Show the version and exit.", "  -h, --help  Show this message and exit.", ""]
    lines.append("Commands:")
    for n in names:
        body = textwrap.wrap(COMMANDS[n][1], width - pad - 2) or [""]
        lines.append(f"  {n:<{pad}}{body[0]}")
        lines += [" " * (pad + 2) + b for b in body[1:]]
    return "\n".join(lines) + "\n"


def run(argv: list[str]) -> int:
    """Run `attdec ARGV` and return its exit status (usage errors and --help raise SystemExit)."""
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(main_help())
        return 0 if argv else 2
    if argv[0] == "--version":
        sys.stdout.write(f"attdec, version {__version__}\n")
        return 0
    if argv[0] not in COMMANDS:
        sys.stderr.write(
            "Usage: attdec [OPTIONS] COMMAND [ARGS]...\nTry 'attdec --help' for help.\n\n"
            f"Error: No such command '{argv[0]}'.\n"
        )
        return 2
    from attdec.report.output import guarded

    return guarded(lambda: _run_command(argv), lambda line: sys.stderr.write(line + "\n"))


def _run_command(argv: list[str]) -> int:
    common = sys.modules.get("attdec.commands.common")
    if common is not None:  # a new run (tests and tools run several in one process)
        common.LOST.clear()
    try:
        p, fn = command_parser(argv[0])
        args = p.parse_intermixed_args(argv[1:])
        status = fn(args) or 0
        common = sys.modules.get("attdec.commands.common")
        if common is not None and common.LOST:  # inputs that failed while the others were reported
            return 1
        return status
    except AttdecError as e:
        from attdec.report.common import printable

        sys.stderr.write(printable(f"attdec: error: {e}") + "\n")
        return 1


# numpy's BLAS starts a thread per core on import (0.05-0.25 s of CPU per command, more when forked --jobs
# workers start their own); attdec does no BLAS work. A value the user set is kept.
ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def main(argv: list[str] | None = None) -> None:
    """The `attdec` console script (and `python -m attdec`)."""
    for name in ONE_THREAD:
        os.environ.setdefault(name, "1")
    # A command makes many small objects and next to no garbage cycles (the decoders run with the collector
    # off already): the cyclic collector, every 700 allocations, would cost a plain `attdec hotspots` 1-3 ms,
    # a tenth of its own time. It is off while the command runs.
    was = gc.isenabled()
    gc.disable()
    try:
        status = run(sys.argv[1:] if argv is None else [str(a) for a in argv])
    except KeyboardInterrupt:  # Ctrl-C before run's guard (report.output.guarded) was in place
        sys.stderr.write("attdec: error: interrupted\n")
        status = 130
    finally:
        if was:
            gc.enable()
    if argv is None:  # the process ends here (tests and tools pass argv and go on)
        leave(status)
    sys.exit(status)


def leave(status: int) -> None:
    """End the process: exit handlers run and output is flushed, but the interpreter's teardown, which frees
    every object one at a time (70-85 ms of CPU after decoding the 59 captures, on top of any --jobs; a
    last full collection for a plain report), is left to the kernel."""
    import contextlib

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe (`| head`) or stream: nothing reaches it
            stream.flush()
    os._exit(status)
