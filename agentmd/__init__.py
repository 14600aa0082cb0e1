"""agentmd: an Obsidian vault kept as the long-term, searchable, git-backed memory of coding agents.

The one import root. Its subpackages live at the top of the repository: `agentmd.vault_schema`
(vault_schema/), `agentmd.rules` (rules/), `agentmd.engine` (engine/), `agentmd.hooks` (hooks/); this folder
holds the command line, the composition root that nothing else imports, and the floor every layer may import:
`agentmd.errors` (the one exception root) and `agentmd.vocabulary` (shared names and word lists)."""

__version__ = "0.1.0"
