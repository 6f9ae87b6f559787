"""The private copy each sandboxed run gets: what it holds and what it leaves out."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from workers.sandbox.workspace import workspace_copy


def test_files_folders_and_links_are_copied_and_the_copy_is_removed_after(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "mod.py").write_text("x = 1\n")
    (source / "outside").symlink_to("/etc/hostname")
    with workspace_copy(source) as copy:
        assert (copy / "pkg" / "mod.py").read_text() == "x = 1\n"
        assert os.readlink(copy / "outside") == "/etc/hostname"  # a link, never followed
        (copy / "pkg" / "mod.py").write_text("changed\n")
    assert not copy.exists()
    assert (source / "pkg" / "mod.py").read_text() == "x = 1\n"


def test_pipes_and_sockets_an_install_left_behind_are_not_copied(tmp_path: Path) -> None:
    # An install step may leave a named pipe or a server's socket in the workspace; copying
    # either fails (or a pipe blocks), which would end every later run of the fix.
    source = tmp_path / "src"
    (source / "run").mkdir(parents=True)
    (source / "run" / "data.txt").write_text("kept\n")
    os.mkfifo(source / "run" / "pipe")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(source / "run" / "db.sock"))
        with workspace_copy(source) as copy:
            assert sorted(p.name for p in (copy / "run").iterdir()) == ["data.txt"]
    finally:
        server.close()


def test_a_missing_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError), workspace_copy(tmp_path / "nothing"):
        pass
