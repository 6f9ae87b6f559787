"""Each attempt works on its own copy of the repository.

A sandboxed run may write anything inside its workspace (that is the point), so no two
attempts, and never the original clone, share one.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def workspace_copy(source: Path, *, parent: Path | None = None) -> Iterator[Path]:
    """A private copy of ``source`` (symlinks copied as links, never followed), removed after."""
    if not source.is_dir():
        raise FileNotFoundError(f"workspace {source} is not a directory")
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="kaizen-ws-", dir=parent))
    target = root / "workspace"
    try:
        shutil.copytree(source, target, symlinks=True)
        yield target
    finally:
        shutil.rmtree(root, ignore_errors=True)
