"""Bare git repositories behind the fake GitHub, driven through the ``git`` CLI.

Why real git: pull request diffs, file patches, review-comment anchors, commit lists and
``git clone`` must all agree with each other exactly as they do on GitHub. Computing them
from a real repository (rather than from hand-written fixtures) is the only way to make
diff-position bugs in the bot show up in tests.

Commits are written with plumbing commands (``hash-object``, ``update-index`` on a
throw-away index, ``write-tree``, ``commit-tree``, ``update-ref``), so no working tree is
ever needed. Every command runs with a scrubbed environment: global and system git config
are ignored and author/committer identities are passed explicitly.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ZERO_SHA = "0" * 40


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """An environment in which git ignores the developer's and the system's config."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "LANG": "C",
        "LC_ALL": "C",
        "TZ": "UTC",
    }
    if extra:
        env.update(extra)
    return env


class GitError(RuntimeError):
    """A git command failed; the message carries its stderr."""


@dataclass(frozen=True)
class Identity:
    """Author or committer of a commit."""

    name: str
    email: str


@dataclass(frozen=True)
class CommitInfo:
    """What the REST API needs to know about one commit."""

    sha: str
    tree: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    author_date: str
    committer_name: str
    committer_email: str
    committer_date: str
    message: str


@dataclass(frozen=True)
class FileDiff:
    """One file of a diff, as GitHub's ``diff-entry`` describes it."""

    filename: str
    status: str  # added | removed | modified | renamed
    previous_filename: str | None
    additions: int
    deletions: int
    patch: str | None  # from the first "@@" on; None for binary files
    blob_sha: str | None  # blob at head (None when removed)


