import pytest
from ledger.bank import Bank, InsufficientFunds, UnknownAccount


@pytest.fixture
def bank() -> Bank:
    bank = Bank()
    bank.open("A-1", "ann", 10_000)
    bank.open("B-2", "bob")
    return bank


def test_deposit_and_withdraw(bank):
    bank.deposit("B-2", 500)
    bank.withdraw("B-2", 200)
    assert bank.balance("B-2") == 300


def test_overdraw_rejected(bank):
    with pytest.raises(InsufficientFunds):
        bank.withdraw("B-2", 1)


def test_unknown_account(bank):
    with pytest.raises(UnknownAccount):
        bank.balance("Z-9")


def test_transfer_moves_money(bank):
    bank.transfer("A-1", "B-2", 3_000)
    assert (bank.balance("A-1"), bank.balance("B-2")) == (7_000, 3_000)


def test_transfer_checks_source_balance(bank):
    bank.deposit("B-2", 100_000)
    with pytest.raises(InsufficientFunds):
        bank.transfer("A-1", "B-2", 50_000)


def test_duplicate_account(bank):
    with pytest.raises(ValueError):
        bank.open("A-1", "eve")
