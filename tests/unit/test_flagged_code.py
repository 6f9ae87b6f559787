"""The code a diagnostic points at, compared without its layout."""

from __future__ import annotations

from workers.review.flagged_code import canonical_code, flagged_code


def test_a_call_spread_over_lines_reads_as_the_same_call_on_one() -> None:
    one = ["    funcopy = eval(src, dict(_wrapper_=wrapper))"]
    spread = ["    funcopy = eval(", "        src, dict(_wrapper_=wrapper),", "    )  # fenced"]

    assert flagged_code(one, (1, 15), (1, 49)) == "eval(src,dict(_wrapper_=wrapper))"
    assert flagged_code(spread, (1, 15), (3, 6)) == "eval(src,dict(_wrapper_=wrapper))"


def test_words_keep_the_space_between_them_and_strings_keep_theirs() -> None:
    assert canonical_code("not  x in  y") == "not x in y"
    assert canonical_code("eval('a  b' % x)") == 'eval("a  b"%x)'


def test_a_fragment_that_does_not_tokenize_has_its_whitespace_collapsed() -> None:
    assert canonical_code('"""unclosed  \n  text') == '"""unclosed text'


def test_a_place_outside_the_text_is_none() -> None:
    assert flagged_code(["x = 1"], (2, 1), (2, 3)) is None
    assert flagged_code(["x = 1"], (1, 1), (3, 1)) is None


def test_an_f_string_field_reads_the_same_however_it_is_spaced() -> None:
    """fugue 0.9.7: black wrote ``{frac*100}`` in an SQL f-string as ``{frac * 100}``;
    the query S608 flags is the one the team merged. The text around the fields keeps
    its spaces, and ``{{`` is no field."""
    before = canonical_code('f"SELECT * FROM {tb} SAMPLE bernoulli({frac*100} PERCENT)"')
    after = canonical_code('f"SELECT * FROM {tb} SAMPLE bernoulli({frac * 100} PERCENT)"')

    assert before == after == 'f"SELECT * FROM {tb} SAMPLE bernoulli({frac*100} PERCENT)"'
    assert canonical_code("rf'a  {{ x  }} {y:>{ width }}'") == 'rf"a  {{ x  }} {y:>{width}}"'
    assert canonical_code('"a {x + 1}"') == '"a {x + 1}"'


def test_a_string_reads_the_same_in_either_quotes() -> None:
    """ase 3.29 let its formatter turn ``eval("dict({})"`` into ``eval('dict({})'``: the
    ``eval`` S307 flags is the one the team merged. A string holding the other quote
    keeps its own."""
    single = canonical_code("eval('dict({})'.format(', '.join(args)))")
    double = canonical_code('eval("dict({})"\n    .format(", ".join(args)))')

    assert single == double == 'eval("dict({})".format(", ".join(args)))'
    assert canonical_code("f'{x}' + r'''a\"b'''") == "f\"{x}\"+r'''a\"b'''"
    assert canonical_code("'say \"hi\"'") == "'say \"hi\"'"
