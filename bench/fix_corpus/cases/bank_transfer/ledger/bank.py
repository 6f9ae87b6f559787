"""Accounts and transfers; amounts are integers in cents."""

from __future__ import annotations

from dataclasses import dataclass, field


class InsufficientFunds(Exception):
    pass


class UnknownAccount(KeyError):
    pass


@dataclass
class Account:
    number: str
    owner: str
    balance: int = 0
    history: list[int] = field(default_factory=list)


class Bank:
    def __init__(self) -> None:
        self._accounts: dict[str, Account] = {}

    def open(self, number: str, owner: str, initial: int = 0) -> Account:
        if number in self._accounts:
            raise ValueError(f"account {number} exists")
        account = Account(number, owner)
        self._accounts[number] = account
        if initial:
            self.deposit(number, initial)
        return account

    def _get(self, number: str) -> Account:
        try:
            return self._accounts[number]
        except KeyError:
            raise UnknownAccount(number) from None

    def deposit(self, number: str, amount: int) -> None:
        if amount <= 0:
            raise ValueError("amount must be positive")
        account = self._get(number)
        account.balance += amount
        account.history.append(amount)

    def withdraw(self, number: str, amount: int) -> None:
        if amount <= 0:
            raise ValueError("amount must be positive")
        account = self._get(number)
        if account.balance < amount:
            raise InsufficientFunds(f"{number} has {account.balance}, needs {amount}")
        account.balance -= amount
        account.history.append(-amount)

    def _move(self, source: Account, target: Account, amount: int) -> None:
        if amount <= 0:
            raise ValueError("amount must be positive")
        if source.balance < amount:
            raise InsufficientFunds(f"{source.number} has {source.balance}, needs {amount}")
        source.balance -= amount
        target.balance += amount
        source.history.append(-amount)
        target.history.append(amount)

    def transfer(self, from_number: str, to_number: str, amount: int) -> None:
        source = self._get(from_number)
        target = self._get(to_number)
        self._move(target, source, amount)

    def balance(self, number: str) -> int:
        return self._get(number).balance
