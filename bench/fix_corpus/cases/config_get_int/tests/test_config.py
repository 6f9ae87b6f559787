import pytest
from settings_loader.config import Config, ConfigError

LINES = [
    "# service settings",
    "Workers = 8",
    "debug = yes",
    "hosts = a.example, b.example,",
    "timeout = soon",
]


@pytest.fixture
def config() -> Config:
    return Config.from_lines(LINES)


def test_get_int(config):
    assert config.get_int("workers") == 8


def test_get_int_invalid(config):
    with pytest.raises(ConfigError):
        config.get_int("timeout")


def test_get_int_missing_uses_default(config):
    assert config.get_int("retries", 3) == 3


def test_get_int_missing_default_zero(config):
    assert config.get_int("retries") == 0


def test_get_bool(config):
    assert config.get_bool("debug") is True
    assert config.get_bool("verbose", True) is True


def test_get_list(config):
    assert config.get_list("hosts") == ["a.example", "b.example"]
    assert config.get_list("ports", ("80",)) == ["80"]


def test_bad_line():
    with pytest.raises(ConfigError, match="line 1"):
        Config.from_lines(["just words"])
