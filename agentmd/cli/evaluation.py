"""`agentmd eval fixtures`, `agentmd eval beir` and `agentmd eval prompts`: retrieval quality and what the
recall hook would inject, measured read-only (never counted as usage). The harnesses live in
`agentmd.engine.search.eval`."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from agentmd.cli.base import EXIT_OK, number, settings_of, subcommands
from agentmd.cli.output import emit, notices
from agentmd.engine.errors import UsageError

# The default recall cut-offs (engine/search/eval/metrics.py DEFAULT_KS), written out so that building the parser
# loads no search module. tests/cli/test_cli_imports.py checks they agree.
DEFAULT_KS = (5, 15)


def add_eval_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `eval fixtures` and `eval beir` to the top-level subparsers `sub` (with `common` options)."""
    p = sub.add_parser("eval", help="measure retrieval quality (read-only: never counted as usage)")
    esub = subcommands(p, "eval_command", "SUITE")
    f = esub.add_parser(
        "fixtures", parents=[common], help="recall@K, MRR, correct rejection and misses on a JSONL fixture file"
    )
    f.add_argument("file", help="JSONL: one {id, query, expected (path or null), alternates, category} per line")
    f.add_argument("--k", default=",".join(map(str, DEFAULT_KS)), help="cut-offs for recall, e.g. 5,15 (default)")
    f.add_argument(
        "--mode",
        action="append",
        metavar="M",
        help="search mode to measure (repeatable; default: every mode, hybrid when the vault's vectors exist)",
    )
    f.add_argument(
        "--floor",
        type=number,
        metavar="X",
        help="the confidence floor, 0 to 1 (default: the contract's search_floor, as `agentmd search`; 0: the whole "
        "ranking)",
    )
    f.set_defaults(func=cmd_eval_fixtures)
    b = esub.add_parser("beir", parents=[common], help="nDCG@10, recall@100 and MRR@10 on a BEIR collection")
    b.add_argument("dir", help="folder with corpus.jsonl, queries.jsonl and qrels/test.tsv (or qrels.tsv)")
    b.add_argument(
        "--mode",
        action="append",
        metavar="M",
        help="search mode to measure (repeatable; default: every mode, hybrid when the embedding model loads)",
    )
    b.add_argument("--limit-queries", type=int, metavar="N", help="run only the first N judged queries")
    b.add_argument(
        "--qrels", metavar="FILE", help="another judgments file, e.g. a train split (default: the test qrels)"
    )
    b.add_argument(
        "--work",
        metavar="DIR",
        help="keep the collection's vault, index and vectors in DIR (new, empty, or kept by an earlier run), so a "
        "second run only searches",
    )
    b.set_defaults(func=cmd_eval_beir)
    pr = esub.add_parser(
        "prompts", parents=[common], help="how many notes the recall hook would inject for each prompt of a set"
    )
    pr.add_argument("file", help="JSONL: one {id, prompt, expected (path or null), category} per line")
    pr.add_argument("--search-floor", type=number, metavar="X", help="override the contract's search_floor")
    pr.add_argument("--recall-floor", type=number, metavar="X", help="override the contract's recall_floor")
    pr.add_argument(
        "--hybrid",
        action="store_true",
        help="search as the hook does with a daemon up (hybrid, the embedding model loaded here), not lexically "
        "as it does without one",
    )
    pr.set_defaults(func=cmd_eval_prompts)


