"""Tests of prompt-submit recall: the query, the gathering, the rendering, the hook and its commands."""
