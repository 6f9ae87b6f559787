from isbn import is_valid_isbn10, is_valid_isbn13, normalize, to_isbn13


def test_valid_isbn10():
    assert is_valid_isbn10("0-306-40615-2")


def test_isbn10_with_x_check_digit():
    assert is_valid_isbn10("0-8044-2957-X")


def test_isbn10_wrong_check_digit():
    assert not is_valid_isbn10("0-306-40615-3")


def test_isbn10_wrong_length():
    assert not is_valid_isbn10("12345")


def test_empty_isbn():
    assert not is_valid_isbn10("")


def test_isbn13():
    assert is_valid_isbn13("978-0-306-40615-7")
    assert not is_valid_isbn13("978-0-306-40615-8")


def test_to_isbn13():
    assert to_isbn13("0306406152") == "9780306406157"


def test_normalize():
    assert normalize(" 0-8044-2957-x ") == "080442957X"
