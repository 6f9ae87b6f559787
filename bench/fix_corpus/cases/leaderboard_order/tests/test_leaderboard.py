import pytest
from arcade.leaderboard import Leaderboard


@pytest.fixture
def board() -> Leaderboard:
    board = Leaderboard()
    board.submit("ann", 300, 61.0)
    board.submit("bo", 120, 40.0)
    board.submit("cy", 300, 55.5)
    board.submit("di", 90, 30.0)
    return board


def test_ranking_highest_first(board):
    assert [e.player for e in board.ranking()] == ["cy", "ann", "bo", "di"]


def test_top(board):
    assert board.top(2) == ["1. cy 300", "2. ann 300"]


def test_keeps_personal_best(board):
    assert board.submit("ann", 250, 10.0) is False
    assert board.submit("ann", 300, 50.0) is True
    assert board.best("ann").seconds == 50.0


def test_invalid_run(board):
    with pytest.raises(ValueError):
        board.submit("ed", -1, 10.0)


def test_unknown_player(board):
    assert board.best("zed") is None
