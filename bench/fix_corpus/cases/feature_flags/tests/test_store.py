from flags.store import Flag, FlagStore, bucket


def test_enabled_flag_is_on():
    store = FlagStore([Flag("new-checkout")])
    assert store.is_enabled("new-checkout", "u1")


def test_disabled_flag_is_off():
    store = FlagStore([Flag("legacy-export", enabled=False)])
    assert not store.is_enabled("legacy-export", "u1")


def test_unknown_flag_is_off():
    assert not FlagStore().is_enabled("nope", "u1")


def test_deny_list_wins():
    store = FlagStore([Flag("beta", deny=frozenset({"u1"}))])
    assert not store.is_enabled("beta", "u1")


def test_zero_rollout():
    store = FlagStore([Flag("beta", rollout=0)])
    assert not store.is_enabled("beta", "u7")


def test_bucket_is_stable_and_in_range():
    assert bucket("beta", "u1") == bucket("beta", "u1")
    assert all(0 <= bucket("beta", f"u{i}") < 100 for i in range(50))


def test_names_sorted():
    store = FlagStore([Flag("b"), Flag("a")])
    assert store.names() == ["a", "b"]
