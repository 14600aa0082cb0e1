"""The engine: index and catalog, search, the governed write path, git and the daemon."""
