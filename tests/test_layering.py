"""Dependencies point one way: walk every import (function-level and ``TYPE_CHECKING`` ones
included) and fail on a wrong arrow, an import cycle, or a subpackage without its one
paragraph, its exports or its one error root."""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import REPO_ROOT

ROOT = REPO_ROOT
PACKAGES = ("adapters", "agent_core", "memory", "gateway")
OURS = set(PACKAGES)
#: memory's subsystems; they share memory/files.py and memory/people.py, and only the
#: scanner is used by the others.
SUBSYSTEMS = ("archive", "curated", "skills", "scan")
#: Imported by module name on purpose: the model SDK, and a memory provider's libraries,
#: load only when a command needs them.
BY_MODULE = frozenset(
    {
        "agent_core.models.openai",
        "agent_core.models.scripted",
        "memory.providers.local",
        "memory.providers.honcho",
        "memory.providers.mem0",
        "memory.documents.postgres",  # psycopg is an extra: only a postgres backend loads it
        "memory.documents.schema",  # the same (its migrations, read by `mnemo storage check`)
        "memory.archive.postgres",  # asyncpg, the same
    }
)
#: Besides memory/archive/ and gateway/: the local memory provider keeps its tables in
#: state.db and writes them through the archive's writer (``Archive.transact``).
SQLITE_TOO = ("memory/providers/local/",)


def _import_nodes(path: Path) -> Iterator[ast.Import | ast.ImportFrom]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in _import_nodes(path):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif node.module and node.level == 0:
            names.append(node.module)
    return names


def _modules() -> list[tuple[str, Path]]:
    return [
        (path.relative_to(ROOT).as_posix(), path)
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    ]


def _module_name(rel: str) -> str:
    parts = rel.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _violations(rel: str, imported: str) -> str | None:
    top = imported.split(".", maxsplit=1)[0]
    package = rel.split("/", maxsplit=1)[0]
    allowed_ours = {
        "adapters": {"adapters"},
        "memory": {"memory"},
        "agent_core": {"agent_core", "memory"},
        "gateway": OURS,
    }[package]
    if top in OURS and top not in allowed_ours:
        return f"{rel} imports {imported}: {package}/ may import only {sorted(allowed_ours)}"
    if top == "telegram" and not rel.startswith("adapters/telegram/"):
        return f"{rel} imports telegram: only adapters/telegram/ may"
    if top == "discord" and not rel.startswith("adapters/discord/"):
        return f"{rel} imports discord: only adapters/discord/ may"
    if top == "openai" and rel != "agent_core/models/openai.py":
        return f"{rel} imports openai: only agent_core/models/openai.py may"
    if top == "aiosqlite" and not rel.startswith("memory/archive/"):
        return f"{rel} imports aiosqlite: only memory/archive/ may"
    # the gateway may: its delivery ledger runs on the archive's writer, and the CLI reports
    # sqlite3.Error for a state.db that is not a database
    if (
        top == "sqlite3"
        and package != "gateway"
        and not rel.startswith(("memory/archive/", *SQLITE_TOO))
    ):
        return f"{rel} imports sqlite3: only memory/archive/ (and gateway/, {SQLITE_TOO}) may"
    return _subsystem_violation(rel, imported) or _through_the_package(rel, imported)


def _subsystem_violation(rel: str, imported: str) -> str | None:
    """memory's subsystems do not import one another, except the scanner."""
    parts, target = rel.split("/"), imported.split(".")
    if parts[0] != "memory" or target[0] != "memory" or len(parts) < 3 or len(target) < 2:
        return None
    mine, theirs = parts[1], target[1]
    if mine in SUBSYSTEMS and theirs in SUBSYSTEMS and theirs not in (mine, "scan"):
        return f"{rel} imports {imported}: memory/{mine}/ must not import memory/{theirs}/"
    return None


def _through_the_package(rel: str, imported: str) -> str | None:
    """Code outside a subpackage imports its names from the subpackage, not its modules."""
    target = imported.split(".")
    if target[0] not in OURS or len(target) < 3 or imported in BY_MODULE:
        return None
    subpackage = "/".join(target[:2])
    if not (ROOT / subpackage / "__init__.py").exists() or rel.startswith(subpackage + "/"):
        return None
    return f"{rel} imports {imported}: import from {'.'.join(target[:2])} instead"


def test_every_package_exists_and_is_scanned() -> None:
    modules = _modules()
    assert {rel.split("/")[0] for rel, _ in modules} == OURS


@pytest.mark.parametrize(("rel", "path"), _modules(), ids=lambda v: str(v))
def test_imports_point_one_way(rel: str, path: Path) -> None:
    problems = [p for name in _imports(path) if (p := _violations(rel, name))]
    assert problems == []


