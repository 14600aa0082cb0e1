"""Curation: the review queue, confirm / retire / promote, ingest of existing Markdown and the changelog."""
