"""Class bodies run in a namespace their metaclass makes (SLY's lexers and parsers)."""

from __future__ import annotations

from workers.review.class_namespaces import in_a_namespace_class, read_from_its_namespace

LEXER = (
    "from sly import Lexer\n"  # 1
    "\n"
    "\n"
    "class CalcLexer(Lexer):\n"  # 4
    "    tokens = {NAME, NUMBER}\n"  # 5
    "    NAME = r'[a-z]+'\n"  # 6
    "    NUMBER = r'[0-9]+'\n"  # 7
    "    ignore_newline = r'\\n+'\n"  # 8
    "\n"
    "    def ignore_newline(self, t):\n"  # 10
    "        return UNKNOWN\n"  # 11
)

PARSER = (
    "from sly import Parser\n"  # 1
    "\n"
    "\n"
    "class CalcParser(Parser):\n"  # 4
    "    @_('NAME ASSIGN expr')\n"  # 5
    "    def statement(self, p):\n"  # 6
    "        return p.expr\n"  # 7
    "\n"
    "    @_('expr')\n"  # 9
    "    def statement(self, p):\n"  # 10
    "        return p.expr\n"  # 11
)

ORDINARY = (
    "import functools\n"  # 1
    "\n"
    "\n"
    "class Config(Base):\n"  # 4
    "    size = LIMIT\n"  # 5
    "\n"
    "    @cached_property\n"  # 7
    "    def value(self):\n"  # 8
    "        return 1\n"  # 9
    "\n"
    "    def value(self):\n"  # 11
    "        return 2\n"  # 12
)


def test_a_name_the_body_reads_before_binding_it_comes_from_the_namespace() -> None:
    """``tokens = {NAME, NUMBER}`` would raise NameError in an ordinary class body."""
    assert read_from_its_namespace(LEXER, 5, "NAME")
    assert read_from_its_namespace(LEXER, 5, "NUMBER")


def test_a_method_body_still_looks_names_up_in_the_module() -> None:
    assert not read_from_its_namespace(LEXER, 11, "UNKNOWN")


def test_a_decorator_registering_methods_of_one_name_comes_from_the_namespace() -> None:
    assert read_from_its_namespace(PARSER, 5, "_")
    assert read_from_its_namespace(PARSER, 9, "_")


def test_a_second_definition_in_a_namespace_class_adds_to_it() -> None:
    assert in_a_namespace_class(LEXER, 10)  # the action after the token's pattern
    assert in_a_namespace_class(PARSER, 10)


def test_an_ordinary_class_keeps_its_undefined_names_and_redefinitions() -> None:
    """A forgotten import (``LIMIT``, ``cached_property``) and a method written twice."""
    assert not read_from_its_namespace(ORDINARY, 5, "LIMIT")
    assert not read_from_its_namespace(ORDINARY, 7, "cached_property")
    assert not in_a_namespace_class(ORDINARY, 11)


def test_a_name_the_module_binds_is_no_proof() -> None:
    """Read before the class rebinds it, a module's name is the module's."""
    source = "LIMIT = 3\n\n\nclass A(B):\n    size = LIMIT\n    LIMIT = 4\n"
    assert not in_a_namespace_class(source, 6)


def test_a_file_that_does_not_parse_has_no_namespace_classes() -> None:
    assert not read_from_its_namespace("class (:\n", 1, "x")
    assert not in_a_namespace_class("class (:\n", 1)
