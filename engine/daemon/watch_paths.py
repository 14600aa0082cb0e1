"""Which vault paths the watcher ignores: dot components, editor swap/backup files, download temporaries.

The rules work on vault-relative POSIX paths and never touch the disk.
"""

from __future__ import annotations

import re

from agentmd.engine.synctools import is_sync_temp

_JUNK_NAME = re.compile(
    r"""
      ~$                          # backup: note.md~ (vim, emacs, gedit)
    | ^\#.*\#$                    # emacs auto-save: #note.md#
    | ^~\$                        # office owner file: ~$report.docx
    | \.sw[m-px]$                 # vim swap: .swp, then .swo, .swn, .swm; .swx probe
    | \.kate-swp$                 # kate swap
    | \.(?:tmp|crdownload|part|partial)$   # generic temp, chrome / firefox partial downloads
    | \.(?:md|markdown)\.tmp      # atomic-save temps: note.md.tmp, note.md.tmp.123, note.md.tmp-x1y2
    """,
    re.IGNORECASE | re.VERBOSE,
)

_VIM_PROBE_FIRST = 4913
_VIM_PROBE_STEP = 123


def _is_vim_probe(name: str) -> bool:
    """vim checks it may create files in a directory with the names 4913, 5036, 5159, ... (first unused)."""
    if not name.isdigit() or not name.isascii():
        return False
    n = int(name)
    return n >= _VIM_PROBE_FIRST and (n - _VIM_PROBE_FIRST) % _VIM_PROBE_STEP == 0


def is_ignored(rel_path: str) -> bool:
    """True for vault-relative POSIX paths that must never become documents or trigger work.

    Any component starting with "." (``.git/``, ``.obsidian/``, ``.trash/``, ``.tmp.driveupload/``, dotfiles
    such as ``.note.md.swp`` or ``.#note.md``) ignores the path. The last component is also checked against
    editor and downloader temporaries: ``*.swp``/``*.swo``/``*.swx``, ``*~``, ``#*#``, vim's ``4913`` probe,
    ``*.tmp``, ``*.crdownload``, ``*.part``, ``*.md.tmp*``; and a file-sync tool's temp files, placeholders and
    folders (``~$Note.md``, ``~syncthing~Note.md.tmp``, ``Note.md.!sync``, ``.stversions/``: see
    engine/synctools.py). A trailing "/" (directory hint) is allowed. The empty path (the vault root itself)
    is ignored.
    """
    parts = [p for p in rel_path.split("/") if p]
    if not parts:
        return True
    if any(p.startswith(".") for p in parts):
        return True
    name = parts[-1]
    return bool(_JUNK_NAME.search(name)) or _is_vim_probe(name) or is_sync_temp(name)
