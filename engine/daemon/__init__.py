"""`agentmd serve`: the daemon loops, the watcher (the only watchdog user), the HTTP and MCP servers, the
instance lock and status assembly."""
