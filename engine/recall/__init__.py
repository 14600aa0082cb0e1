"""Prompt-submit recall: put the few notes most relevant to a prompt in front of the agent, as reference.

Claude Code runs the hook on `UserPromptSubmit` (hooks reference): it writes one JSON object on stdin with
`session_id`, `transcript_path`, `cwd`, `hook_event_name` and `prompt`, and adds whatever the hook prints on
stdout to the prompt's context when the hook exits 0. Exit 2 would block and erase the prompt; any other
code is a hook error. This hook therefore **always exits 0**, and on any failure prints nothing.

Where it runs: with a daemon up, in the daemon (`serve.py`, `POST /v1/recall`): the hook's light path
(hooks/recall/light.py) sends the prompt as it came and prints the answer. Without one, in the hook's own
process (`pipeline.py`, hooks/recall/hook.py), against the index; `agentmd recall` runs the pipeline too.

One run:

1. **Query** (`query.py`). The prompt becomes one search query: fenced code, URLs and e-mail addresses
   are dropped, a file path gives only its file's name (`src/parser.rs` -> `parser`: the most specific word
   of a prompt about code, and one a notes vault usually lacks, which the confidence's missing-word step
   reads), words joined by slashes are split, punctuation is trimmed, stop words and conversational filler
   go, duplicates go, and at most 12 meaningful words are kept (`sanitize_query`).
2. **Project** (`query.py`). The session's project comes from the prompt's working directory
   (`bind_project`):
   a. the nearest `.agentmd` binding file in the directory or any parent, with a line `project: <slug>`
      (`project:` left empty or `none` binds the session to no project and stops the search); else
   b. the vault's project folders: the nearest of the working directory and its parents, up to the
      enclosing git work tree's root, whose name (lowercase, `_` and spaces read as `-`) is the name of a
      folder in the contract's `projects` space (`projects/<slug>/`); else
   c. no project.
   The project goes to the search, which ranks other projects' notes and notes of no project lower
   (`project_mismatch`; rules and the `standards` space are spared).
3. **Search.** In the daemon, its own hybrid search with `recall: true`, which gathers the candidates too
   (steps 4 and the links of 5; engine/search/recall.py); the hook's own search never counts as a recall.
   In the hook's process (`pipeline.py`), the same through the daemon's `/v1/search` when a daemon without
   `/v1/recall` runs (an older install), else against the index, which must exist: the hook never builds one.
4. **Walls and floor.** Notes in the contract's `recall_exempt_areas`, walled notes (archived,
   superseded, staged), and notes that are not confirmed knowledge (`status: unfiled`, `trust:
   untrusted`, self-probe notes) are never rendered, neither as direct hits nor as linked notes. A direct
   hit must reach the contract's `recall_floor` (its search `confidence`, engine/search/confidence.py). A note
   whose shown text (title, summary) the write prefilters refuse, an order to the agent or a credential, is
   withheld and named in what was left out: a note written by hand or past the door never met them.
5. **Budget** (`render.py`). Direct hits are rendered in rank order, each as one bullet: title, the note's
   frontmatter `summary` (else the search snippet, else its opening line; Markdown read as prose — facts
   reconcile stored in the index, engine/index/digest.py), its vault path, and a tag: `[this project]`,
   `[general]` (no project) or `[project: <slug>]` (another project's note). The whole output (header,
   fence, bullets, hint) stays within `token_budget` estimated tokens (default 1,500) and `max_entries`
   bullets (default 15). The strongest match is always in: if its bullet alone does not fit, its summary
   is shortened. After the direct hits, one hop of links from them (out-links first, then backlinks, in
   rank order) adds up to 3 notes tagged `[linked]`, each passing the same walls, only in the entries and
   tokens the direct hits left: a linked note never takes the place of a direct hit.
6. **Hint.** The block ends with one line saying that memory can be searched on demand
   (`memory_search`, `agentmd search`). When nothing passed the walls and the recall floor the hook prints
   nothing at all: most prompts are ordinary coding requests a notes vault cannot help with.

Tokens are estimated as characters / 4, rounded up (`estimate_tokens`): close enough for English prose
and Markdown paths, and it needs no tokenizer.

The rendered text is inert: each bullet is a single line (control characters, bidi and zero-width
characters removed, white space collapsed), so nothing inside can close the fence; runs of three or more
backticks or tildes are broken up and tag-shaped `<...>` is defused as well.

Failure (hooks/recall/light.py, hook.py): any error, a missing index, a daemon that does not answer, or the hard
time budget (default 1.5 s from process start to exit) prints nothing and exits 0; the reason goes to
`<state dir>/hook.log`, and a give-up is said on stderr in one line and counted by `status`.

Counting (engine/index/usage.py): every note the hook rendered counts one injection. The daemon that ran the
recall counts them before it answers; the full hook has the daemon that searched count them (`/v1/injected`),
else counts them itself. `agentmd recall QUERY` counts its rendered direct hits as recalls (an on-demand read);
`--preview` counts nothing.

The contract's walls and project folder are cached for the hook's own process in `<state dir>/recall-walls.json`,
keyed by the contract files' stat, and re-read when they change; the daemon reads them from its contract.

This package file imports nothing: each caller loads the one module it needs.
"""
