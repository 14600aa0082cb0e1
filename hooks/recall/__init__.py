"""The prompt hook (`agentmd-hook recall`, Claude Code's UserPromptSubmit): `light.py` hands the prompt to the
daemon whole and prints its answer; `hook.py` runs the whole recall in this process when no daemon can. What
one recall does (query, project, search, walls, budget, counting) is the engine's (engine/recall/).

This package file imports nothing: each caller loads the one module it needs.
"""
