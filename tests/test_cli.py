from conftest import invoke

from attdec import __version__


def test_version_and_help():
    r = invoke(["--version"])
    assert r.exit_code == 0 and __version__ in r.output
    r = invoke(["--help"])
    assert r.exit_code == 0 and "thread traces" in r.output


def test_every_registered_command_loads_under_its_name():
    import click

    from attdec.cli import COMMANDS, LazyGroup, attdec

    assert isinstance(attdec, LazyGroup)
    ctx = click.Context(attdec, info_name="attdec")
    for name in COMMANDS:
        cmd = attdec.get_command(ctx, name)
        assert isinstance(cmd, click.Command) and cmd.help and cmd.callback is not None
    r = invoke(["--help"])
    assert all(name in r.output for name in COMMANDS)


def test_click_runner_usage_and_input_errors():
    """The click group runs under click's own test runner; usage errors are click's (2), input errors one
    `attdec: error:` line (1), the exit codes one table."""
    from click.testing import CliRunner

    from attdec.cli import attdec
    from attdec.errors import ExitCode

    runner = CliRunner()
    r = runner.invoke(attdec, ["hotspots", "--top", "-1", "x"])
    assert r.exit_code == ExitCode.USAGE and "-1 is not in the range x>=0" in r.output
    r = runner.invoke(attdec, ["waves", "--sort", "nope", "x"])
    assert r.exit_code == ExitCode.USAGE and "'nope' is not one of" in r.output
    r = runner.invoke(attdec, ["--help"])
    assert r.exit_code == 0 and all(f"{int(c):<4}{c.meaning}" in r.output for c in ExitCode)
    r = invoke(["hotspots", "/nonexistent/attdec"])
    assert r.exit_code == ExitCode.INPUT_ERROR and r.stderr.startswith("attdec: error: /nonexistent/attdec:")
    assert r.stderr.count("\n") == 1


def test_shell_completion(tmp_path):
    """`_ATTDEC_COMPLETE=bash_source attdec` prints the bash hook; completing asks the lazy group for names
    and options (the README's setup line)."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    env = dict(os.environ, PYTHONPATH=str(ROOT), _ATTDEC_COMPLETE="bash_source")
    p = subprocess.run([sys.executable, "-m", "attdec"], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0 and "_attdec_completion" in p.stdout and "complete -o" in p.stdout
    env.update(_ATTDEC_COMPLETE="bash_complete", COMP_WORDS="attdec hot", COMP_CWORD="1")
    p = subprocess.run([sys.executable, "-m", "attdec"], capture_output=True, text=True, env=env, timeout=120)
    assert p.stdout.split() == ["plain,hotspots"]
    env.update(COMP_WORDS="attdec waves --so", COMP_CWORD="2")
    p = subprocess.run([sys.executable, "-m", "attdec"], capture_output=True, text=True, env=env, timeout=120)
    assert p.stdout.split() == ["plain,--sort"]


def test_commands_import_no_other_command_and_the_api_no_command():
    """One use-case layer: a command reaches another only through the click group (demo -> hotspots),
    shared options live in commands/common.py, and the API does not borrow CLI helpers."""
    import ast

    from conftest import ROOT

    for path in sorted((ROOT / "attdec").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        is_command = rel.startswith("attdec/commands/") and path.name != "common.py"
        if not (is_command or rel == "attdec/api.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("attdec.commands"):
                allowed = is_command and node.module == "attdec.commands.common"
                assert allowed, f"{rel}:{node.lineno} imports {node.module}"


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr("attdec.sources.pipeline.describe", interrupted)  # info reads its inputs with it
    r = invoke(["info", "attdec/data/demo"])
    assert r.exit_code == 130 and r.stderr == "attdec: error: interrupted\n" and r.exception is None
