from accounts.passwords import Policy, is_acceptable, problems, strength


def test_good_password():
    assert problems("Tr0ubadour-horse") == []


def test_too_short():
    assert problems("Ab1") == ["shorter than 10 characters"]


def test_needs_digit():
    assert "needs a digit" in problems("NoDigitsHereAtAll")


def test_lowercase_only_rejected():
    assert "needs upper- and lower-case letters" in problems("correcthorse42battery")


def test_uppercase_only_not_acceptable():
    assert not is_acceptable("CORRECTHORSE42")


def test_symbol_policy():
    assert problems("Abcdefgh12", Policy(require_symbol=True)) == ["needs a symbol"]


def test_strength_labels():
    assert strength("abc") == "weak"
    assert strength("Abcdefgh1") == "fair"
    assert strength("Correct-Horse-42-Battery") == "strong"
