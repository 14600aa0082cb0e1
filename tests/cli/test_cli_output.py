"""What the command line prints for a person never carries terminal control sequences from notes; --json stays
exact JSON."""

from __future__ import annotations

import io
import json
from pathlib import Path

from conftest import Vault

from agentmd.cli.output import json_text, one_line, say, terminal_safe

# Screen clear + cursor home, an OSC 52 clipboard write, an 8-bit CSI, a bare CR that overwrites the line, a
# backspace run, and a bidi override.
HOSTILE = (
    "\x1b[2J\x1b[H",
    "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07",
    "\x9b31m",
    "innocent\rFORGED LINE",
    "abc\x08\x08\x08xyz",
    "\u202eexe.txt",
    "\x9d0;title\x9c",
)


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F or c == "\u202e"]


def test_terminal_safe_shows_every_control_visibly() -> None:
    for value in HOSTILE:
        shown = terminal_safe(value)
        assert _raw_controls(shown) == [], repr(shown)
    assert terminal_safe("\x1b[2J") == "\\x1b[2J"
    assert terminal_safe("a\r\nb\tc\n") == "a\nb\tc\n"  # Windows line breaks and tabs are text, not tricks
    assert terminal_safe("a\rb") == "a\\x0db"
    assert one_line("title\nforged") == "title\\nforged"
    assert terminal_safe("naïve café 日本語 ✓") == "naïve café 日本語 ✓"


def test_say_writes_through_the_sanitiser() -> None:
    out = io.StringIO()
    say(out, "x\x1b]52;c;AAAA\x07y\n")
    assert out.getvalue() == "x\\x1b]52;c;AAAA\\x07y\n"


def test_json_output_escapes_controls_and_stays_exact() -> None:
    payload = {"title": "".join(HOSTILE), "n": 1}
    text = json_text(payload)
    assert _raw_controls(text) == []
    assert json.loads(text) == payload


def test_search_prints_hostile_titles_and_bodies_inert(cli, vault: Vault, tmp_path: Path) -> None:
    body = "".join(HOSTILE) + " zanzibar marker\n"
    vault.note("notes/evil.md", f"---\ntitle: \"evil \\e[2J \\u009b title\"\n---\n{body}")
    args = ("--vault", str(vault.root), "--index", str(tmp_path / "i"))
    assert cli("reindex", *args).code == 0
    r = cli("search", *args, "zanzibar")
    assert r.code == 0, r.err
    assert "notes/evil.md" in r.out
    assert _raw_controls(r.out) == [], repr(r.out)
    assert not any(line.startswith("FORGED") for line in r.out.splitlines())
    j = cli("search", *args, "--json", "zanzibar")
    assert _raw_controls(j.out) == []
    snippet = j.json()["results"][0]["snippet"]
    assert "\x1b" in snippet or "zanzibar" in snippet  # the JSON keeps the stored text exactly


def test_error_lines_are_sanitised(cli, tmp_path: Path) -> None:
    r = cli("search", "--vault", str(tmp_path / "no\x1b[2Jsuch"), "--index", str(tmp_path / "i"), "x")
    assert r.code != 0
    assert _raw_controls(r.err) == [], repr(r.err)