def cmd_eval_fixtures(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from pathlib import Path

    from agentmd.engine.errors import IndexBusy
    from agentmd.engine.index.reconcile import reconcile
    from agentmd.engine.index.store import Store
    from agentmd.engine.search.eval.fixtures import evaluate_fixtures, parse_ks, render_fixtures
    from agentmd.rules import load_contract

    settings = settings_of(args)
    contract = load_contract(settings.vault, settings.contract_path).contract
    fixture = Path(args.file)
    ks = parse_ks(args.k)
    if args.floor is not None and not 0 <= args.floor <= 1:
        raise UsageError(f"--floor {args.floor} is not a number from 0 to 1 (0 scores the whole ranking)")
    dense, why = None, None
    if not args.mode or "hybrid" in args.mode:
        from agentmd.engine.search.arm import arm_from_disk

        dense, why = arm_from_disk(settings)  # the vectors `agentmd reindex` or the daemon made
    with Store(settings.cache_dir) as store:
        notices(err, store.notices)
        try:
            rec = reconcile(settings.vault, store)
            if rec.refused:
                err.write(f"agentmd: reconcile refused ({rec.refused}); evaluating the index as it is\n")
        except IndexBusy as exc:
            err.write(f"agentmd: {exc}; evaluating the index as it is\n")
        report = evaluate_fixtures(
            fixture, store, contract, modes=args.mode, ks=ks, dense=dense, dense_reason=why, floor=args.floor
        )
    report["vault"] = str(settings.vault)
    emit(out, args, report, render_fixtures(report))
    return EXIT_OK


def cmd_eval_beir(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from pathlib import Path

    from agentmd.cli.output import EmbedBar
    from agentmd.engine.search.eval.beir import DenseSide, render_beir, run_beir

    directory = Path(args.dir)
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a folder; give the folder holding corpus.jsonl")
    dense = None
    if not args.mode or "hybrid" in args.mode:
        from agentmd.engine.index.embedder import EmbedderUnavailable
        from agentmd.engine.search.arm import load_embedder
        from agentmd.engine.settings import resolve

        # only the embedder's settings are read (switch, model file, endpoint): the collection gets a vault and
        # a cache of its own
        settings = resolve(vault=str(directory), config=args.config)
        bar = None if args.json else EmbedBar(err, tty=err.isatty())
        try:
            dense = DenseSide(load_embedder(settings), progress=bar)
        except EmbedderUnavailable as exc:
            dense = DenseSide(None, str(exc))
    report = run_beir(
        directory,
        modes=args.mode,
        limit_queries=args.limit_queries,
        qrels_path=Path(args.qrels) if args.qrels else None,
        dense=dense,
        keep=Path(args.work) if args.work else None,
    )
    emit(out, args, report, render_beir(report))
    return EXIT_OK


def cmd_eval_prompts(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from collections.abc import Mapping
    from pathlib import Path

    from agentmd.engine.errors import IndexBusy
    from agentmd.engine.index.reconcile import reconcile
    from agentmd.engine.index.store import Store
    from agentmd.engine.recall.query import named_stop_words, sanitize_query
    from agentmd.engine.recall.render import Entry, render
    from agentmd.engine.search.eval.prompts import evaluate_prompts, render_prompts
    from agentmd.rules import load_contract

    def inject(gathered: Mapping[str, Any]) -> tuple[list[str], int]:
        direct = [Entry.from_candidate(c, None) for c in gathered.get("direct", [])]
        linked = [Entry.from_candidate(c, None) for c in gathered.get("linked", [])]
        rendered = render(direct, linked)
        return [e.path for e in rendered.entries], rendered.tokens

    for name in ("search_floor", "recall_floor"):
        value = getattr(args, name)
        if value is not None and not 0 <= value <= 1:
            raise UsageError(f"--{name.replace('_', '-')} {value} is not a number from 0 to 1")
    settings = settings_of(args)
    contract = load_contract(settings.vault, settings.contract_path).contract
    dense = None
    if args.hybrid:
        from agentmd.engine.search.arm import arm_from_disk

        dense, why = arm_from_disk(settings)
        if dense is None:
            raise UsageError(f"--hybrid needs the dense arm, which is not available: {why}")
    with Store(settings.cache_dir) as store:
        notices(err, store.notices)
        try:
            rec = reconcile(
                settings.vault,
                store,
                link_convention=contract.link_convention,
                sync_patterns=contract.sync_tool_patterns,
            )
            if rec.refused:
                err.write(f"agentmd: reconcile refused ({rec.refused}); evaluating the index as it is\n")
        except IndexBusy as exc:
            err.write(f"agentmd: {exc}; evaluating the index as it is\n")

        def query_of(prompt: str) -> str:  # as the daemon and the hook's own process make it
            return sanitize_query(prompt, keep=named_stop_words(store.index, prompt))

        report = evaluate_prompts(
            Path(args.file),
            store,
            contract,
            query_of=query_of,
            inject=inject,
            search_floor=args.search_floor,
            recall_floor=args.recall_floor,
            dense=dense,
        )
    report["vault"] = str(settings.vault)
    emit(out, args, report, render_prompts(report))
    return EXIT_OK
