"""One exception root: every exception class agentmd defines derives from `AgentmdError` (agentmd/errors.py).

Every module of the distribution is imported (each package of pyproject.toml walked with pkgutil) and every
exception class defined in it is collected; none may stand outside the root. Nothing is allowed to: a class
that callers also catch as a built-in keeps that base beside the root instead. The command line tells each
one by the root alone.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

import agentmd.errors as root_module
from agentmd.cli.failure import explain
from agentmd.engine import errors as engine_errors
from agentmd.errors import AgentmdError

REPO = Path(__file__).resolve().parent.parent
PACKAGES: list[str] = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
    "packages"
]
# `python -m agentmd` runs the command line when imported; it is read with `ast` instead (it defines no class).
RUN_ON_IMPORT = {"agentmd.__main__"}


def modules() -> list[ModuleType]:
    """Every module of the distribution, imported. Subpackages live in folders of their own (agentmd.engine is
    engine/), so each package listed in pyproject.toml is walked rather than agentmd's folder alone."""
    found: list[ModuleType] = []
    for name in PACKAGES:
        package = importlib.import_module(name)
        found.append(package)
        for info in pkgutil.iter_modules(package.__path__, name + "."):
            if not info.ispkg and info.name not in RUN_ON_IMPORT:
                found.append(importlib.import_module(info.name))
    return found


def defined_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined (not merely imported) in a module of the distribution, by dotted name."""
    out: dict[str, type[BaseException]] = {}
    for module in modules():
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                out[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return out


def test_the_walk_reads_every_layer() -> None:
    names = {m.__name__ for m in modules()}
    for expected in (
        "agentmd.errors",
        "agentmd.cli.curate",
        "agentmd.vault_schema.errors",
        "agentmd.rules.contract.loading",
        "agentmd.engine.git.runner",
        "agentmd.engine.recall.pipeline",
    ):
        assert expected in names, expected
    for name in RUN_ON_IMPORT:
        path = REPO / (name.replace(".", "/") + ".py")
        assert not any(isinstance(n, ast.ClassDef) for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def test_every_exception_derives_from_the_one_root() -> None:
    found = defined_exceptions()
    assert len(found) > 40, sorted(found)  # the walk saw the whole tree, not a part of it
    outside = sorted(name for name, cls in found.items() if not issubclass(cls, AgentmdError))
    assert not outside, (
        "exception classes outside the root; derive them from AgentmdError (agentmd/errors.py), keeping a "
        f"built-in base beside it if callers catch one, and add them to the tree there: {outside}"
    )


def test_every_exception_is_drawn_in_the_tree() -> None:
    """The docstring of agentmd/errors.py draws the tree; a new class is added to the drawing."""
    drawing = set(re.findall(r"\w+", root_module.__doc__ or ""))
    missing = sorted(name for name, cls in defined_exceptions().items() if cls.__name__ not in drawing)
    assert not missing, f"add these to the tree in agentmd/errors.py: {missing}"


def test_the_engine_re_exports_the_root() -> None:
    assert engine_errors.AgentmdError is AgentmdError
    assert issubclass(engine_errors.UsageError, AgentmdError)


@pytest.mark.parametrize(
    ("module", "name", "builtin"),
    [
        ("agentmd.engine.fsutil", "NotInVault", OSError),
        ("agentmd.engine.recall_pause", "PauseError", ValueError),
        ("agentmd.engine.enrich.compose", "BodyChanged", RuntimeError),
        ("agentmd.engine.jobs.manifest", "ManifestError", ValueError),
        ("agentmd.rules.contract.synctool", "PatternError", ValueError),
    ],
)
def test_a_builtin_base_is_kept_for_callers_that_catch_it(module: str, name: str, builtin: type) -> None:
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, AgentmdError) and issubclass(cls, builtin)
    with pytest.raises(builtin):
        raise cls("caught as the built-in")


def test_the_command_line_tells_each_error_by_the_root() -> None:
    from agentmd.engine.errors import UsageError
    from agentmd.engine.fsutil import FileTooLarge
    from agentmd.rules.errors import RulesError
    from agentmd.vault_schema.errors import YamlRefused

    assert explain(RulesError("the door refused; pick another folder")) == ("the door refused; pick another folder", 1)
    assert explain(YamlRefused("bad YAML at line 2; fix it")) == ("bad YAML at line 2; fix it", 1)
    assert explain(UsageError("give --title")) == ("give --title", 2)
    # an OSError of agentmd's own is told as any OSError, naming what to check
    assert explain(FileTooLarge("note.md is over 64 MB")) == (
        "note.md is over 64 MB; check that the path exists and is readable and writable",
        1,
    )
    message, code = explain(LookupError("not ours"))
    assert code == 1 and message is not None and message.startswith("internal error (LookupError: not ours)")
