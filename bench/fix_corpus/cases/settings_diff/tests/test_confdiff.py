from confdiff import diff, render

OLD = {"timeout": 30, "region": "eu", "db_password": "a", "debug": False}
NEW = {"timeout": 60, "region": "eu", "db_password": "a", "workers": 4}


def test_added_and_removed():
    d = diff(OLD, NEW)
    assert d.added == ["workers"]
    assert d.removed == ["debug"]


def test_changed():
    assert diff(OLD, NEW).changed == ["timeout"]


def test_identical_settings_have_empty_diff():
    assert diff(OLD, dict(OLD)).empty


def test_render():
    assert render(OLD, NEW) == ["+ workers = 4", "- debug", "~ timeout: 30 -> 60"]


def test_render_hides_secrets():
    assert render({"api_token": "x"}, {}) == ["- api_token"]
    assert render({}, {"api_token": "x"}) == ["+ api_token = ***"]