@pytest.mark.parametrize(
    ("rel", "imported"),
    [
        ("memory/curated/store.py", "gateway.config.schema"),
        ("memory/curated/store.py", "agent_core.loop"),
        ("memory/archive/search.py", "agent_core.tools"),
        ("agent_core/loop.py", "adapters.messages"),
        ("adapters/telegram/client.py", "memory"),
        ("gateway/wiring.py", "telegram"),
        ("agent_core/loop.py", "openai"),
        ("gateway/wiring.py", "aiosqlite"),
        ("memory/curated/store.py", "aiosqlite"),
        ("memory/curated/store.py", "sqlite3"),
        ("agent_core/agent.py", "sqlite3"),
        ("memory/curated/store.py", "memory.archive"),
        ("memory/skills/plan.py", "memory.archive.database"),
        ("memory/archive/transfer.py", "memory.curated"),
        ("memory/curated/store.py", "memory.skills.store"),
        ("gateway/commands/search.py", "memory.archive.search"),
    ],
)
def test_the_checker_catches_wrong_arrows(rel: str, imported: str) -> None:
    assert _violations(rel, imported) is not None


@pytest.mark.parametrize(
    ("rel", "imported"),
    [
        ("memory/archive/writer.py", "sqlite3"),
        ("gateway/ledger.py", "sqlite3"),
        ("memory/curated/operations.py", "memory.scan"),
        ("memory/archive/transfer.py", "memory.people"),
        ("memory/curated/store.py", "memory.curated.entries"),
        ("gateway/cli/chat.py", "agent_core.models.openai"),
    ],
)
def test_the_checker_lets_right_arrows_pass(rel: str, imported: str) -> None:
    assert _violations(rel, imported) is None


# -- no import cycles ----------------------------------------------------------------------


def _graph() -> dict[str, set[str]]:
    """Our modules and the modules of ours each one imports (a package is its __init__)."""
    files = {_module_name(rel): path for rel, path in _modules()}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _import_nodes(path):
            graph[name] |= _targets(node, package, files)
    return graph


def _targets(node: ast.Import | ast.ImportFrom, package: str, files: dict[str, Path]) -> set[str]:
    """The modules of ours an import statement names: ``from a.b import c`` is ``a.b.c``
    when that is a module, else ``a.b``."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in files}
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        base = ".".join([*anchor, *([base] if base else [])])
    found = {f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in files}
    if base in files and len(found) < len(node.names):
        found.add(base)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module, or a module importing
    itself (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    found.append(sorted(component))
    return found


def test_the_graph_sees_every_module_and_function_level_imports() -> None:
    graph = _graph()
    assert "memory.archive" in graph and "gateway.cli" in graph
    assert "memory.archive.search" in graph["agent_core.tools.search"] or (
        "memory.archive" in graph["agent_core.tools.search"]
    )
    # gateway/cli/memory.py imports the tool's JSON inside a function
    assert "agent_core.tools" in graph["gateway.cli.memory"]


def test_there_are_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}, "e": {"a"}, "f": set()}
    assert sorted(_cycles(graph)) == [["a", "b", "c"], ["d"]]


# -- subpackages: one paragraph, their exports, one error root --------------------------------

#: Subpackage → the root of its exceptions (None: it raises none of its own).
ERROR_ROOTS: dict[str, str | None] = {
    "memory.archive": "ArchiveError",
    "memory.curated": "MemoryStoreError",
    "memory.documents": "DocumentsError",
    "memory.skills": "SkillError",
    "memory.scan": None,
    "agent_core.tools": "ToolFailure",
    "agent_core.models": "ModelError",
}
DOCUMENTED = (
    "memory",
    "memory.archive",
    "memory.curated",
    "memory.documents",
    "memory.skills",
    "memory.scan",
    "agent_core.tools",
    "gateway.commands",
    "gateway.config",
    "gateway.pairing",
)


def _submodules(package: str) -> list[str]:
    folder = ROOT / package.replace(".", "/")
    modules = sorted(p.stem for p in folder.glob("*.py") if p.name != "__init__.py")
    return [package] + [f"{package}.{stem}" for stem in modules]


@pytest.mark.parametrize("package", DOCUMENTED)
def test_a_subpackage_says_in_one_paragraph_what_it_is_for_and_exports_names(
    package: str,
) -> None:
    module = importlib.import_module(package)
    doc = inspect.getdoc(module) or ""
    assert doc.strip() and "\n\n" not in doc.strip(), f"{package}: one paragraph"
    exported = getattr(module, "__all__", None)
    assert exported, f"{package} has no __all__"
    assert [name for name in exported if not hasattr(module, name)] == []


@pytest.mark.parametrize(("package", "root"), sorted(ERROR_ROOTS.items()))
def test_a_subpackages_exceptions_derive_from_its_root(package: str, root: str | None) -> None:
    top = importlib.import_module(package)
    base = getattr(top, root) if root is not None else None
    assert root is None or root in top.__all__, f"{package} does not export {root}"
    strays = []
    for name in _submodules(package):
        module = importlib.import_module(name)
        for cls_name, cls in vars(module).items():
            if (
                inspect.isclass(cls)
                and issubclass(cls, BaseException)
                and cls.__module__ == name
                and not cls_name.startswith("_")
                and (base is None or not issubclass(cls, base))
            ):
                strays.append(f"{name}.{cls_name}")
    assert strays == []
