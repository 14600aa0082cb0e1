"""The Bash file guard and program files: a shell script run with `bash FILE`, `source FILE` or as `./FILE` is read
and its commands judged as the shell will run them; a script given to an interpreter (`python3 tool.py`) is
refused when its text names the vault, or, not on disk yet, when the line that runs it does. Real files in a
real temporary vault and folder beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentmd.hooks.shell_writes import check_shell_writes


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    home = tmp_path / "home"
    vault = home / "notes vault"
    (vault / "memory").mkdir(parents=True)
    (vault / "memory" / "a.md").write_text("# A\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    return {"home": home, "vault": vault, "work": work}


def decide(command: str, places: dict[str, Path]) -> tuple[bool, str]:
    verdict = check_shell_writes(
        command, cwd=str(places["work"]), vault=places["vault"], env={"HOME": str(places["home"])}
    )
    return verdict.deny, verdict.reason


def script(places: dict[str, Path], name: str, text: str, *, executable: bool = False) -> Path:
    path = places["work"] / name
    path.write_text(text, encoding="utf-8")
    if executable:
        path.chmod(0o755)
    return path


def test_a_shell_script_file_is_judged_by_its_commands(places: dict[str, Path]) -> None:
    v = places["vault"]
    script(places, "clean.sh", f'#!/bin/sh\nset -e\nrm "{v}/memory/a.md"\n', executable=True)
    script(places, "look.sh", f'#!/usr/bin/env bash\ngrep -rn TODO "{v}"\nls "{v}/memory" | wc -l\n', executable=True)
    for run in ("bash clean.sh", "sh ./clean.sh", "./clean.sh", "source clean.sh", ". ./clean.sh"):
        deny, reason = decide(run, places)
        assert deny and "delete" in reason and str(v) in reason, run
    for run in ("bash look.sh", "./look.sh", "source look.sh"):
        assert decide(run, places) == (False, ""), run


def test_a_program_file_that_names_the_vault_is_refused(places: dict[str, Path]) -> None:
    v = places["vault"]
    script(places, "tool.py", f'open("{v}/memory/a.md", "w").write("gone")\n')
    script(places, "home.py", 'import os\nopen(os.path.expanduser("~/notes vault/memory/a.md"), "w")\n')
    script(places, "build.js", "require('fs').writeFileSync('/tmp/out.txt', 'x')\n")
    for run in ("python3 tool.py", "python3 -u tool.py --fast", "python3 home.py", f"cd {places['work']} && ./tool.py"):
        deny, reason = decide(run, places)
        assert deny and "its text names the vault" in reason, run
    assert decide("node build.js", places) == (False, "")  # writes elsewhere: nothing of the vault in it
    assert decide("python3 -c 'print(1)'", places) == (False, "")  # a one-liner, judged as before
    assert decide("perl -ne 'print if /x/' notes.txt", places) == (False, "")


def test_a_program_written_on_the_same_line_is_judged_by_the_line(places: dict[str, Path]) -> None:
    v = places["vault"]
    line = f"cat > /tmp/agentmd-t.py <<'EOF'\nopen('{v}/memory/a.md', 'w')\nEOF\npython3 /tmp/agentmd-t.py"
    Path("/tmp/agentmd-t.py").unlink(missing_ok=True)
    deny, reason = decide(line, places)
    assert deny and "not on disk yet" in reason
    other = "cat > /tmp/agentmd-t.py <<'EOF'\nprint('hello')\nEOF\npython3 /tmp/agentmd-t.py"
    assert decide(other, places) == (False, "")


def test_options_before_a_script_stdin_and_start_up_files_do_not_hide_it(places: dict[str, Path]) -> None:
    """An interpreter's options (with or without values), a script fed on stdin, a shell's start-up file set
    through the environment, and a shell met through busybox: the script is still read."""
    v = places["vault"]
    script(places, "tool.py", f'open("{v}/memory/pwn.md", "w")\n')
    script(places, "x.js", f"require('fs').writeFileSync('{v}/memory/pwn.md', 'x')\n")
    script(places, "s.sh", f'echo x > "{v}/memory/pwn.md"\n')
    for run in (
        "python3 -E tool.py",
        "python3 -W ignore tool.py",
        "python3 -Wignore tool.py",
        "python3 -X dev tool.py",
        "python3 < tool.py",
        "python3 - < tool.py",
        "node -r /dev/null x.js",
        "node --import /dev/null x.js",
        "bash -o errexit s.sh",
        "bash -O extglob s.sh",
        "bash < s.sh",
        "bash -s < s.sh",
        "BASH_ENV=s.sh bash -c true",
        "busybox sh s.sh",
    ):
        deny, reason = decide(run, places)
        assert deny and str(v) in reason, run
    for run in ("python3 -c 'print(1)'", "python3 -m pytest -q", "python3 -Sc 'print(2)'", "node -e 'console.log(1)'"):
        assert decide(run, places) == (False, ""), run  # inline programs, judged as before (nothing of the vault)


def test_a_program_padded_past_a_megabyte_is_still_read(places: dict[str, Path]) -> None:
    v = places["vault"]
    script(places, "big.py", "#" + "x" * (2 << 20) + f'\nopen("{v}/memory/pwn.md", "w")\n')
    deny, reason = decide("python3 big.py", places)
    assert deny and "its text names the vault" in reason
