"""The import graph: one root, layers that run one way, rooms inside the engine, no cycles.

Read from the source with `ast` (nothing is imported), so an upward import fails here even when it sits inside a
function body that no other test reaches.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGE_DIR: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]

# The layers, lowest first: a module may import its own layer and the ones below it, never one above.
LAYERS = [
    "agentmd.errors",  # the one exception root, which every layer derives from
    "agentmd.vocabulary",
    "agentmd.vault_schema",
    "agentmd.rules",
    "agentmd.engine",
    "agentmd.hooks",
    "agentmd.cli",
]
# Rooms inside the engine, lowest first, by the same rule. The leaves are plain modules at the engine's top.
ENGINE_ROOMS = [
    (
        "leaves",
        {
            "errors",
            "settings",
            "places",
            "jsonwire",
            "fsutil",
            "secret",
            "lease",
            "client",
            "breaker",
            "synctools",
            "memory",
            "hooklog",
            "recall_pause",
            "failpoints",
            "times",
            "request_fields",
        },
    ),
    ("index", {"index"}),
    ("git", {"git"}),
    ("search", {"search"}),
    ("recall", {"recall"}),  # a prompt made a query, its notes gathered and rendered (the prompt hook's work)
    ("write", {"write"}),
    ("curate", {"curate"}),  # beside write: curation edits notes the way captures create them
    ("enrich", {"enrich"}),  # the model-CLI pass over the review queue; it files through curation's path
    ("jobs", {"jobs"}),  # the scheduler, morning note and alerts; the daemon wires them to its actions
    ("web", {"web"}),  # the page at /ui: views and the page's writes, mounted by the daemon
    ("daemon", {"daemon"}),
    ("backends", {"backends"}),
]
# `git` and `index` are peers: neither may import the other.
PEERS = {frozenset({"index", "git"})}


def source_modules() -> dict[str, Path]:
    """Every module of the installed distribution, by dotted name, from the package-dir mapping."""
    out: dict[str, Path] = {}
    for package, folder in PACKAGE_DIR.items():
        root = REPO / folder
        for path in root.rglob("*.py"):
            rel = path.relative_to(root).with_suffix("")
            parts = list(rel.parts)
            if any(p in PACKAGE_DIR.values() for p in parts[:1]) and package == "agentmd":
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join([package, *parts])
            # a folder mapped to its own package (agentmd.engine -> engine/) wins over the root mapping
            if name not in out or package != "agentmd":
                out[name] = path
    return out


MODULES = source_modules()


def imports_of(name: str, path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield node.lineno, module
            for alias in node.names:  # `from agentmd.engine import fsutil` imports a module
                candidate = f"{module}.{alias.name}"
                if candidate in MODULES:
                    yield node.lineno, candidate


def our(module: str) -> str | None:
    """The longest known module name that `module` names (or lies inside), or None for a third-party import."""
    parts = module.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


def edges() -> dict[str, set[tuple[int, str]]]:
    graph: dict[str, set[tuple[int, str]]] = {}
    for name, path in MODULES.items():
        targets = graph.setdefault(name, set())
        for line, module in imports_of(name, path):
            target = our(module)
            if target is not None and target != name:
                targets.add((line, target))
    return graph


GRAPH = edges()


def layer_of(module: str) -> int:
    for rank in range(len(LAYERS) - 1, -1, -1):
        head = LAYERS[rank]
        if module == head or module.startswith(head + "."):
            return rank
    if module in ("agentmd", "agentmd.__main__"):
        return 0 if module == "agentmd" else len(LAYERS) - 1
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS in {__file__}")


def room_of(module: str) -> str | None:
    if not module.startswith("agentmd.engine."):
        return None
    head = module.split(".")[2]
    for room, names in ENGINE_ROOMS:
        if head in names:
            return room
    raise AssertionError(f"{module} sits in no room of the engine: add it to ENGINE_ROOMS in {__file__}")


def test_every_source_file_belongs_to_the_distribution() -> None:
    assert "agentmd.engine.index.catalog" in MODULES and "agentmd.hooks.entry" in MODULES
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    packages = {name for name, path in MODULES.items() if path.name == "__init__.py"}
    assert packages == listed, (
        "pyproject.toml [tool.setuptools] packages must list every package folder: "
        f"missing {sorted(packages - listed)}, stale {sorted(listed - packages)}"
    )


def test_layers_run_one_way() -> None:
    upward = [
        f"{name}:{line} imports {target}"
        for name, targets in GRAPH.items()
        for line, target in sorted(targets)
        if layer_of(target) > layer_of(name)
    ]
    assert not upward, (
        "imports that climb a layer (errors <- vocabulary <- vault_schema <- rules <- engine <- hooks <- cli):\n"
        + ("\n".join(upward))
    )


def test_engine_rooms_run_one_way() -> None:
    order = [room for room, _ in ENGINE_ROOMS]
    wrong = []
    for name, targets in GRAPH.items():
        here = room_of(name)
        if here is None:
            continue
        for line, target in sorted(targets):
            there = room_of(target)
            if there is None or there == here:
                continue
            if frozenset({here, there}) in PEERS or order.index(there) > order.index(here):
                wrong.append(f"{name}:{line} ({here}) imports {target} ({there})")
    assert not wrong, f"imports between engine rooms that run the wrong way ({' <- '.join(order)}):\n" + "\n".join(
        wrong
    )


def test_no_import_cycles() -> None:
    """Tarjan's strongly connected components over the module graph (imports inside functions included)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for _, target in GRAPH.get(node, ()):
            if target.startswith(node + ".") or node.startswith(target + "."):
                continue  # a package and its own submodules: re-exports, not a cycle
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("layer", LAYERS[1:])
def test_layer_has_modules(layer: str) -> None:
    """The check above would pass on an empty graph; make sure it read every layer."""
    assert any(name == layer or name.startswith(layer + ".") for name in MODULES), layer
