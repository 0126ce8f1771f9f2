from click.testing import CliRunner

from attdec import __version__
from attdec.cli import main


def test_version_and_help():
    r = CliRunner().invoke(main, ["--version"])
    assert r.exit_code == 0 and __version__ in r.output
    r = CliRunner().invoke(main, ["--help"])
    assert r.exit_code == 0 and "thread traces" in r.output


def test_every_registered_command_loads_under_its_name():
    from attdec.cli import COMMANDS

    for name in COMMANDS:
        cmd = main.get_command(None, name)
        assert cmd is not None and cmd.name == name
    r = CliRunner().invoke(main, ["--help"])
    assert all(name in r.output for name in COMMANDS)
