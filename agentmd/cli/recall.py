"""The recall commands: `agentmd hook recall` (the hook through the whole command line), `agentmd recall
QUERY` (what the hook would inject for a prompt, counted as an on-demand recall unless `--preview`) and
`agentmd usage` (notes never injected nor recalled, for review). `add_recall_parsers` registers them."""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from agentmd.cli.base import number, positive
from agentmd.cli.output import json_text, say

# The hook's budgets (engine/recall/render.py TOKEN_BUDGET, MAX_ENTRIES; engine/recall/pipeline.py TIME_BUDGET),
# written out so that building the parser loads no hook module. tests/cli/test_cli_imports.py checks they agree.
TOKEN_BUDGET = 1500
MAX_ENTRIES = 15
TIME_BUDGET = 1.5


def _settings(args: Any) -> Any:
    from agentmd.engine.settings import resolve

    return resolve(vault=args.vault, index=args.index, config=args.config)


def cmd_hook_recall(args: Any, out: TextIO, err: TextIO, stdin: TextIO | None = None) -> int:
    """`agentmd hook recall`: the same hook through the full command line (slower to start than
    `agentmd-hook recall`, which is what the Claude Code settings should run)."""
    from agentmd.engine.recall.pipeline import Options
    from agentmd.hooks.recall.hook import HookLog, run_hook

    options = Options(token_budget=args.token_budget, max_entries=args.max_entries, time_budget=args.time_budget)
    code, _timed_out = run_hook(
        sys.stdin if stdin is None else stdin,
        out,
        lambda: _settings(args),
        options=options,
        log=HookLog(bool(getattr(args, "verbose", False)), err),
    )
    return code


PAUSE_WORDS = ("off", "on")


def cmd_recall(args: Any, out: TextIO, err: TextIO) -> int:
    """`agentmd recall QUERY [--project P] [--preview]`: what the hook would inject for this prompt.
    `agentmd recall off|on [--project P] [--for 2h]`: pause or resume the hook's recall."""
    from agentmd.engine.errors import AgentmdError, UsageError
    from agentmd.engine.recall.pipeline import HookError, Options, recall

    if len(args.query) == 1 and args.query[0].lower() in PAUSE_WORDS:
        return _pause_command(args, out)
    if args.for_span is not None:
        raise UsageError("--for goes with `agentmd recall off` (e.g. `agentmd recall off --for 2h`)")
    settings = _settings(args)
    options = Options(token_budget=args.token_budget, max_entries=args.max_entries)
    prompt = " ".join(args.query)
    try:
        result = recall(settings, prompt, cwd=os.getcwd(), project=args.project, options=options)
    except HookError as exc:
        raise AgentmdError(str(exc)) from None
    from agentmd.engine import recall_pause

    held = recall_pause.applying(recall_pause.in_effect(settings.state_dir), result.project)
    paused_note = f"recall is paused {held.describe()}: the prompt hook injects none of this" if held else None
    counted = 0
    if not args.preview and result.rendered.direct:
        from agentmd.engine.index import usage

        counted = usage.record_quietly(settings.catalog_path, (e.path for e in result.rendered.direct), "recall")
    if args.json:
        out.write(json_text(result.to_dict() | {"counted_recalls": counted, "paused": paused_note}) + "\n")
        return 0
    r = result.rendered
    summary = (
        f"-- {r.tokens} of {options.token_budget} estimated tokens (chars/4); {len(r.direct)} direct + "
        f"{len(r.linked)} linked of at most {options.max_entries} entries; query {result.query!r}; "
        f"project {result.project or '-'} ({result.project_source}); via {result.via}"
    )
    if paused_note:
        summary += f"\n-- {paused_note}"
    if not args.preview:
        say(out, r.text)
        say(out, summary + "\n")
        return 0
    say(out, r.text)
    say(out, "\n" + summary + "\n")
    for e in r.considered:
        origin = f" linked from {e.linked_from}" if e.linked else ""
        tokens = f"{e.tokens:>4} tok" if e.line else "    -   "
        say(out, f"  {tokens}  {e.outcome:<16} {e.path}{origin}\n")
    for note in result.notes:
        say(out, f"  left out: {note}\n")
    say(out, "preview: nothing was counted\n")
    return 0


def _pause_command(args: Any, out: TextIO) -> int:
    """`agentmd recall off [--project P] [--for 2h]` and `agentmd recall on [--project P]`."""
    from agentmd.engine import recall_pause
    from agentmd.engine.errors import UsageError

    word = args.query[0].lower()
    if args.preview:
        raise UsageError(f"--preview shows a recall; `agentmd recall {word}` pauses or resumes it")
    settings = _settings(args)
    if word == "off":
        try:
            span = recall_pause.duration(args.for_span) if args.for_span is not None else None
        except recall_pause.PauseError as exc:
            raise UsageError(str(exc)) from None
        held = recall_pause.pause(settings.state_dir, project=args.project, span=span)
        what = f"recall for project {args.project}" if args.project else "recall"
        text = f"{what} paused {held.describe()}: the prompt hook injects no note, and says so once per session"
        payload: dict[str, object] = {"paused": held.to_dict()}
    else:
        if args.for_span is not None:
            raise UsageError("--for goes with `agentmd recall off`; `agentmd recall on` resumes at once")
        ended = recall_pause.resume(settings.state_dir, project=args.project)
        left = recall_pause.in_effect(settings.state_dir)
        if ended:
            text = "recall resumed" + (f" for project {args.project}" if args.project else "")
        else:
            text = "recall was not paused" + (f" for project {args.project}" if args.project else "")
        still = recall_pause.line(left)
        if still:
            text += f"; still in effect: {still}"
        payload = {"resumed": [p.to_dict() for p in ended], "still_paused": [p.to_dict() for p in left]}
    if args.json:
        out.write(json_text(payload) + "\n")
    else:
        say(out, text + "\n")
    return 0


