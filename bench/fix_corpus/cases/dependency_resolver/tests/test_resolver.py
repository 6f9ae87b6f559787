import pytest
from deps.resolver import (
    CycleError,
    MissingDependency,
    dependents,
    install_order,
    missing_dependencies,
)

LOCK = {"app": ["app-core", "http"], "app-core": ["http"], "http": []}


def test_install_order():
    assert install_order(LOCK) == ["http", "app-core", "app"]


def test_cycle_detected():
    with pytest.raises(CycleError, match="a -> b -> a"):
        install_order({"a": ["b"], "b": ["a"]})


def test_missing_dependencies():
    assert missing_dependencies({"app": ["ghost", "http"], "http": []}) == ["ghost"]


def test_strict_accepts_complete_lock():
    assert install_order(LOCK, strict=True)[-1] == "app"


def test_strict_rejects_incomplete_lock():
    with pytest.raises(MissingDependency):
        install_order({"app": ["ghost"]}, strict=True)


def test_dependents():
    assert dependents(LOCK, "http") == ["app", "app-core"]
