"""Agent hooks (prompt-submit recall, session start, worktree guard) and their installer."""