def cmd_usage(args: Any, out: TextIO, err: TextIO) -> int:
    """`agentmd usage [--unused-days N]`: notes never injected by recall nor recalled, for review."""
    from agentmd.engine.errors import AgentmdError, UsageError
    from agentmd.engine.index import usage
    from agentmd.engine.index.catalog import Catalog
    from agentmd.engine.recall.render import inert
    from agentmd.rules import load_contract

    if args.unused_days < 0:
        raise UsageError("--unused-days must be 0 or more")
    settings = _settings(args)
    if not settings.catalog_path.is_file():
        raise AgentmdError(f"no catalog at {settings.catalog_path}; run `agentmd reindex` first")
    Catalog(settings.catalog_path).close()  # an older catalog gains the usage table here
    contract = load_contract(settings.vault, settings.contract_path).contract
    rows, summary = usage.report(settings.catalog_path, unused_days=args.unused_days, exclude=contract.recall_exempt)
    if args.json:
        payload = summary | {"unused": [n.to_dict() for n in rows]}
        out.write(json_text(payload) + "\n")
        return 0
    since = summary["counting_since"]
    say(
        out,
        f"{summary['listed']} of {summary['notes']} notes never injected or recalled and captured on or before "
        f"{summary['captured_before']} ({summary['used']} used; {summary['injections']} injections, "
        f"{summary['recalls']} recalls counted since {since[:10] if since else 'never'})\n",
    )
    for n in rows:
        say(out, f"  {n.captured[:10]}  {n.path}  {inert(n.title, 80)}\n")
    if since is None or since[:10] > summary["captured_before"]:
        say(
            out,
            "note: counting started "
            + (f"on {since[:10]}" if since else "with no use recorded yet")
            + f", less than {args.unused_days} days ago; a listed note may have been used before that\n",
        )
    say(out, "review only: nothing is retired or changed automatically\n")
    return 0


def _budget_flags(p: Any, *, time_budget: bool) -> None:
    p.add_argument(
        "--token-budget", type=positive, default=TOKEN_BUDGET, help=f"estimated tokens (default {TOKEN_BUDGET})"
    )
    p.add_argument("--max-entries", type=positive, default=MAX_ENTRIES, help=f"bullets at most (default {MAX_ENTRIES})")
    if time_budget:
        p.add_argument(
            "--time-budget", type=number, default=TIME_BUDGET, help=f"seconds before giving up (default {TIME_BUDGET})"
        )


def _hook_subparsers(sub: Any) -> Any:
    """The `agentmd hook` group's sub-command table, creating the group when nobody has yet."""
    import argparse

    parser = sub.choices.get("hook")
    if parser is None:
        parser = sub.add_parser("hook", help="agent hooks (Claude Code): prompt recall, worktree guard")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return parser.add_subparsers(dest="hook_command", metavar="HOOK", parser_class=type(parser))


def add_hook_parser(hook_sub: Any, common: Any) -> None:
    """`agentmd hook recall` in an existing `hook` group."""
    p = hook_sub.add_parser(
        "recall",
        parents=[common],
        help="Claude Code UserPromptSubmit hook: relevant notes as reference, within a token budget",
        description="Reads a UserPromptSubmit payload on stdin and prints the prior learnings block. Always exits "
        "0; on any failure prints nothing (the reason goes to hook.log in the state dir).",
    )
    _budget_flags(p, time_budget=True)
    p.set_defaults(func=cmd_hook_recall)


def add_recall_parsers(sub: Any, common: Any) -> None:
    """Register `agentmd hook recall`, `agentmd recall` and `agentmd usage`."""
    add_hook_parser(_hook_subparsers(sub), common)

    p = sub.add_parser(
        "recall",
        parents=[common],
        help="show what the recall hook would inject for a prompt; `recall off|on` pauses or resumes it",
        description="`agentmd recall QUERY...` shows what the prompt hook would inject for a prompt. "
        "`agentmd recall off [--project P] [--for 2h]` pauses the hook's recall (every session, or the sessions "
        "bound to project P; until `agentmd recall on`, or for the time given); `agentmd recall on [--project P]` "
        "resumes it. For one session only, start it with AGENTMD_RECALL=off in its environment.",
    )
    p.add_argument("query", nargs="+", help="the prompt (or words) to recall for; or `off` / `on`")
    p.add_argument(
        "--project",
        help="the session's project (default: bound from the working directory); with off/on: the "
        "project whose recall to pause or resume",
    )
    p.add_argument("--for", dest="for_span", metavar="SPAN", help="with `off`: end the pause after 30m, 2h, 1d ...")
    p.add_argument("--preview", action="store_true", help="show every candidate with its tokens; count nothing")
    _budget_flags(p, time_budget=False)
    p.set_defaults(func=cmd_recall)

    p = sub.add_parser("usage", parents=[common], help="notes never injected by recall nor recalled (review only)")
    p.add_argument(
        "--unused-days", type=int, default=90, help="list only notes captured at least this many days ago (90)"
    )
    p.set_defaults(func=cmd_usage)
