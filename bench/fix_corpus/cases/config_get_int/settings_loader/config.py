"""Typed access to a simple "key = value" configuration file."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class ConfigError(ValueError):
    pass


class Config:
    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = {key.lower(): value for key, value in values.items()}

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> Config:
        values: dict[str, str] = {}
        for number, line in enumerate(lines, start=1):
            stripped = line.split("#", 1)[0].strip()
            if not stripped:
                continue
            key, sep, value = stripped.partition("=")
            if not sep:
                raise ConfigError(f"line {number}: expected key = value")
            values[key.strip()] = value.strip()
        return cls(values)

    def get_str(self, key: str, default: str = "") -> str:
        return self._values.get(key.lower(), default)

    def get_int(self, key: str, default: int = 0) -> int:
        raw = self._values.get(key.lower())
        text = raw.strip()
        try:
            return int(text)
        except ValueError as exc:
            raise ConfigError(f"{key}: not an integer: {raw!r}") from exc

    def get_bool(self, key: str, default: bool = False) -> bool:
        raw = self._values.get(key.lower())
        if raw is None:
            return default
        lowered = raw.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ConfigError(f"{key}: not a boolean: {raw!r}")

    def get_list(self, key: str, default: tuple[str, ...] = ()) -> list[str]:
        raw = self._values.get(key.lower())
        if raw is None:
            return list(default)
        return [item.strip() for item in raw.split(",") if item.strip()]
