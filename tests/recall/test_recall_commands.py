"""The recall commands: `agentmd recall` (preview and counted), `agentmd hook recall`, and the shared
`hook` parser group."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

from agentmd.cli.recall import _hook_subparsers, add_recall_parsers
from agentmd.engine.recall.render import HEADER, estimate_tokens
from agentmd.engine.settings import Settings
from recall.helpers import assert_block_shape, payload, usage_rows


def parser() -> argparse.ArgumentParser:
    from agentmd.cli.base import common_options as _common

    p = argparse.ArgumentParser(prog="agentmd")
    sub = p.add_subparsers(dest="command")
    add_recall_parsers(sub, _common())
    return p


def run_cmd(*argv: str, stdin: str | None = None) -> tuple[int, str]:
    args = parser().parse_args(list(argv))
    out, err = io.StringIO(), io.StringIO()
    extra = {} if stdin is None else {"stdin": io.StringIO(stdin)}
    return args.func(args, out, err, **extra), out.getvalue()


def test_recall_preview_shows_tokens_and_counts_nothing(indexed: Settings) -> None:
    code, out = run_cmd("recall", "postgres", "journal", "vacuum", "--project", "ledgerline", "--preview")
    assert code == 0
    assert out.startswith(HEADER)
    assert "estimated tokens (chars/4)" in out and "preview: nothing was counted" in out
    assert " tok  in " in out
    assert usage_rows(indexed) == {}


def test_recall_counts_direct_hits_as_recalls(indexed: Settings) -> None:
    code, out = run_cmd("recall", "postgres journal vacuum", "--project", "ledgerline", "--json")
    data = json.loads(out)
    assert code == 0 and data["project"] == "ledgerline" and data["project_source"] == "given"
    assert data["text"].startswith(HEADER) and data["tokens"] == estimate_tokens(data["text"])
    counts = usage_rows(indexed)
    assert data["counted_recalls"] == data["direct"] == len(counts)
    assert all(v == (0, 1) for v in counts.values())


def test_hook_recall_command(indexed: Settings, workdir: Path) -> None:
    code, out = run_cmd("hook", "recall", stdin=payload("user_prompt_submit.json", workdir))
    assert code == 0
    assert_block_shape(out)


def test_parsers_share_the_hook_group_with_other_hooks() -> None:
    from agentmd.cli.base import common_options as _common

    for order in ("before", "after"):
        p = argparse.ArgumentParser(prog="agentmd")
        sub = p.add_subparsers(dest="command")
        common = _common()
        if order == "after":
            add_recall_parsers(sub, common)
        hook = sub.choices.get("hook") or sub.add_parser("hook")
        hook_sub = _hook_subparsers(sub)
        hook_sub.add_parser("worktree-guard")
        if order == "before":
            add_recall_parsers(sub, common)
        assert set(_hook_subparsers(sub).choices) == {"recall", "worktree-guard"}
        assert sub.choices["hook"] is hook
