"""The file name a capture gets: its title's slug, or the slug and this machine's tag (`<slug>-<tag>`) so two
machines capturing one title before they sync write two files a plain `git pull` merges, never one name
added twice (the contract's `capture_names`: `title`, `machine`, or `auto`, which tags while the vault's
git has a remote). A name taken on this machine still gets `-2`, `-3`… (engine/write/landing.py)."""

from __future__ import annotations

from pathlib import Path

from agentmd.engine.git.remotes import RemoteConfig
from agentmd.engine.lease import machine_tag
from agentmd.engine.write.request import slugify


class CaptureNames:
    """The stem of a new capture's file name in one vault, as the contract's `capture_names` asks."""

    def __init__(self, vault: Path, tag: str | None = None) -> None:
        self.remotes = RemoteConfig(vault)
        self.tag = tag or machine_tag()

    def tagged(self, mode: str) -> bool:
        """Whether captures are named with this machine's tag under the contract's `capture_names`."""
        return mode == "machine" or (mode == "auto" and self.remotes.has_remote())

    def stem(self, title: str, mode: str) -> str:
        slug = slugify(title)
        return f"{slug}-{self.tag}" if self.tagged(mode) else slug
