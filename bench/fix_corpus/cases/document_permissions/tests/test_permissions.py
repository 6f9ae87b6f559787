from docs_acl.permissions import Document, User, can_delete, can_edit, can_view, visible_titles

ALICE = User("alice")
BOB = User("bob")
ROOT = User("root", frozenset({"admin"}))


def test_owner_can_edit():
    assert can_edit(ALICE, Document("notes", owner="alice"))


def test_admin_can_edit_any_document():
    assert can_edit(ROOT, Document("notes", owner="alice"))


def test_admin_edits_own_document():
    assert can_edit(ROOT, Document("runbook", owner="root"))


def test_stranger_cannot_edit():
    assert not can_edit(BOB, Document("notes", owner="alice"))


def test_locked_document_admin_only():
    doc = Document("policy", owner="alice", locked=True)
    assert not can_edit(ALICE, doc)
    assert can_edit(ROOT, doc)


def test_shared_document_visible():
    assert can_view(BOB, Document("plan", owner="alice", shared_with={"bob"}))


def test_delete_rules():
    assert can_delete(ALICE, Document("notes", owner="alice"))
    assert not can_delete(BOB, Document("notes", owner="alice"))


def test_visible_titles():
    docs = [Document("b", owner="alice"), Document("a", owner="carol", public=True)]
    assert visible_titles(BOB, docs) == ["a"]
