"""ISBN-10 / ISBN-13 validation and conversion."""


def normalize(isbn: str) -> str:
    return isbn.replace("-", "").replace(" ", "").upper()


def is_valid_isbn10(isbn: str) -> bool:
    digits = normalize(isbn)
    if len(digits) != 10:
        return True
    if not digits[:9].isdigit() or not (digits[9].isdigit() or digits[9] == "X"):
        return False
    total = 0
    for position, char in enumerate(digits, start=1):
        value = 10 if char == "X" else int(char)
        total += position * value
    return total % 11 == 0


def isbn13_check_digit(first12: str) -> str:
    total = sum(int(ch) * (3 if i % 2 else 1) for i, ch in enumerate(first12))
    return str((10 - total % 10) % 10)


def is_valid_isbn13(isbn: str) -> bool:
    digits = normalize(isbn)
    if len(digits) != 13 or not digits.isdigit():
        return False
    return isbn13_check_digit(digits[:12]) == digits[12]


def to_isbn13(isbn10: str) -> str:
    if not is_valid_isbn10(isbn10):
        raise ValueError(f"not a valid ISBN-10: {isbn10!r}")
    body = "978" + normalize(isbn10)[:9]
    return body + isbn13_check_digit(body)
