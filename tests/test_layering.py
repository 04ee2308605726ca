"""Dependencies point one way (ARCHITECTURE.md): walk every import and fail on a wrong arrow."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests import REPO_ROOT

ROOT = REPO_ROOT
PACKAGES = ("adapters", "agent_core", "memory", "gateway")
OURS = set(PACKAGES)


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _modules() -> list[tuple[str, Path]]:
    return [
        (path.relative_to(ROOT).as_posix(), path)
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    ]


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
    if top == "aiosqlite" and package != "memory":
        return f"{rel} imports aiosqlite: only memory/ may"
    return None


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
        ("agent_core/loop.py", "adapters.messages"),
        ("adapters/telegram/client.py", "memory"),
        ("gateway/wiring.py", "telegram"),
        ("agent_core/loop.py", "openai"),
        ("gateway/wiring.py", "aiosqlite"),
    ],
)
def test_the_checker_catches_wrong_arrows(rel: str, imported: str) -> None:
    assert _violations(rel, imported) is not None
