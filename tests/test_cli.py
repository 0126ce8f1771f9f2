from conftest import invoke

from attdec import __version__


def test_version_and_help():
    r = invoke(["--version"])
    assert r.exit_code == 0 and __version__ in r.output
    r = invoke(["--help"])
    assert r.exit_code == 0 and "thread traces" in r.output


def test_every_registered_command_loads_under_its_name():
    from attdec.cli import COMMANDS, command_parser

    for name in COMMANDS:
        parser, run = command_parser(name)
        assert parser.prog == f"attdec {name}" and callable(run) and run.__doc__
    r = invoke(["--help"])
    assert all(name in r.output for name in COMMANDS)
