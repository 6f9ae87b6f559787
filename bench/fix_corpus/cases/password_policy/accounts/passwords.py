"""The password policy for account signup and password changes."""

from __future__ import annotations

from dataclasses import dataclass

COMMON_PASSWORDS = frozenset({"password", "123456", "qwerty", "letmein", "iloveyou"})


@dataclass(frozen=True)
class Policy:
    min_length: int = 10
    require_symbol: bool = False


def problems(password: str, policy: Policy | None = None) -> list[str]:
    """Everything wrong with ``password``; an empty list means it is acceptable."""
    policy = policy or Policy()
    issues: list[str] = []
    if len(password) < policy.min_length:
        issues.append(f"shorter than {policy.min_length} characters")
    if password.lower() in COMMON_PASSWORDS:
        issues.append("too common")
    has_upper = any(ch.isupper() for ch in password)
    has_lower = any(ch.islower() for ch in password)
    mixed_case = has_upper or has_lower
    if not mixed_case:
        issues.append("needs upper- and lower-case letters")
    if not any(ch.isdigit() for ch in password):
        issues.append("needs a digit")
    if policy.require_symbol and password.isalnum():
        issues.append("needs a symbol")
    return issues


def is_acceptable(password: str, policy: Policy | None = None) -> bool:
    return not problems(password, policy)


def strength(password: str) -> str:
    """A rough label for the strength meter: weak, fair or strong."""
    classes = sum(
        [
            any(ch.islower() for ch in password),
            any(ch.isupper() for ch in password),
            any(ch.isdigit() for ch in password),
            not password.isalnum(),
        ]
    )
    score = classes + (len(password) >= 12) + (len(password) >= 16)
    if score >= 5:
        return "strong"
    return "fair" if score >= 3 else "weak"
