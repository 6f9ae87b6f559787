"""Telling Python 2 code from a file that is broken."""

from __future__ import annotations

import pytest

from workers.review.python2_code import written_for_python2


@pytest.mark.parametrize(
    "source",
    [
        "p = 0L\n",
        "mask = 0xFFFFFFFFL\n",
        "mode = 0777\n",
        'print "Using extension:", flag\n',
        "print x\n",
        "exec code in namespace\n",
        "try:\n    pass\nexcept ValueError, e:\n    pass\n",
        "try:\n    pass\nexcept (KeyError, IndexError), e:\n    pass\n",
        'raise ValueError, "bad"\n',
        "text = `value`\n",
        "if a <> b:\n    pass\n",
        'pattern = ur"\\d+"\n',
        "x = 1\n\n\ndef f():\n    return 2L\n",
    ],
)
def test_first_syntax_error_on_python_2_syntax(source: str) -> None:
    assert written_for_python2(source)


@pytest.mark.parametrize(
    "source",
    [
        "x = 1\n",
        "print(x)\n",
        "def f(:\n    pass\n",
        "x = (\n",
        'x = "0L" +\n',
        "s = 'a <> b' +\n",
        "x = 1  # `0L`\ny = (\n",
        "print_function = 1 2\n",
        "x = '\x00'\n",
    ],
)
def test_other_files_are_not_python_2(source: str) -> None:
    assert not written_for_python2(source)
