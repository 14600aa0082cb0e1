"""The page: status, review, search and undo for a person, served by the daemon at /ui (see engine/web/routes.py)."""
