import pytest
from mailer.policy import InvalidAddress, RecipientPolicy

POLICY = RecipientPolicy(blocked_domains=["Spam.example"], blocked_addresses=["eve@example.com"])


def test_normal_address_accepted():
    assert POLICY.accepts("ann@example.com")


def test_blocked_domain_rejected():
    assert not POLICY.accepts("bulk@spam.example")


def test_blocked_address_rejected():
    assert not POLICY.accepts(" EVE@example.com ")


def test_allowlist_rejects_other_domains():
    policy = RecipientPolicy(allowed_domains=["corp.example"])
    assert not policy.accepts("ann@example.com")


def test_domain_of_lowercases():
    assert RecipientPolicy.domain_of("A@Example.COM") == "example.com"


def test_invalid_address():
    with pytest.raises(InvalidAddress):
        POLICY.accepts("not-an-address")
