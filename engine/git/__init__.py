"""The only git user: the command runner, the index lock, the committer, health and the corpus-write gate."""
