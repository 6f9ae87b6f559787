"""The diff model decides which anchors are sent to GitHub; a wrong answer is a 422."""

from __future__ import annotations

import pytest

from workers.review.diff_model import (
    NOTHING_TO_REVIEW,
    RENAMED_UNCHANGED,
    DiffModel,
    only_new,
)

UNIFIED = """\
diff --git a/app.py b/app.py
index 1111111..2222222 100644
--- a/app.py
+++ b/app.py
@@ -1,4 +1,5 @@
 import os
-x = 1
+x = 2
+y = 3
 def f():
     return x
diff --git a/old_name.py b/new_name.py
similarity index 90%
rename from old_name.py
rename to new_name.py
index 3333333..4444444 100644
--- a/old_name.py
+++ b/new_name.py
@@ -1,2 +1,2 @@
 a = 1
-b = 2
+b = 3
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..5555555
Binary files /dev/null and b/logo.png differ
diff --git a/end.txt b/end.txt
index 6666666..7777777 100644
--- a/end.txt
+++ b/end.txt
@@ -1 +1 @@
-old
\\ No newline at end of file
+new
\\ No newline at end of file
"""


@pytest.fixture
def model() -> DiffModel:
    return DiffModel.from_unified(UNIFIED)


def test_right_side_accepts_added_and_context_lines(model: DiffModel) -> None:
    assert model.can_comment("app.py", "RIGHT", 2)  # added
    assert model.can_comment("app.py", "RIGHT", 1)  # context
    assert not model.can_comment("app.py", "RIGHT", 40)


def test_left_side_accepts_removed_lines_at_old_numbers(model: DiffModel) -> None:
    assert model.can_comment("app.py", "LEFT", 2)  # "-x = 1"
    assert not model.can_comment("app.py", "LEFT", 9)


def test_added_lines_carry_their_text(model: DiffModel) -> None:
    assert model.file("app.py").added == {2: "x = 2", 3: "y = 3"}  # type: ignore[union-attr]


def test_renamed_file_is_anchored_by_its_new_path(model: DiffModel) -> None:
    entry = model.file("new_name.py")
    assert entry is not None and entry.status == "renamed" and entry.old_path == "old_name.py"
    assert model.can_comment("new_name.py", "RIGHT", 2)
    assert model.file("old_name.py") is None


def test_binary_file_is_skipped_with_a_reason(model: DiffModel) -> None:
    entry = model.file("logo.png")
    assert entry is not None and entry.skipped == "binary file"
    assert not model.can_comment("logo.png", "RIGHT", 1)


def test_last_line_without_newline_is_commentable(model: DiffModel) -> None:
    entry = model.file("end.txt")
    assert entry is not None and entry.no_newline_at_end
    assert model.can_comment("end.txt", "RIGHT", 1)
    assert model.can_comment("end.txt", "LEFT", 1)


def test_multi_line_range_must_stay_in_one_hunk() -> None:
    patch = "@@ -1,2 +1,3 @@\n a\n+b\n c\n@@ -20,2 +21,3 @@\n x\n+y\n z"
    model = DiffModel.from_github_files(
        [{"filename": "f.py", "status": "modified", "patch": patch}]
    )
    assert model.can_comment("f.py", "RIGHT", 3, start_line=1)
    assert not model.can_comment("f.py", "RIGHT", 22, start_line=2)  # spans two hunks
    assert not model.can_comment("f.py", "RIGHT", 2, start_line=3)  # backwards


def test_github_files_without_patch_are_skipped() -> None:
    model = DiffModel.from_github_files(
        [
            {"filename": "big.sql", "status": "modified", "changes": 90000},
            {"filename": "img.png", "status": "added", "changes": 0},
        ]
    )
    reasons = {f.path: f.skipped for f in model.files}
    assert "too large" in (reasons["big.sql"] or "")
    assert "binary" in (reasons["img.png"] or "")


def test_a_pure_rename_is_not_reviewed_and_not_called_binary() -> None:
    from_api = DiffModel.from_github_files(
        [{"filename": "new.py", "previous_filename": "old.py", "status": "renamed", "changes": 0}]
    )
    from_git = DiffModel.from_unified(
        "diff --git a/old.py b/new.py\nsimilarity index 100%\n"
        "rename from old.py\nrename to new.py\n"
    )
    for model in (from_api, from_git):
        (entry,) = model.files
        assert entry.skipped == RENAMED_UNCHANGED in NOTHING_TO_REVIEW
        assert model.reviewable() == []


def test_huge_file_over_the_limit_is_skipped() -> None:
    patch = "@@ -0,0 +1,50 @@\n" + "\n".join(f"+line {i}" for i in range(50))
    model = DiffModel.from_github_files(
        [{"filename": "gen.py", "status": "added", "patch": patch}], max_file_changes=10
    )
    assert model.reviewable() == []
    assert "50 changed lines" in (model.files[0].skipped or "")


def test_three_thousand_line_file_is_fully_commentable() -> None:
    patch = "@@ -0,0 +1,3000 @@\n" + "\n".join(f"+v{i} = {i}" for i in range(3000))
    model = DiffModel.from_github_files([{"filename": "big.py", "status": "added", "patch": patch}])
    assert model.changed_lines == 3000
    assert all(model.can_comment("big.py", "RIGHT", n) for n in (1, 1500, 3000))
    assert not model.can_comment("big.py", "RIGHT", 3001)


