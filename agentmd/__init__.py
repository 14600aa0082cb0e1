"""agentmd: an Obsidian vault kept as the long-term, searchable, git-backed memory of coding agents.

The one import root. Its subpackages live at the top of the repository: `agentmd.vault_schema`
(vault_schema/), `agentmd.rules` (rules/), `agentmd.engine` (engine/), `agentmd.hooks` (hooks/); this folder
holds the command line, the composition root that nothing else imports, and the floor every layer may import:
`agentmd.errors` (the one exception root) and `agentmd.vocabulary` (shared names and word lists)."""

__version__ = "0.1.0"

# In a source checkout the subpackages sit beside this folder (pyproject.toml maps engine/ to agentmd.engine, and so
# on); an installed copy holds them inside it. Looking beside the folder lets a checkout be imported through a plain
# path (./dev's editable install writes one), which costs nothing at interpreter start, unlike an import hook.
import os as _os

_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_root, "pyproject.toml")) and _os.path.isdir(_os.path.join(_root, "engine")):
    __path__.append(_root)
