"""Whether a command that writes a whole tree into a folder holding the vault writes into the vault itself.

`cp -r SRC ~/`, `rsync -a SRC/ ~/` and `tar -xf A -C ~` name a destination outside the vault, yet when that
destination holds the vault (`~`, its parent, `/`), what lands there is named by the source: a copied folder that
holds a `vault/memory/x.md`, or an archive with that member, writes into the vault when the vault sits at
`~/vault`. The shell guard (hooks/shell_writes.py) asks these functions only for such a destination; each answers
with the path in the vault that would be written, or None when nothing is.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

from .shell import inside

MAX_MEMBERS = 200_000  # an archive's members read to see where they land; a longer list is judged unseen
MAX_ARCHIVE_BYTES = 64 << 20  # a larger archive is not read (it would hold the hook up); into a folder holding the
# vault it is refused


def holds_vault(folder: Path, vault: Path) -> bool:
    """`folder` is an ancestor of the vault (not the vault itself, and not inside it)."""
    return folder != vault and vault.is_relative_to(folder)


def copied_into(vault: Path, dest: Path, source: Path | None, *, contents: bool) -> Path | None:
    """Where in the vault copying `source` into the folder `dest` (which holds the vault) writes: the folder
    itself when `contents` (rsync's `SRC/`), else `dest/<source's name>`; then whatever of the vault's path the
    source holds. An unknown source (None) may hold anything."""
    if source is None:
        return vault
    root = dest if contents else dest / source.name
    if inside(root, vault):
        return root
    if not holds_vault(root, vault):
        return None
    first = vault.relative_to(root).parts[0]
    return vault if os.path.lexists(source / first) else None


def extracted_into(vault: Path, dest: Path, archive: Path | None) -> Path | None:
    """Where in the vault extracting `archive` into `dest` (which holds the vault) writes: the first member that
    lands in it. An archive that cannot be read (not there yet, too large, a stream, an unknown format) may hold
    anything, so the vault is the answer."""
    names = _members(archive) if archive is not None else None
    if names is None:
        return vault
    for name in names:
        target = Path(os.path.normpath(dest / name.lstrip("/")))
        if inside(target, vault) or target == vault:
            return target
    return None


def _members(archive: Path) -> Iterable[str] | None:
    try:
        if not archive.is_file() or archive.stat().st_size > MAX_ARCHIVE_BYTES:
            return None
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                names = z.namelist()
            return names if len(names) <= MAX_MEMBERS else None
        found: list[str] = []
        with tarfile.open(archive) as t:
            for member in t:
                found.append(member.name)
                if len(found) > MAX_MEMBERS:
                    return None
        return found
    except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError, ValueError):
        return None
