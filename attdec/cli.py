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
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except AttdecError as e:
            click.echo(f"attdec: error: {e}", err=True)
            sys.exit(1)
        except BrokenPipeError:  # `attdec ... | head`
            sys.exit(0)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="attdec")
def main():
    """Decode AMD GPU thread traces (SQTT/ATT) and rank where kernels stall.

    Point it at rocprofv3 --att output (ui_output_agent_* folders, raw .att files) or a tinygrad
    profile.pkl; `attdec demo` shows it on a sample that ships with the package.
    """


# Each command lives in its own module under attdec/commands/; it is imported only when run (or when
# --help lists it), so `attdec decode` does not pay for importing rich tables, the reader, etc.
COMMANDS = {
    "hotspots": "attdec.commands.hotspots:command",
    "waves": "attdec.commands.waves:command",
    "prune-empty": "attdec.commands.prune:command",
    "demo": "attdec.commands.demo:command",
    "decode": "attdec.commands.decode:decode",
    "disasm": "attdec.commands.disasm:command",
    "export-ui": "attdec.commands.export_ui:export_ui",
    "timeline": "attdec.commands.timeline:command",
    "report": "attdec.commands.report:command",
}
