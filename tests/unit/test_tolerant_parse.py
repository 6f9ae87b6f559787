"""Reading a file whose newest syntax this Python cannot parse."""

from __future__ import annotations

import ast

from workers.review.tolerant_parse import parse_tolerantly

# ursina 8.3: quotes reused inside an f-string (Python 3.12) on one line of the file
NESTED_QUOTES = (
    "def parse(args):\n"
    "    for token in args:\n"
    "        if token == '--':\n"
    "            return None\n"
    "        print(f'  {token} {'[required]' if token else '[optional]'}')\n"
    "    return args\n"
)


def test_the_rest_of_a_file_with_a_newer_f_string_is_read() -> None:
    tree = parse_tolerantly(NESTED_QUOTES)

    assert tree is not None
    compare = next(node for node in ast.walk(tree) if isinstance(node, ast.Compare))
    assert (compare.lineno, compare.col_offset) == (3, 11)
    (function,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert isinstance(function.body[-1], ast.Return) and function.body[-1].lineno == 6


def test_a_line_inside_brackets_is_left_blank() -> None:
    source = "x = call(\n    f'{d['a']}',\n    2,\n)\ny = 1\n"
    tree = parse_tolerantly(source)

    assert tree is not None
    assert [type(s).__name__ for s in tree.body] == ["Assign", "Assign"]


def test_a_newer_block_header_keeps_its_block_and_name() -> None:
    source = "class Box[T]:\n    def get[U](self, x: U) -> T:\n        return x\n"
    tree = parse_tolerantly(source)

    assert tree is not None
    (box,) = tree.body
    assert isinstance(box, ast.ClassDef) and box.name == "Box"
    assert isinstance(box.body[0], ast.FunctionDef) and box.body[0].name == "get"


def test_text_that_is_broken_throughout_is_not_read() -> None:
    broken = "".join(f"def f{i}(:\n    x = (\n" for i in range(20))

    assert parse_tolerantly(broken) is None
    assert parse_tolerantly("a = 1\x00\n") is None


def test_a_newer_statement_over_several_lines_stands_in_whole() -> None:
    """shap 0.54: ``def show_progress[T](`` with a parameter a line, and a ``type``
    alias written over several lines (Python 3.12)."""
    source = (
        "type Color = (\n"
        "    str  # a name\n"
        "    | tuple[float, float]\n"
        ")\n"
        "def show_progress[T](\n"
        "    iterable: T,\n"
        "    total: int = 0,  # ) not this one\n"
        ") -> T:\n"
        "    return iterable\n"
    )
    tree = parse_tolerantly(source)

    assert tree is not None
    pass_, function = tree.body
    assert isinstance(pass_, ast.Pass) and pass_.lineno == 1
    assert isinstance(function, ast.FunctionDef) and function.name == "show_progress"
    assert function.body[0].lineno == 9