def test_path_filters_skip_excluded_and_not_included_files(model: DiffModel) -> None:
    model.apply_path_filters(["**/*.py", "*.py"], ["new_*.py"])
    assert model.file("app.py").skipped is None  # type: ignore[union-attr]
    assert model.file("new_name.py").skipped == "excluded by review.paths.exclude"  # type: ignore[union-attr]
    assert model.file("end.txt").skipped == "not in review.paths.include"  # type: ignore[union-attr]


def test_only_new_keeps_anchors_but_counts_only_new_lines_as_added() -> None:
    pr = DiffModel.from_github_files(
        [
            {"filename": "a.py", "status": "added", "patch": "@@ -0,0 +1,3 @@\n+one\n+two\n+three"},
            {"filename": "b.py", "status": "added", "patch": "@@ -0,0 +1 @@\n+untouched"},
        ]
    )
    increment = DiffModel.from_github_files(
        [{"filename": "a.py", "status": "modified", "patch": "@@ -2,1 +2,2 @@\n two\n+three"}]
    )
    narrowed = only_new(pr, increment)
    assert narrowed.file("a.py").added == {3: "three"}  # type: ignore[union-attr]
    assert narrowed.can_comment("a.py", "RIGHT", 1)  # still in the PR's diff
    assert narrowed.file("b.py").skipped == "unchanged since the last review"  # type: ignore[union-attr]


def test_a_file_the_increment_changed_without_a_patch_keeps_all_its_lines() -> None:
    pr = DiffModel.from_github_files(
        [{"filename": "big.py", "status": "added", "patch": "@@ -0,0 +1,2 @@\n+one\n+two"}]
    )
    increment = DiffModel.from_github_files(
        [{"filename": "big.py", "status": "modified", "changes": 90_000}]  # compare: no patch
    )
    narrowed = only_new(pr, increment)
    assert narrowed.file("big.py").skipped is None  # type: ignore[union-attr]
    assert narrowed.file("big.py").added == {1: "one", 2: "two"}  # type: ignore[union-attr]


def test_garbage_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="not a unified diff"):
        DiffModel.from_unified("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n garbage")


@pytest.mark.parametrize(
    ("written", "path"),
    [
        ('"b/\\303\\274 mod.py"', "ü mod.py"),  # git's core.quotePath default
        ('"b/tab\\there.py"', "tab\there.py"),
        ('"b/quote\\"d\\\\x.py"', 'quote"d\\x.py'),
        ("b/plain name.py", "plain name.py"),
    ],
)
def test_paths_git_quotes_are_read_back(written: str, path: str) -> None:
    old = written.replace("b/", "a/", 1)
    text = f"diff --git {old} {written}\n--- {old}\n+++ {written}\n@@ -1 +1,2 @@\n x\n+y = 2\n"
    model = DiffModel.from_unified(text)
    assert [f.path for f in model.files] == [path]
    assert model.can_comment(path, "RIGHT", 2)


def test_a_symbolic_link_is_not_reviewed_as_code() -> None:
    text = (
        "diff --git a/link.py b/link.py\nnew file mode 120000\nindex 0000000..dab8c79\n"
        "--- /dev/null\n+++ b/link.py\n@@ -0,0 +1 @@\n+plain.txt\n\\ No newline at end of file\n"
        "diff --git a/moved.py b/moved.py\nindex 1111111..2222222 120000\n"
        "--- a/moved.py\n+++ b/moved.py\n@@ -1 +1 @@\n-a.py\n+b.py\n"
        "diff --git a/was_link.py b/was_link.py\nold mode 120000\nnew mode 100644\n"
        "index 3333333..4444444\n--- a/was_link.py\n+++ b/was_link.py\n@@ -1 +1 @@\n-a.py\n+x = 1\n"
    )
    model = DiffModel.from_unified(text)
    assert [(f.path, f.skipped) for f in model.files] == [
        ("link.py", "a symbolic link"),
        ("moved.py", "a symbolic link"),
        ("was_link.py", None),
    ]


def test_lines_that_only_lost_a_carriage_return_or_trailing_space_are_not_added() -> None:
    """rsa 4.9.1 turned CRLF into LF: every line of 15 files removed and added again, and
    a cold-start review had ten remarks on code no one changed. Such a line is still in
    the diff (GitHub takes a comment on it), but it is not new code."""
    patch = (
        "@@ -1,4 +1,5 @@\n"
        "-import os\r\n"
        "-x = 1   \r\n"
        "-def f():\r\n"
        "-    return x\r\n"
        "+import os\n"
        "+x = 1\n"
        "+y = 2\n"
        "+def f():\n"
        "+    return  x\n"
    )
    model = DiffModel.from_github_files(
        [{"filename": "a.py", "status": "modified", "patch": patch}]
    )
    entry = model.file("a.py")
    assert entry is not None
    # new: ``y = 2``, and a line whose inner spacing changed
    assert entry.added == {3: "y = 2", 5: "    return  x"}
    assert all(model.can_comment("a.py", "RIGHT", n) for n in range(1, 6))
    assert set(entry.removed) == {1, 2, 3, 4}  # the left side is as it was


def test_a_line_added_twice_is_new_once_for_each_removed_copy() -> None:
    patch = "@@ -1,2 +1,3 @@\n-pass\n-x = 1\n+pass\n+pass\n+x = 2\n"
    entry = DiffModel.from_github_files(
        [{"filename": "a.py", "status": "modified", "patch": patch}]
    ).file("a.py")
    assert entry is not None
    assert entry.added == {2: "pass", 3: "x = 2"}
