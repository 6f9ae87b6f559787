"""Each attempt works on its own copy of the repository.

A sandboxed run may write anything inside its workspace (that is the point), so no two
attempts, and never the original clone, share one.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def workspace_copy(source: Path, *, parent: Path | None = None) -> Iterator[Path]:
    """A private copy of ``source`` (symlinks copied as links, never followed), removed after.

    Named pipes, sockets and device nodes are left out: an install step may leave a pipe
    or a server's socket behind, and copying one fails (a pipe may block), which would end
    every later run. Nothing a test reads is ever one of those."""
    if not source.is_dir():
        raise FileNotFoundError(f"workspace {source} is not a directory")
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="kaizen-ws-", dir=parent))
    target = root / "workspace"
    try:
        shutil.copytree(source, target, symlinks=True, ignore=_special_files)
        yield target
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _special_files(folder: str, names: Iterable[str]) -> set[str]:
    """The entries of ``folder`` that are neither files, folders nor links."""
    special = set()
    for name in names:
        try:
            mode = os.lstat(os.path.join(folder, name)).st_mode
        except OSError:
            continue  # gone already: copytree reports it as it would have
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            special.add(name)
    return special
