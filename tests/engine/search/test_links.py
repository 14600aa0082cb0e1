"""Links: extraction from real Markdown shapes, resolution, the catalog's graph, and `agentmd links`."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from agentmd.cli.links import add_links_parser, cmd_links
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search.graph import (
    Graph,
    dangling,
    entity_pages,
    links_of,
    orphans,
    resolve,
)
from agentmd.vault_schema import Link, extract_links, parse_note
from tests.conftest import Vault, corpus


def one(text: str, **kw: bool) -> Link:
    links = extract_links(text, **kw)
    assert len(links) == 1, links
    return links[0]


# --- extraction ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "target", "heading", "block", "alias", "embed", "kind", "attachment"),
    [
        ("[[note]]", "note", None, None, None, False, "wiki", False),
        ("[[note|Shown]]", "note", None, None, "Shown", False, "wiki", False),
        ("[[note#Some Heading|alias]]", "note", "Some Heading", None, "alias", False, "wiki", False),
        ("[[note#H1#H2]]", "note", "H1#H2", None, None, False, "wiki", False),
        ("[[note#^block-id]]", "note", None, "block-id", None, False, "wiki", False),
        ("[[#Due Date]]", "", "Due Date", None, None, False, "wiki", False),
        ("![[embed]]", "embed", None, None, None, True, "wiki", False),
        ("![[Recurring Tasks#Limitations]]", "Recurring Tasks", "Limitations", None, None, True, "wiki", False),
        ("![[shot.png]]", "shot.png", None, None, None, True, "wiki", True),
        ("[[report.pdf]]", "report.pdf", None, None, None, False, "wiki", True),
        ("[[dendron.topic.lookup]]", "dendron.topic.lookup", None, None, None, False, "wiki", False),
        ("[[folder/sub/note.md]]", "folder/sub/note.md", None, None, None, False, "wiki", False),
        ("| [[Sorting\\|Sort]] |", "Sorting", None, None, "Sort", False, "wiki", False),  # escaped pipe in a table
        ("[text](path/to/note.md)", "path/to/note.md", None, None, "text", False, "markdown", False),
        ("[t](note.md#Heading)", "note.md", "Heading", None, "t", False, "markdown", False),
        ("[t](note.md#^blk)", "note.md", None, "blk", "t", False, "markdown", False),
        ("[t](<path with spaces.md>)", "path with spaces.md", None, None, "t", False, "markdown", False),
        ("[t](Test%20Data/a%20b.md)", "Test Data/a b.md", None, None, "t", False, "markdown", False),
        ('[t](note.md "a title")', "note.md", None, None, "t", False, "markdown", False),
        ("[t](../up/note.md)", "../up/note.md", None, None, "t", False, "markdown", False),
        ("![alt](../images/show-tree.png)", "../images/show-tree.png", None, None, "alt", True, "markdown", True),
        ("[see](#local-heading)", "", "local-heading", None, "see", False, "markdown", False),
        ("[ref]: other.md", "other.md", None, None, None, False, "markdown", False),
    ],
)
def test_link_shapes(
    text: str,
    target: str,
    heading: str | None,
    block: str | None,
    alias: str | None,
    embed: bool,
    kind: str,
    attachment: bool,
) -> None:
    link = one(text)
    assert (link.target, link.heading, link.block, link.alias, link.embed, link.kind, link.attachment) == (
        target,
        heading,
        block,
        alias,
        embed,
        kind,
        attachment,
    )
    assert link.line == 1


@pytest.mark.parametrize(
    "text",
    [
        "[site](https://example.com/page.md)",
        "[mail](mailto:someone@example.com)",
        "[app](obsidian://show-plugin?id=x)",
        "[cmd](command:dendron.initWS)",
        "[no extension](some-page)",
        "[html](page.html#x)",
        "[empty]()",
        "[[]]",
        "![[]]",
        "`[[in inline code]]` and `` [x](y.md) ``",
        "```\n[[in a fence]]\n[x](y.md)\n```",
        "~~~md\n[[tilde fence]]\n~~~",
    ],
)
def test_not_note_links(text: str) -> None:
    assert extract_links(text) == []


def test_line_numbers_count_fences_and_spans() -> None:
    text = "first [[a]]\n```\n[[skipped]]\n```\nspan `x\ny` then [[b]]\n\n[c](c.md) and ![[d]]\n"
    got = [(link.target, link.line) for link in extract_links(text)]
    assert got == [("a", 1), ("b", 6), ("c.md", 8), ("d", 8)]


def test_wikilink_read_before_code_span() -> None:
    # Obsidian reads the link first: the note is named with backticks (obsidian-tasks has one).
    link = one("- [[Overview of dependencies and `package.json`]]")
    assert link.target == "Overview of dependencies and `package.json`"


def test_note_links_carry_file_lines_and_frontmatter_links() -> None:
    data = b'---\ntitle: T\nrelated: "[[Other Note]]"\n---\n\nBody with [[Target#Part|shown]].\n'
    note = parse_note("n.md", data, 0)
    assert [(k.target, k.line) for k in note.links] == [("Other Note", 3), ("Target", 6)]


# --- Dendron ---------------------------------------------------------------------------------------------------


def test_dendron_convention_reads_the_target_after_the_pipe() -> None:
    text = "[[Preview|dendron.topic.preview]] [[Roles|dendron://dendron.dendron-site/community.discord.roles#x]]"
    obsidian = extract_links(text)
    assert [(k.target, k.alias) for k in obsidian] == [
        ("Preview", "dendron.topic.preview"),
        ("Roles", "dendron://dendron.dendron-site/community.discord.roles#x"),
    ]
    dendron = extract_links(text, dendron_reverse=True)
    assert [(k.target, k.alias, k.heading) for k in dendron] == [
        ("dendron.topic.preview", "Preview", None),
        ("community.discord.roles", "Roles", "x"),
    ]
    ref = one("![[community.events.greenhouse#summary,1:#*]]", dendron_reverse=True)
    assert (ref.target, ref.heading, ref.embed) == ("community.events.greenhouse", "summary", True)


def test_dendron_site_real_notes_resolve_only_with_the_dendron_convention() -> None:
    root = corpus("dendron-site")
    paths = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    rel = "vault/dendron.topic.preview-legacy.md"
    for convention, expected in (("obsidian", None), ("dendron", "vault/dendron.topic.preview.md")):
        note = parse_note(rel, (root / rel).read_bytes(), 0, link_convention=convention)
        link = next(k for k in note.links if k.line == 11)
        assert resolve(link.target, rel, paths) == expected
    rel = "vault/changelog.release.2021-10-19.md"
    note = parse_note(rel, (root / rel).read_bytes(), 0, link_convention="dendron")
    here = [k for k in note.links if k.alias == "here" and k.target == "community.discord.roles"]
    assert here and resolve(here[0].target, rel, paths) == "vault/community.discord.roles.md"


# --- resolution ------------------------------------------------------------------------------------------------

PATHS = [
    "a/note.md",
    "a/b/note.md",
    "c/note.md",
    "c/d/Deep.md",
    "root.md",
    "x/y/shared.md",
    "x/z/shared.md",
    "q/shared.md",
    "Mixed Case/File Name.md",
    "dendron.topic.lookup.md",
]


@pytest.mark.parametrize(
    ("target", "source", "expected"),
    [
        ("note", "a/b/other.md", "a/b/note.md"),  # same folder first
        ("note", "a/other.md", "a/note.md"),
        ("note", "c/d/other.md", "c/note.md"),  # one folder up beats two away
        ("b/note", "c/other.md", "a/b/note.md"),  # the longer matching suffix wins over proximity
        ("a/note", "c/other.md", "a/note.md"),
        ("zzz/note", "c/other.md", "c/note.md"),  # folders match nothing: still the name, nearest
        ("note.md", "a/b/x.md", "a/b/note.md"),  # .md optional
        ("NOTE", "a/other.md", "a/note.md"),  # case-insensitive
        ("deep", "root.md", "c/d/Deep.md"),
        ("file name", "root.md", "Mixed Case/File Name.md"),
        ("../note.md", "a/b/x.md", "a/note.md"),  # relative Markdown link, exact
        ("./note.md", "c/x.md", "c/note.md"),
        ("/a/note.md", "c/x.md", "a/note.md"),  # vault path
        ("shared", "x/y/a.md", "x/y/shared.md"),
        ("shared", "x/w/a.md", "x/y/shared.md"),  # tie at distance 2: lexicographic
        ("shared", "q/r/a.md", "q/shared.md"),
        ("shared", "root.md", "q/shared.md"),  # q/ is one step, x/y/ two
        ("dendron.topic.lookup", "x.md", "dendron.topic.lookup.md"),
        ("missing", "a/x.md", None),
        ("", "a/x.md", "a/x.md"),  # [[#heading]]: the note itself
    ],
)
def test_resolve(target: str, source: str, expected: str | None) -> None:
    assert resolve(target, source, PATHS) == expected


def test_resolve_matches_unicode_in_either_normal_form() -> None:
    import unicodedata

    decomposed = unicodedata.normalize("NFD", "notes/Café Crème.md")  # as macOS may store it
    assert resolve("café crème", "x.md", [decomposed]) == decomposed
    assert resolve(unicodedata.normalize("NFD", "notes/Café Crème"), "x.md", ["notes/Café Crème.md"]) is not None


def test_resolve_is_independent_of_path_order() -> None:
    for paths in (PATHS, list(reversed(PATHS))):
        assert resolve("shared", "x/w/a.md", paths) == "x/y/shared.md"


# --- the graph over a catalog ------------------------------------------------------------------------------------


def test_graph_out_back_dangling_orphans_and_late_targets(vault: Vault, cache_dir: Path) -> None:
    vault.write("hub.md", "# Hub\n[[spoke]] and [[missing note]] and ![[pic.png]] and [[#Hub]]\n")
    vault.write("area/spoke.md", "back to [[hub|the hub]]\n")
    vault.write("lonely.md", "no links at all\n")
    vault.write("self.md", "only [[#a heading]] here\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        result = links_of(store.catalog, "hub.md")
        assert [(e["target"], e["resolved"]) for e in result["out"]] == [
            ("spoke", "area/spoke.md"),
            ("missing note", None),
            ("", "hub.md"),
        ]
        assert [e["target"] for e in result["dangling"]] == ["missing note"]
        assert [e["target"] for e in result["attachments"]] == ["pic.png"]
        assert [(e["path"], e["line"], e["alias"]) for e in result["back"]] == [("area/spoke.md", 1, "the hub")]
        assert [(d["path"], d["target"]) for d in dangling(store.catalog)] == [("hub.md", "missing note")]
        assert orphans(store.catalog) == ["lonely.md", "self.md"]

        # The target appears: the dangling link resolves without re-reading hub.md.
        vault.write("notes/Missing Note.md", "now here\n")
        report = reconcile(vault.root, store)
        assert report.added == 1 and report.updated == 0
        assert dangling(store.catalog) == []
        back = links_of(store.catalog, "notes/Missing Note.md")["back"]
        assert [(b["path"], b["line"]) for b in back] == [("hub.md", 2)]

        # A deleted note's links go with it, and its backlinks become dangling.
        vault.remove("area/spoke.md")
        reconcile(vault.root, store)
        assert store.catalog.links_from("area/spoke.md") == []
        assert [d["target"] for d in dangling(store.catalog)] == ["spoke"]


def test_a_graph_built_again_sees_notes_another_handle_renamed_or_added(vault: Vault, cache_dir: Path) -> None:
    """Graphs share one copy of the note paths until the catalog's notes change, whoever changes them: a
    rename, an addition, and a deletion through a second handle on the same catalog (another process) are
    seen at once."""
    vault.write("hub.md", "[[spoke]] and [[later]]\n")
    vault.write("spoke.md", "a spoke\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        first = Graph(store.catalog)
        assert first.resolve("spoke", "hub.md") == "spoke.md" and first.resolve("later", "hub.md") is None
        assert Graph(store.catalog).paths is first.paths  # nothing changed: the same copy
        (vault.root / "spoke.md").rename(vault.root / "wheel.md")
        vault.write("later.md", "now here\n")
        reconcile(vault.root, store)
        again = Graph(store.catalog)
        assert again.resolve("spoke", "hub.md") is None
        assert again.resolve("later", "hub.md") == "later.md"
        assert list(again.paths) == ["hub.md", "later.md", "wheel.md"]
        other = Catalog(store.catalog.path)  # a second handle, as another process holds
        try:
            other.apply([], ["later.md"], [])
        finally:
            other.close()
        assert Graph(store.catalog).resolve("later", "hub.md") is None


def test_entity_page_lookup(vault: Vault, cache_dir: Path) -> None:
    vault.note("repos/crickets.md", "The crickets repository.\n", entity="repo:AlexHerrero/Crickets")
    vault.note("repos/issue.md", "An issue page.\n", entity="https://github.com/alexherrero/crickets/issues/12")
    vault.note("a.md", "Twin one.\n", entity="repo:o/twin")
    vault.note("b.md", "Twin two.\n", entity="repo:o/twin")
    vault.note("mention.md", "See alexherrero/crickets#12 for details.\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        assert store.catalog.get("repos/crickets.md").entity_page == "repo:alexherrero/crickets"  # type: ignore[union-attr]
        pages = entity_pages(
            store.catalog, ["repo:alexherrero/crickets", "issue:alexherrero/crickets#12", "repo:o/twin"]
        )
        assert pages == {
            "repo:alexherrero/crickets": "repos/crickets.md",
            "issue:alexherrero/crickets#12": "repos/issue.md",
        }  # a URI two pages share names neither
        assert store.catalog.notes_mentioning("issue:alexherrero/crickets#12") == ["mention.md", "repos/issue.md"]
        assert [e.uri for e in store.catalog.entities_of("mention.md")] == [
            "repo:alexherrero/crickets",
            "issue:alexherrero/crickets#12",
        ]


# --- a real vault: obsidian-tasks ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tasks_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = corpus("obsidian-tasks")
    store = Store(tmp_path_factory.mktemp("tasks-cache"))
    reconcile(root, store)
    yield store  # type: ignore[misc]
    store.close()


def out_link(store: Store, path: str, line: int, target: str) -> dict:
    entries = [e for e in links_of(store.catalog, path)["out"] if e["line"] == line and e["target"] == target]
    assert len(entries) == 1, links_of(store.catalog, path)["out"]
    return entries[0]


@pytest.mark.parametrize(
    ("source", "line", "target", "expected"),
    [
        # Three vaults in one tree share file names: the nearest one wins.
        ("contributing/Welcome.md", 38, "Useful Links", "contributing/Useful Links.md"),
        ("docs/What is New/Changelog.md", 126, "Useful Links", "docs/Support and Help/Useful Links.md"),
        ("docs/Queries/Sorting.md", 67, "Custom Sorting", "docs/Scripting/Custom Sorting.md"),
        ("docs/Other Plugins/Dataview.md", 14, "Dataview Format", "docs/Reference/Task Formats/Dataview Format.md"),
        # Markdown links, %20-encoded and written from the vault root of Tasks-Demo.
        (
            "Tasks-Demo/Test Data/link_in_task_markdown_link.md",
            13,
            "Test Data/link_in_task_markdown_link.md",
            "Tasks-Demo/Test Data/link_in_task_markdown_link.md",
        ),
        (
            "Tasks-Demo/Test Data/all_link_types.md",
            19,
            "markdownLink.md",
            "Tasks-Demo/Test Attachments/markdownLink.md",
        ),
        (
            "contributing/Dependencies/About Dependencies.md",
            20,
            "Overview of dependencies and `package.json`",
            "contributing/Dependencies/Overview of dependencies and `package.json`.md",
        ),
    ],
)
def test_real_links_resolve(tasks_store: Store, source: str, line: int, target: str, expected: str) -> None:
    assert out_link(tasks_store, source, line, target)["resolved"] == expected


def test_real_heading_alias_links_are_parsed(tasks_store: Store) -> None:
    entry = out_link(tasks_store, "docs/Editing/Auto-Suggest.md", 89, "Dataview Format")
    assert (entry["heading"], entry["alias"]) == ("Bracketed inline fields", "Dataview Task Format")
    assert entry["resolved"] == "docs/Reference/Task Formats/Dataview Format.md"
    shapes = [
        link
        for _src, link in tasks_store.catalog.all_links()
        if link.kind == "wiki" and link.target and link.heading and link.alias
    ]
    assert len(shapes) > 200  # the docs use [[Note#Heading|alias]] a lot


def test_real_vault_graph(tasks_store: Store) -> None:
    summary = Graph(tasks_store.catalog).summary()
    assert summary["notes"] == 410 and summary["links"] > 1300
    assert summary["dangling"] <= 3  # the docs keep one deliberately broken link
    targets = {d["target"] for d in dangling(tasks_store.catalog)}
    assert "broken link - do not fix me" in targets
    back = links_of(tasks_store.catalog, "docs/Scripting/Custom Sorting.md")["back"]
    assert {b["path"] for b in back} >= {"docs/Queries/Sorting.md", "docs/Queries/Line Continuations.md"}
    assert all(b["path"].startswith("docs/") for b in back)  # Tasks-Demo has its own Custom Sorting


# --- the command -----------------------------------------------------------------------------------------------


def run_links(vault: Path, cache: Path, *argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="agentmd")
    common = argparse.ArgumentParser(add_help=False)
    for flag in ("--vault", "--index", "--config"):
        common.add_argument(flag)
    common.add_argument("--json", action="store_true")
    add_links_parser(parser.add_subparsers(dest="command"), common)
    args = parser.parse_args(["links", "--vault", str(vault), "--index", str(cache), *argv])
    out = io.StringIO()
    code = cmd_links(args, out, io.StringIO())
    return code, out.getvalue()


def test_cli_links(vault: Vault, cache_dir: Path) -> None:
    vault.write("hub.md", "[[spoke|Spoke]] and [[gone]]\n")
    vault.write("area/spoke.md", "back to [[hub]]\n")
    vault.write("alone.md", "nothing\n")
    code, text = run_links(vault.root, cache_dir, "hub.md")  # an empty catalog is built first
    assert code == 0
    assert text.splitlines() == [
        "hub.md",
        "links out (2):",
        "    1  [[spoke|Spoke]]  ->  area/spoke.md",
        "    1  [[gone]]  ->  (dangling)",
        "backlinks (1):",
        "  area/spoke.md:1  [[hub]]",
        "dangling (1):",
        "    1  [[gone]]",
    ]
    code, text = run_links(vault.root, cache_dir, "spoke", "--json")  # a name, as a link would write it
    payload = json.loads(text)
    assert payload["path"] == "area/spoke.md" and [b["path"] for b in payload["back"]] == ["hub.md"]
    code, text = run_links(vault.root, cache_dir, "--dangling", "--json")
    assert json.loads(text)["count"] == 1 and json.loads(text)["dangling"][0]["target"] == "gone"
    code, text = run_links(vault.root, cache_dir, "--dangling")
    assert text.splitlines() == ["1 dangling links to 1 missing notes", "  gone", "      <- hub.md:1  [[gone]]"]
    code, text = run_links(vault.root, cache_dir, "--orphans")
    assert text.splitlines() == ["1 notes with no link to or from another note", "  alone.md"]
    code, text = run_links(vault.root, cache_dir, "--orphans", "--json")
    assert json.loads(text) == {"orphans": ["alone.md"], "count": 1}


def test_cli_links_names_and_local_headings(vault: Vault, cache_dir: Path) -> None:
    from agentmd.engine.errors import UsageError

    vault.write("docs/Sorting.md", "[[#Top]] [[#Other]] and [[Custom Sorting]]\n")
    vault.write("docs/Custom Sorting.md", "x\n")
    vault.write("demo/Custom Sorting.md", "y\n")
    _code, text = run_links(vault.root, cache_dir, "docs/Sorting.md")
    assert text.splitlines()[:4] == [
        "docs/Sorting.md",
        "links out (3):",
        "    1  [[Custom Sorting]]  ->  docs/Custom Sorting.md",
        "    (2 to headings of this note)",
    ]
    assert json.loads(run_links(vault.root, cache_dir, "docs/Sorting.md", "--json")[1])["out"][0]["target"] == ""
    with pytest.raises(UsageError, match="names 2 notes"):
        run_links(vault.root, cache_dir, "Custom Sorting")
    _code, text = run_links(vault.root, cache_dir, "demo/custom sorting", "--json")
    assert json.loads(text)["path"] == "demo/Custom Sorting.md"


def test_cli_links_errors(vault: Vault, cache_dir: Path) -> None:
    from agentmd.engine.errors import AgentmdError, UsageError

    vault.write("a.md", "x\n")
    with pytest.raises(UsageError):
        run_links(vault.root, cache_dir)
    with pytest.raises(UsageError):
        run_links(vault.root, cache_dir, "a.md", "--orphans")
    with pytest.raises(AgentmdError, match="no indexed note"):
        run_links(vault.root, cache_dir, "nope.md")
