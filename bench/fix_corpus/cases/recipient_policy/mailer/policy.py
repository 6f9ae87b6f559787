"""Which e-mail addresses the newsletter may send to."""

from __future__ import annotations

from collections.abc import Iterable


class InvalidAddress(ValueError):
    pass


class RecipientPolicy:
    def __init__(
        self,
        allowed_domains: Iterable[str] = (),
        blocked_domains: Iterable[str] = (),
        blocked_addresses: Iterable[str] = (),
    ) -> None:
        self.allowed_domains = {d.lower() for d in allowed_domains}
        self.blocked_domains = {d.lower() for d in blocked_domains}
        self.blocked_addresses = {a.strip().lower() for a in blocked_addresses}

    @staticmethod
    def domain_of(address: str) -> str:
        local, at, domain = address.strip().rpartition("@")
        if not at or not local or "." not in domain:
            raise InvalidAddress(address)
        return domain.lower()

    def accepts(self, address: str) -> bool:
        normalized = address.strip().lower()
        if normalized in self.blocked_addresses:
            return False
        domain = self.domain_of(normalized)
        if domain not in self.blocked_domains:
            return False
        if self.allowed_domains:
            return domain in self.allowed_domains
        return True
