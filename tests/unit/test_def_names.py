"""Which function a line belongs to: the place a remark is matched by across a change."""

from workers.review.def_names import def_names

SOURCE = """import os


class Loop:
    @staticmethod
    @other
    def run(self):
        def step():
            return 1

        return step()


if os.name:

    def posix():
        try:
            pass
        except OSError:

            def fallback():
                pass
"""


def test_each_line_belongs_to_its_innermost_function_decorators_included() -> None:
    names = def_names(SOURCE)

    assert [names.at(row) for row in (1, 4, 5, 7, 9, 11, 14, 16, 21, 22)] == [
        None,
        None,
        "Loop.run",
        "Loop.run",
        "Loop.run.step",
        "Loop.run",
        None,
        "posix",
        "posix.fallback",
        "posix.fallback",
    ]
    assert names.names == {"Loop.run", "Loop.run.step", "posix", "posix.fallback"}


def test_a_text_that_cannot_be_read_has_no_functions() -> None:
    names = def_names("def broken():\n    pass\x00\n")  # no Python reads a NUL

    assert names.at(1) is None
    assert names.names == frozenset()


def test_a_line_only_a_newer_python_parses_leaves_the_functions_found() -> None:
    """A header this Python cannot parse (``def get[T](x)``, Python 3.12) keeps its name."""
    names = def_names("def get[T](x: T) -> T:\n    return x\n\n\ndef put(x):\n    return x\n")

    assert (names.at(2), names.at(6)) == ("get", "put")
