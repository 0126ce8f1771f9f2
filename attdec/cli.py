"""The `attdec` command line: a click group of thin commands, each in attdec/commands/."""
from __future__ import annotations

import sys

import click

from attdec import __version__
from attdec.errors import AttdecError


class Group(click.Group):
    """Turns attdec's typed errors into one line on stderr and exit status 1, never a traceback."""

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


# Each command lives in its own module under attdec/commands/ and is registered here.
from attdec.commands.export_ui import export_ui  # noqa: E402
main.add_command(export_ui)
from attdec.commands.hotspots import command as _hotspots  # noqa: E402
main.add_command(_hotspots)
from attdec.commands.waves import command as _waves  # noqa: E402
main.add_command(_waves)
from attdec.commands.prune import command as _prune  # noqa: E402
main.add_command(_prune)
from attdec.commands.demo import command as _demo  # noqa: E402
main.add_command(_demo)
from attdec.commands.decode import decode  # noqa: E402
main.add_command(decode)
from attdec.commands.disasm import command as _disasm  # noqa: E402
main.add_command(_disasm)
