"""git run on the vault's repository, judged for the Bash file guard (hooks/shell_writes.py): its history is the
vault's undo, so only git's reading commands run there; any git command is also judged by the files it is told to
write (an output, a new repository, worktree or bundle). The repository is found as git finds it: `-C`,
`--git-dir`/`--work-tree`, `GIT_DIR`/`GIT_WORK_TREE` in the environment or given through `env`, a glob.
"""

from __future__ import annotations

import os
from pathlib import Path

from .pretool import ALLOW, Verdict
from .shell import ShellWalker, inside, option_values, positionals, resolve, spellings, under_by_identity
from .shell_commands import git_reads, write_reason


class GitJudge(ShellWalker):
    """The walker's judgment of git; `judge` and `lands_in_vault` are the write walker's."""

    def judge(self, words: list[str], cwd: Path | None, what: str, verb: str) -> Verdict:
        raise NotImplementedError

    def lands_in_vault(self, word: str, cwd: Path | None, *, holding: bool = False) -> Path | None:
        raise NotImplementedError

    def git(self, args: list[str], cwd: Path | None, *, in_vault: bool) -> Verdict:
        """git in the vault's repository may only read: its history is the vault's undo."""
        here, named, i = cwd, [], 0
        while i < len(args) and args[i].startswith("-"):
            arg = args[i]
            if arg == "-C" and i + 1 < len(args):
                here = resolve(args[i + 1], here, self.env)
                i += 2
            elif arg in ("--git-dir", "--work-tree") and i + 1 < len(args):
                named.append(args[i + 1])
                i += 2
            elif arg.startswith(("--git-dir=", "--work-tree=")):
                named.append(arg.split("=", 1)[1])
                i += 1
            else:
                i += 2 if arg in ("-c", "--namespace", "--exec-path", "--config-env") else 1
        sub, rest = (args[i], args[i + 1 :]) if i < len(args) else (None, [])
        named += [v for k, v in {**self.env, **self.prefix}.items() if k in ("GIT_DIR", "GIT_WORK_TREE")]
        if here is not None and any(ch in str(here) for ch in "*?["):  # `git -C /v*`: the folders the glob names
            here = next((Path(p) for p in spellings(str(here), cwd)[1:] if os.path.isdir(p)), here)
        by_name = here is not None and (inside(here, self.vault) or under_by_identity(here, self.vault) is not None)
        in_vault = in_vault or by_name or any(self.lands_in_vault(w, cwd) is not None for w in named)
        # where any git command writes a file it is told of: an output, a new repository or worktree, a bundle
        outputs = [a.split("=", 1)[1] for a in rest if a.startswith(("--output=", "--output-directory="))]
        outputs += option_values(rest, "o", ("--output", "--output-directory"))
        made = sub in ("init", "clone") or (sub, rest[:1]) in (("worktree", ["add"]), ("bundle", ["create"]))
        if made:
            after = rest if sub in ("init", "clone") else rest[1:]  # past `add`, `create`
            named_here = positionals(after, ("-b", "--branch", "--template", "--separate-git-dir", "--depth", "-o"))
            if sub == "clone":  # `git clone SOURCE [DIR]`: the folder it makes, not the repository it reads
                source = named_here[0].rstrip("/") if named_here else ""
                named_here = named_here[1:2] or ([os.path.basename(source).removesuffix(".git")] if source else [])
            outputs += named_here[:3]
        verdict = self.judge(outputs, here, f"`git {sub}`", "write")
        if not verdict.deny and sub == "clean" and here is not None and self.vault.is_relative_to(here):
            return Verdict(
                True, write_reason("`git clean` (it deletes what git does not track)", "delete", here, self.vault)
            )
        if verdict.deny or not in_vault or sub is None:
            return verdict
        configured = any(a in ("-c", "--config-env") or a.startswith("--config-env=") for a in args[:i])
        runs = any(a.startswith(("-O", "--open-files-in-pager", "--ext-diff", "--textconv", "--exec")) for a in rest)
        if git_reads(sub, rest) and not configured and not runs:
            return ALLOW
        return Verdict(
            True,
            f"agentmd file guard: `git {sub}` would change the git repository of the agentmd vault {self.vault}. Its "
            "history is the vault's undo, which agentmd keeps (every change committed with its origin), so only "
            "git's reading commands (log, show, diff, status, blame, grep) run there; to take a change back use "
            "`agentmd undo` or `agentmd restore PATH --to DATE`, and leave the vault's git to its owner.",
        )
