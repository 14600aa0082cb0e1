"""Enrichment: a model CLI judges the notes awaiting review, under hard budgets, never touching a body."""
