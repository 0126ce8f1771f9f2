"""The `attdec` command line: one click group whose commands live one per module in attdec/commands/.

A command module holds a `click.Command` (the name COMMANDS gives); its docstring is the command's --help,
its callback returns the exit status (None = 0). A module is imported only when its command runs or shows
its help, so `attdec --help` imports no command and each command imports only what it uses (numpy only
when arrays are made).

`run(argv)` is the one place a command's outcome becomes an exit status (errors.ExitCode): usage errors are
click's message (2), input errors one `attdec: error: <where>: <what>` line (1), Ctrl-C one line (130).
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys

import click

from attdec import __version__
from attdec.errors import AttdecError, ExitCode

# name -> ("module:attribute" of its click.Command, one line for `attdec --help`). The one-liners live here so
# that listing the commands imports none of them.
COMMANDS = {
    "hotspots": ("attdec.commands.hotspots:hotspots", "Rank source lines, instructions or files by stall cycles."),
    "diff": ("attdec.commands.diff:diff", "Compare runs kernel by kernel: per-line deltas, marked against noise."),
    "noise": ("attdec.commands.noise:noise", "Run-to-run spread of repeated runs, per kernel and per line."),
    "waves": ("attdec.commands.waves:waves", "One row per traced wave: where, when, how long, stall."),
    "decode": ("attdec.commands.decode:decode", "Decode raw SQTT blobs or captures into records."),
    "disasm": ("attdec.commands.disasm:disasm", "Disassemble an AMDGPU code object like llvm-objdump."),
    "info": ("attdec.commands.info:info", "What an input is: kind, dispatches, GPU; an .rgp's chunks."),
    "export-ui": ("attdec.commands.export_ui:export_ui", "Write a raw capture as rocprofv3 ui_output folders."),
    "prune-empty": (
        "attdec.commands.prune:prune_empty",
        "Remove dispatch folders with zero waves (dry run by default).",
    ),
    "demo": ("attdec.commands.demo:demo", "Show hotspots on a sample that ships with attdec."),
    "waits": ("attdec.commands.waits:waits", "Which loads, stores and other operations each wait waited for."),
    "latency": ("attdec.commands.latency:latency", "How much memory latency was hidden behind other work."),
    "cfg": ("attdec.commands.cfg:cfg", "Basic blocks and control-flow graph per kernel, loops nested."),
    "loops": ("attdec.commands.loops:loops", "Loop iterations per wave: count, first vs steady, outliers."),
    "kernel": ("attdec.commands.kernel:kernel", "Kernel resources, theoretical and achieved occupancy."),
    "counters": ("attdec.commands.counters:counters", "Performance counters of each dispatch (tinygrad PMC)."),
    "report": ("attdec.commands.report:report", "Write a one-file HTML report: hotspots, source, ISA, timeline."),
    "advise": ("attdec.commands.advise:advise", "Name each kernel's problems: where, cycles at stake, what to try."),
    "timeline": (
        "attdec.commands.timeline:timeline",
        "Write a Chrome trace (Perfetto, chrome://tracing) of the waves.",
    ),
}

ABOUT = """Decode AMD GPU thread traces (SQTT/ATT) and rank where kernels stall.

Point it at rocprofv3 --att output (ui_output_agent_* folders, raw .att files) or a tinygrad profile.pkl;
`attdec demo` shows it on a sample that ships with the package.

Shell completion: add eval "$(_ATTDEC_COMPLETE=bash_source attdec)" to ~/.bashrc (zsh_source for ~/.zshrc,
fish_source for fish)."""


def exit_status_help() -> str:
    """The exit status table for --help's epilog (\\b: click keeps the lines as they are)."""
    return "\b\nExit status:\n" + "\n".join(f"  {int(c):<4}{c.meaning}" for c in ExitCode)


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command is run (or its help shown)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr = COMMANDS[cmd_name][0].split(":")
        return getattr(importlib.import_module(module), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from COMMANDS' one-liners: no command module is imported to list them."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][1]) for name in self.list_commands(ctx)])


COMPLETE = "_ATTDEC_COMPLETE"  # the environment variable shell completion sets (click's convention)
CONTEXT = {"help_option_names": ["-h", "--help"], "show_default": True, "max_content_width": 100}


@click.group(cls=LazyGroup, help=ABOUT, epilog=exit_status_help(), context_settings=CONTEXT, no_args_is_help=True)
@click.version_option(__version__, prog_name="attdec", message="%(prog)s, version %(version)s")
def attdec() -> None:
    pass


def run(argv: list[str]) -> int:
    """Run `attdec ARGV` in this process and return its exit status (never raises for bad input): Ctrl-C,
    SIGTERM and a full disk end it with one line (report.output.guarded)."""
    from attdec.report.output import guarded

    if COMPLETE in os.environ:  # the shell asks for completions: click answers and exits
        attdec.main(args=list(argv), prog_name="attdec", complete_var=COMPLETE)
    return guarded(lambda: _run_command(argv), lambda line: sys.stderr.write(line + "\n"))


def _run_command(argv: list[str]) -> int:
    try:
        # click's main() would turn a closed pipe into exit 1 and print usage errors itself: the context is
        # made and invoked here, so that every outcome maps to ExitCode in this one place
        with attdec.make_context("attdec", list(argv)) as ctx:
            status = attdec.invoke(ctx)
    except click.exceptions.Exit as e:  # --help, --version
        return e.exit_code
    except click.ClickException as e:  # usage errors: click's own message
        e.show()
        return ExitCode.USAGE if isinstance(e, click.UsageError) else ExitCode.INPUT_ERROR
    except AttdecError as e:
        from attdec.report.common import printable

        sys.stderr.write(printable(f"attdec: error: {e}") + "\n")
        return ExitCode.INPUT_ERROR
    except MemoryError:  # what no cap foresaw (attdec.sources.limits): one line, not a traceback
        sys.stderr.write("attdec: error: out of memory: the input is too large for this machine's memory\n")
        return ExitCode.INPUT_ERROR
    except click.Abort:  # Ctrl-C at a click prompt: as any other Ctrl-C
        raise KeyboardInterrupt from None
    return int(status or 0)


# numpy's BLAS starts a thread per core on import (0.05-0.25 s of CPU per command, more when forked --jobs
# workers start their own); attdec does no BLAS work. A value the user set is kept.
ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def main(argv: list[str] | None = None) -> None:
    """The `attdec` console script (and `python -m attdec`)."""
    for name in ONE_THREAD:
        os.environ.setdefault(name, "1")
    # A command makes many small objects and next to no garbage cycles (the decoders run with the collector
    # off already): the cyclic collector, every 700 allocations, would cost a plain `attdec hotspots` a
    # noticeable share of its own time (benchmarks/RESULTS.md). It is off while the command runs.
    was = gc.isenabled()
    gc.disable()
    try:
        status = run(sys.argv[1:] if argv is None else [str(a) for a in argv])
    except KeyboardInterrupt:  # Ctrl-C before run's guard (report.output.guarded) was in place
        sys.stderr.write("attdec: error: interrupted\n")
        status = ExitCode.INTERRUPTED
    finally:
        if was:
            gc.enable()
    if argv is None:  # the process ends here (tests and tools pass argv and go on)
        leave(status)
    sys.exit(status)


def leave(status: int) -> None:
    """End the process: exit handlers run and output is flushed, but the interpreter's teardown, which frees
    every object one at a time (CPU time after a big decode, on top of any --jobs; a last full collection
    for a plain report), is left to the kernel."""
    import contextlib

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe (`| head`) or stream: nothing reaches it
            stream.flush()
    os._exit(status)
