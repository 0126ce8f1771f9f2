"""The `attdec` command line: a click group of thin commands, each in attdec/commands/."""

from __future__ import annotations

import importlib
import sys

import click

from attdec import __version__
from attdec.errors import AttdecError


class Group(click.Group):
    """Loads commands lazily; turns attdec's typed errors into one line on stderr and exit status 1."""

    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        entry = COMMANDS.get(name)
        if entry is None:
            return None
        module, attr = entry[0].split(":")
        return getattr(importlib.import_module(module), attr)

    def format_commands(self, ctx, formatter):
        """The command list from COMMANDS' one-liners: `attdec --help` imports no command module."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][1]) for name in self.list_commands(ctx)])

    def invoke(self, ctx):
        common = sys.modules.get("attdec.commands.common")
        if common is not None:  # a new run (tests and tools run several in one process)
            common.LOST.clear()
        try:
            rv = super().invoke(ctx)
            common = sys.modules.get("attdec.commands.common")
            if common is not None and common.LOST:  # inputs that failed while the others were reported
                sys.exit(1)
            return rv
        except AttdecError as e:
            from attdec.report.common import printable

            click.echo(printable(f"attdec: error: {e}"), err=True)
            sys.exit(1)
        except BrokenPipeError:  # `attdec ... | head`: the reader is gone, which is not an error
            quiet_stdout()
            sys.exit(0)


def quiet_stdout() -> None:
    """Point stdout at /dev/null so that flushing it at exit does not fail again on the closed pipe."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (tests capture stdout in memory)
        pass


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="attdec")
def main():
    """Decode AMD GPU thread traces (SQTT/ATT) and rank where kernels stall.

    Point it at rocprofv3 --att output (ui_output_agent_* folders, raw .att files) or a tinygrad
    profile.pkl; `attdec demo` shows it on a sample that ships with the package.
    """


# name -> ("module:attribute", one line for `attdec --help`). Each command lives in its own module under
# attdec/commands/ and is imported only when run, so the command line starts without numpy or rich.
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