@dataclass(frozen=True)
class Symlink:
    """A change that makes a path a symbolic link to ``target`` (git mode 120000)."""

    target: str


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a tree listing."""

    mode: str
    type: str  # blob | tree | commit
    sha: str
    size: int
    path: str


class BareRepo:
    """A bare repository on disk."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, path: Path, default_branch: str) -> BareRepo:
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "init", "--bare", "--quiet", "-b", default_branch, str(path)],
            check=True,
            env=git_env(),
            capture_output=True,
        )
        repo = cls(path)
        # Allow clients to fetch any advertised commit (PR heads after force-pushes, etc.).
        repo.git("config", "uploadpack.allowAnySHA1InWant", "true")
        repo.git("config", "http.receivepack", "true")
        return repo

    # ---- running git

    def git(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> str:
        return self.git_bytes(*args, input=input, env=env).decode("utf-8", "replace")

    def git_bytes(
        self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None
    ) -> bytes:
        proc = subprocess.run(
            ["git", "--git-dir", str(self.path), *args],
            input=input,
            capture_output=True,
            env=git_env(env),
            check=False,
        )
        if proc.returncode != 0:
            raise GitError(
                f"git {' '.join(args)} failed ({proc.returncode}): "
                + proc.stderr.decode("utf-8", "replace").strip()
            )
        return proc.stdout

    # ---- refs

    def rev_parse(self, rev: str) -> str | None:
        """The commit sha ``rev`` names, or None if it names nothing."""
        try:
            return self.git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
        except GitError:
            return None

    def branches(self) -> dict[str, str]:
        out = self.git("for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
        return dict(line.split(" ", 1) for line in out.splitlines() if line)  # type: ignore[misc]

    def refs(self) -> dict[str, str]:
        """Every ref (``refs/heads/x``, ``refs/pull/1/head``...) and its sha."""
        out = self.git("for-each-ref", "--format=%(refname) %(objectname)")
        return dict(line.split(" ", 1) for line in out.splitlines() if line)  # type: ignore[misc]

    def update_ref(self, ref: str, sha: str, old: str | None = None) -> None:
        args = ["update-ref", ref, sha]
        if old is not None:
            args.append(old)
        self.git(*args)

    def delete_ref(self, ref: str) -> None:
        self.git("update-ref", "-d", ref)

    # ---- writing

    def commit(
        self,
        changes: Mapping[str, str | bytes | Symlink | None],
        *,
        message: str,
        author: Identity,
        parent: str | None,
        committer: Identity | None = None,
        extra_parents: tuple[str, ...] = (),
    ) -> str:
        """Write a commit of ``changes`` (path -> content, None deletes) on ``parent``."""
        with tempfile.TemporaryDirectory(prefix="fakegh-index-") as tmp:
            index_env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            if parent is not None:
                self.git("read-tree", parent, env=index_env)
            else:
                self.git("read-tree", "--empty", env=index_env)
            lines = []
            for path, content in changes.items():
                if content is None:
                    lines.append(f"0 {ZERO_SHA}\t{path}")
                    continue
                mode = "120000" if isinstance(content, Symlink) else "100644"
                if isinstance(content, Symlink):
                    content = content.target
                data = content.encode() if isinstance(content, str) else content
                blob = self.git("hash-object", "-w", "--stdin", input=data).strip()
                lines.append(f"{mode} {blob}\t{path}")
            if lines:
                self.git(
                    "update-index",
                    "--index-info",
                    input=("\n".join(lines) + "\n").encode(),
                    env=index_env,
                )
            tree = self.git("write-tree", env=index_env).strip()
        return self.commit_tree(
            tree,
            message=message,
            author=author,
            committer=committer or author,
            parents=((parent,) if parent else ()) + extra_parents,
        )

    def commit_tree(
        self,
        tree: str,
        *,
        message: str,
        author: Identity,
        committer: Identity,
        parents: tuple[str, ...],
    ) -> str:
        args = ["commit-tree", tree]
        for p in parents:
            args += ["-p", p]
        env = {
            "GIT_AUTHOR_NAME": author.name,
            "GIT_AUTHOR_EMAIL": author.email,
            "GIT_COMMITTER_NAME": committer.name,
            "GIT_COMMITTER_EMAIL": committer.email,
        }
        return self.git(*args, input=message.encode(), env=env).strip()

    def merge(self, base: str, head: str, *, message: str, committer: Identity) -> str | None:
        """A merge commit of ``head`` into ``base``; None if they conflict."""
        try:
            tree = self.git("merge-tree", "--write-tree", base, head).splitlines()[0].strip()
        except GitError:
            return None
        return self.commit_tree(
            tree, message=message, author=committer, committer=committer, parents=(base, head)
        )

    # ---- reading

    def commit_info(self, sha: str) -> CommitInfo:
        fmt = "%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B"
        out = self.git("show", "-s", f"--format={fmt}", sha)
        parts = out.split("\x00")
        return CommitInfo(
            sha=parts[0],
            tree=parts[1],
            parents=tuple(parts[2].split()),
            author_name=parts[3],
            author_email=parts[4],
            author_date=_utc(parts[5]),
            committer_name=parts[6],
            committer_email=parts[7],
            committer_date=_utc(parts[8]),
            message=parts[9].rstrip("\n"),
        )

    def commits_between(self, base: str, head: str) -> list[str]:
        """Commits reachable from head but not base, oldest first (like a PR's list)."""
        out = self.git("rev-list", "--reverse", f"{base}..{head}")
        return out.split()

    def merge_base(self, a: str, b: str) -> str | None:
        try:
            return self.git("merge-base", a, b).strip() or None
        except GitError:
            return None

    def is_ancestor(self, a: str, b: str) -> bool:
        try:
            self.git("merge-base", "--is-ancestor", a, b)
        except GitError:
            return False
        return True

    def ls_tree(self, rev: str, path: str = "") -> list[TreeEntry]:
        """Entries of the tree at ``path`` (a directory) in ``rev``."""
        spec = f"{rev}:{path}" if path else f"{rev}^{{tree}}"
        out = self.git("ls-tree", "--long", "-z", spec)
        entries = []
        for record in out.split("\x00"):
            if not record:
                continue
            meta, name = record.split("\t", 1)
            mode, kind, sha, size = meta.split()
            full = f"{path.rstrip('/')}/{name}" if path else name
            entries.append(TreeEntry(mode, kind, sha, 0 if size == "-" else int(size), full))
        return entries

    def object_at(self, rev: str, path: str) -> TreeEntry | None:
        """The tree entry for ``path`` in ``rev`` (file, directory or submodule)."""
        path = path.strip("/")
        if not path:
            tree = self.git("rev-parse", f"{rev}^{{tree}}").strip()
            return TreeEntry("040000", "tree", tree, 0, "")
        parent = path.rpartition("/")[0]
        try:
            entries = self.ls_tree(rev, parent)
        except GitError:
            return None
        for entry in entries:
            if entry.path == path:
                return entry
        return None

    def read_blob(self, sha: str) -> bytes:
        return self.git_bytes("cat-file", "blob", sha)

    def raw_diff(self, base: str, head: str) -> str:
        """The unified diff GitHub serves as ``application/vnd.github.diff``."""
        return self.git("diff", "--no-color", "--no-ext-diff", "-M", base, head)

    def file_diffs(self, base: str, head: str) -> list[FileDiff]:
        """Per-file diff entries with GitHub-style patches (hunks only, no headers)."""
        text = self.raw_diff(base, head)
        shas = self._blob_shas(head)  # one ls-tree for all files, not one per file
        return _parse_diff(text, shas.get)

    def _blob_shas(self, rev: str) -> dict[str, str]:
        """Every file's blob sha in ``rev``, by path."""
        out = self.git("ls-tree", "-r", "-z", rev)
        shas = {}
        for record in out.split("\x00"):
            if record:
                meta, name = record.split("\t", 1)
                shas[name] = meta.split()[2]
        return shas


def _utc(iso: str) -> str:
    """git's strict ISO date with +00:00 -> GitHub's ``Z`` form."""
    return iso.replace("+00:00", "Z")


def _parse_diff(text: str, blob_sha: object) -> list[FileDiff]:
    sections: list[list[str]] = []
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            sections.append([line])
        elif sections:
            sections[-1].append(line)
    files = []
    for section in sections:
        header: list[str] = []
        body: list[str] = []
        in_body = False
        for line in section:
            if not in_body and line.startswith("@@"):
                in_body = True
            (body if in_body else header).append(line)
        while body and body[-1] == "":
            body.pop()
        old_path = new_path = None
        status = "modified"
        binary = False
        for line in header:
            if line.startswith("--- "):
                old_path = None if line == "--- /dev/null" else line[6:]
            elif line.startswith("+++ "):
                new_path = None if line == "+++ /dev/null" else line[6:]
            elif line.startswith("new file mode"):
                status = "added"
            elif line.startswith("deleted file mode"):
                status = "removed"
            elif line.startswith("rename from "):
                status = "renamed"
                old_path = line[len("rename from ") :]
            elif line.startswith("rename to "):
                new_path = line[len("rename to ") :]
            elif line.startswith("Binary files"):
                binary = True
        if old_path is None and new_path is None:
            # mode-only change or binary: take names from "diff --git a/x b/y"
            names = header[0][len("diff --git ") :]
            half = names.split(" b/", 1)
            old_path = half[0][2:]
            new_path = half[1] if len(half) > 1 else old_path
            if status == "removed":
                new_path = None
            elif status == "added":
                old_path = None
        filename = new_path if new_path is not None else old_path
        assert filename is not None
        additions = sum(1 for x in body if x.startswith("+"))
        deletions = sum(1 for x in body if x.startswith("-"))
        sha = None if status == "removed" else blob_sha(filename)  # type: ignore[operator]
        files.append(
            FileDiff(
                filename=filename,
                status=status,
                previous_filename=old_path if status == "renamed" else None,
                additions=additions,
                deletions=deletions,
                patch=None if binary or not body else "\n".join(body),
                blob_sha=sha,
            )
        )
    return files


@dataclass(frozen=True)
class DiffLine:
    """One line of a file patch with its numbers on both sides."""

    kind: str  # " " context, "+" added, "-" removed
    old: int | None
    new: int | None
    position: int  # GitHub's "position": lines below the first @@ header, 1-based
    hunk: int  # index of the hunk in the patch


def patch_lines(patch: str) -> list[DiffLine]:
    """Number every line of a GitHub file patch (see ``FileDiff.patch``)."""
    lines: list[DiffLine] = []
    old = new = 0
    hunk = -1
    position = 0
    for i, raw in enumerate(patch.split("\n")):
        if raw.startswith("@@"):
            hunk += 1
            header = raw.split("@@")[1].strip()
            minus, plus = header.split(" ")[:2]
            old = int(minus[1:].split(",")[0])
            new = int(plus[1:].split(",")[0])
            if i > 0:
                position += 1  # later hunk headers count as positions too
            continue
        position += 1
        if raw.startswith("\\"):
            continue  # "\ No newline at end of file"
        kind = raw[:1] or " "
        if kind == "+":
            lines.append(DiffLine("+", None, new, position, hunk))
            new += 1
        elif kind == "-":
            lines.append(DiffLine("-", old, None, position, hunk))
            old += 1
        else:
            lines.append(DiffLine(" ", old, new, position, hunk))
            old += 1
            new += 1
    return lines


def hunk_header_index(patch: str, hunk: int) -> int:
    """Line index (in ``patch.split('\\n')``) of the header of hunk number ``hunk``."""
    seen = -1
    for i, raw in enumerate(patch.split("\n")):
        if raw.startswith("@@"):
            seen += 1
            if seen == hunk:
                return i
    raise IndexError(hunk)


def http_backend(
    project_root: Path,
    *,
    path_info: str,
    method: str,
    query: str,
    headers: dict[str, str],
    body: bytes,
    remote_user: str | None,
) -> tuple[int, list[tuple[str, str]], bytes]:
    """Run ``git http-backend`` (CGI) for one smart-HTTP request."""
    env = git_env(
        {
            "GIT_PROJECT_ROOT": str(project_root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path_info,
            "REQUEST_METHOD": method,
            "QUERY_STRING": query,
            "CONTENT_TYPE": headers.get("content-type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
        }
    )
    if remote_user:
        env["REMOTE_USER"] = remote_user
    if "git-protocol" in headers:
        env["GIT_PROTOCOL"] = headers["git-protocol"]
    if "content-encoding" in headers:
        env["HTTP_CONTENT_ENCODING"] = headers["content-encoding"]
    proc = subprocess.run(
        ["git", "http-backend"], input=body, capture_output=True, env=env, check=False
    )
    out = proc.stdout
    head, sep, payload = out.partition(b"\r\n\r\n")
    if not sep:
        head, sep, payload = out.partition(b"\n\n")
    status = 200
    response_headers: list[tuple[str, str]] = []
    for line in head.decode("latin-1").splitlines():
        if not line.strip():
            continue
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.strip().split()[0])
        else:
            response_headers.append((name.strip(), value.strip()))
    if proc.returncode != 0 and status == 200:
        status = 500
        payload = proc.stderr
    return status, response_headers, payload
