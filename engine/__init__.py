"""agentmd engine: index, catalog, reconcile, search and the command line."""

__version__ = "0.1.0"
