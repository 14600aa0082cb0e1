"""JSON through the C codec alone (engine/jsonwire.py): the same text and values as the `json` package, and the
same refusals, without importing it."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest
from conftest import REPO

from agentmd.engine import jsonwire


def random_value(rng: random.Random, depth: int = 0) -> object:
    kinds = ["str", "int", "float", "bool", "none"] + (["list", "dict"] if depth < 4 else [])
    kind = rng.choice(kinds)
    if kind == "str":
        alphabet = 'ab é中\n\t"\\/\u2028\U0001f600\x00\x1f'
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
    if kind == "int":
        return rng.choice([0, -1, 7, 2**70, -(2**40)])
    if kind == "float":
        return rng.choice([0.5, -0.0, 1e-300, 1e300, 3.141592653589793, float("inf"), float("-inf")])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    if kind == "list":
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return {str(random_value(rng, 4)): random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def test_text_and_values_match_the_json_package() -> None:
    rng = random.Random(5)
    for _ in range(500):
        value = random_value(rng)
        text = jsonwire.dumps(value)
        assert text == json.dumps(value, separators=(",", ":"))
        assert repr(jsonwire.loads(text)) == repr(json.loads(text))
        spaced = json.dumps(value, indent=2, ensure_ascii=False)
        assert repr(jsonwire.loads(f" \n{spaced}\t")) == repr(json.loads(spaced))
        assert repr(jsonwire.loads(spaced.encode("utf-8"))) == repr(json.loads(spaced))


@pytest.mark.parametrize("text", ["", "  ", "{", "[1,]", "{} x", "nul", '"\x01"', '{"a" 1}', "\ud800", b"\xff{}"])
def test_what_the_json_package_refuses_is_refused(text: str | bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        jsonwire.loads(text)


def test_a_value_json_cannot_hold_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        jsonwire.dumps({"a": {1, 2}})


def test_it_loads_neither_json_nor_re() -> None:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from agentmd.engine import jsonwire; "
        "jsonwire.loads(jsonwire.dumps({'a': [1, 2.5, None, 'é']})); print('json' in sys.modules, 're' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-I", "-c", code, str(REPO)], capture_output=True, text=True, cwd="/")
    assert (proc.returncode, proc.stdout.split()) == (0, ["False", "False"]), proc.stderr


def test_text_cut_short_is_a_value_error_in_a_process_without_json() -> None:
    """A prompt cut at the hook's size cap, or a half-synced file: the C scanner's error path reaches for
    `json.decoder`, which such a process never loaded, and would end in a SystemError."""
    script = """
import sys
sys.path.insert(0, sys.argv[1])
from agentmd.engine import jsonwire
for text in ('{"a":1,', '{"a": "x', '[1,2', '{"a" 1}'):
    try:
        jsonwire.loads(text)
    except ValueError as exc:
        print(type(exc).__name__)
"""
    proc = subprocess.run([sys.executable, "-I", "-c", script, str(REPO)], capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr
    assert set(proc.stdout.split()) <= {"ValueError", "JSONDecodeError"} and len(proc.stdout.split()) == 4
