"""Layers never import upward: a module imports its own layer and lower ones only (docs/architecture.md).

The package's top-level modules are layers too: `api` sits above `report` (the commands call it, it never calls
them) and `cli`/`__main__` belong to `commands`. Relative imports are resolved before they are ranked, and imports
inside functions count as much as those at the top.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "attdec"

# Lowest first. A module's layer is its first name under attdec/ (a package or a top-level module).
ORDER = ("errors", "model", "isa", "decoders", "sources", "analysis", "report", "api", "commands")
ALIASES = {"cli": "commands", "__main__": "commands"}
RANK = {name: i for i, name in enumerate(ORDER)}
UNRANKED = {"__init__"}  # attdec/__init__.py re-exports the API lazily: the package's front door, above all


def layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "attdec" or len(parts) < 2:
        return None
    name = ALIASES.get(parts[1], parts[1])
    return None if name in UNRANKED else name


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 2:
        parts.pop()
    return ".".join(parts)


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in `path`, relative ones resolved against its package."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.append((node.lineno, name))
            # `from attdec import api` names a module in the imported names
            if name == "attdec":
                found += [(node.lineno, f"attdec.{a.name}") for a in node.names]
    return found


def upward_imports() -> list[str]:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        me = layer(module_name(path))
        if me is None:
            continue
        for line, name in imported(path):
            other = layer(name)
            if other is not None and other in RANK and RANK[other] > RANK[me]:
                bad.append(f"{path.relative_to(ROOT)}:{line} ({me}) imports {name} ({other})")
    return bad


def test_every_module_has_a_layer():
    names = {layer(module_name(p)) for p in PACKAGE.rglob("*.py")} - {None}
    assert names <= set(RANK), f"modules outside the layer table: {sorted(names - set(RANK))}"


def test_no_upward_imports():
    assert upward_imports() == []


def test_the_check_sees_relative_and_top_level_imports(tmp_path, monkeypatch):
    """The checker itself: a relative upward import and one from api.py into commands are both found."""
    pkg = tmp_path / "attdec"
    (pkg / "model").mkdir(parents=True)
    (pkg / "commands").mkdir()
    (pkg / "model" / "__init__.py").write_text("from ..commands import x\n")
    (pkg / "commands" / "__init__.py").write_text("")
    (pkg / "api.py").write_text("def f():\n    from attdec.commands.common import output_stream\n")
    me = sys.modules[__name__]
    monkeypatch.setattr(me, "ROOT", tmp_path)
    monkeypatch.setattr(me, "PACKAGE", pkg)
    found = upward_imports()
    assert any(s.startswith("attdec/model/__init__.py:1") for s in found), found
    assert any(s.startswith("attdec/api.py:2") for s in found), found


def table_rows(text: str) -> dict[str, set[str]]:
    """The layer table of docs/architecture.md: layer -> the backticked names of its modules column."""
    rows = {}
    for line in text.splitlines():
        cells = line.split("|")
        if len(cells) > 3 and cells[1].strip().strip("`") in RANK:
            rows[cells[1].strip().strip("`")] = set(re.findall(r"`([^`]+)`", cells[2]))
    return rows


def unlisted_modules(package: Path, text: str) -> list[str]:
    """Modules the layer table does not name: by path under attdec/ or under their layer's folder, with or
    without `.py`, through a glob such as `commands/*.py`, or by file name beside their folder's name (`rdna/`
    ... each: `scalar.py`); a package's __init__ by its folder."""
    rows = table_rows(text)
    missing = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        me = layer("attdec." + rel.removesuffix(".py").replace("/", "."))
        if me is None:
            continue
        names = rows.get(me, set())
        parts = rel.split("/")
        if parts[-1] == "__init__.py" and len(parts) > 1:
            if len(parts) == 2 or f"{'/'.join(parts[1:-1])}/" in names or rel in names:
                continue  # a layer's own package, or a subpackage named by its folder
            missing.append(rel)
            continue
        under_layer = "/".join(parts[1:]) if len(parts) > 1 else rel
        candidates = {rel, under_layer, under_layer.removesuffix(".py"), rel.removesuffix(".py")}
        if candidates & names or any(fnmatch.fnmatch(rel, n) for n in names if "*" in n):
            continue
        if len(parts) > 2 and f"{'/'.join(parts[1:-1])}/" in names and parts[-1] in names:
            continue  # "`rdna/` and `gfx9/` (each: `packets.py`, ...)"
        missing.append(rel)
    return missing


def test_the_layer_table_lists_every_module():
    assert unlisted_modules(PACKAGE, (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")) == []


def test_the_table_check_sees_a_module_left_out(tmp_path):
    pkg = tmp_path / "attdec"
    (pkg / "isa" / "render").mkdir(parents=True)
    for f in ("isa/__init__.py", "isa/elf.py", "isa/render/__init__.py", "isa/render/memory.py", "errors.py"):
        (pkg / f).write_text("")
    table = "| layer | modules | what |\n|---|---|---|\n| `errors` | `errors.py` | x |\n"
    table += "| `isa` | `elf.py`, `render/` | y |\n"
    assert unlisted_modules(pkg, table) == ["isa/render/memory.py"]
    assert unlisted_modules(pkg, table.replace("`render/`", "`render/`, `render/memory.py`")) == []
    assert unlisted_modules(pkg, table.replace("`render/`", "`render/` (each: `memory.py`)")) == []
