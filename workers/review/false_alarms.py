"""Ruff remarks that do not apply to the code they are on, told by reading that code.

Ruff judges a line by its own shape and, for some rules, guesses what a name refers to.
Two guesses go wrong often enough on real projects to drown the useful remarks of a
review, and reading a little more of the file settles them:

- ``PLW0127`` (self-assignment) on a builtin: ``ExceptionGroup = ExceptionGroup`` binds
  the builtin as a module attribute, to re-export it or beside a fallback class for older
  Pythons (packaging 24.2). The rule assumes the line does nothing; for a builtin it does.
- ``S610`` (Django's ``QuerySet.extra``) on any method called ``extra``: anyio's typed
  attributes (``stream.extra(SocketAttribute.local_address)``) gave nine "high" remarks
  on one release of a project that has nothing to do with Django. Django's ``extra``
  takes SQL fragments as ``select``/``where``/``tables``/``order_by``/``params``/
  ``select_params``, or a literal dict or list in their place; a call with none of those,
  in a file that does not import Django, is another library's ``extra``.
- ``B018`` (useless expression) on an expression standing alone in the body of a
  ``try`` with an ``except``: it is there to raise. ``brotli.Decompressor.process`` under
  ``except AttributeError`` (scrapy 2.11) asks whether the installed version has it, as
  ``hasattr`` would; ``1 / 0`` under ``except Exception as e`` (sanic's tests) makes an
  exception to work with. So does a division by a literal zero anywhere: bottle's tests
  end a route handler with ``1/0`` to see the error page. And so does one alone in a
  ``with`` that expects an exception or a warning (``pytest.raises``/``warns``/
  ``deprecated_call``, unittest's ``assertRaises``/``assertWarns``): sentry-sdk's tests
  read ``Hub.current`` under ``pytest.warns`` to see the deprecation warning. The same
  holds for ``B015`` (a comparison standing alone): python-box 8's tests write
  ``with pytest.raises(TypeError): [] in bx`` to see an unhashable key refused.
- ``B018`` on an attribute read standing alone, in test code or with a comment on the
  line (a bare name too, with the comment: pottery's ``basket  # Workaround for
  Pyflakes.``): a property runs code when read, and ``channel.pool  # force sync pool creation``
  (kombu 5.7's tests) or wrapt's ``fn.__doc__`` read twice to count a factory's calls is
  the statement doing what it is there for.
- ``PLE0704`` (a bare ``raise`` outside an ``except``) under a check that an exception
  is being handled: flask's ``if error is sys.exc_info()[1]: raise`` re-raises the
  caller's exception, which is what a bare ``raise`` in a function called from an
  ``except`` block does. So does one in a function handed the exception it handles
  (a parameter ``exc``, ``error``, …, or one annotated as an exception): rq's
  ``_pubsub_exception_handler(self, exc, pubsub, pubsub_thread)``, which redis-py
  calls from its ``except`` block, re-raises what it will not retry.

- ``F401`` (unused import) in test code on an import whose ``except ImportError``
  skips the test: schedule's ``try: import pytz`` / ``except ModuleNotFoundError:
  self.skipTest("pytz unavailable")`` is ``pytest.importorskip`` written out; ruff's
  advice (``importlib.util.find_spec``) is for code that only wants to know.
- ``F401`` (unused import) in a package's ``__init__.py`` on an import from the package
  itself, relative (``from . import issue4``, ``from .core import Tree``) or by the
  package's own name: intervaltree 3.2's ``test/data/__init__.py`` imports its data
  modules so, to make them the package's attributes. That is what the file is for; ruff's
  own advice (``__all__`` or a redundant alias) only says so twice.
- ``UP026``/``UP035`` (a deprecated module or import) on an import in a ``try`` that
  catches ``ImportError``, in its body or its handler: code that works with the module
  there or not (parameterized 0.9 tries ``unittest.mock`` first and falls back to the
  ``mock`` backport, and reads the backport's version where it is installed).
- ``LOG004`` (``.exception()`` outside an exception handler) in a function handed the
  exception, as for ``PLE0704``: a Flask ``errorhandler`` (flask-cors 6's example app)
  or a Starlette exception handler is called from the framework's ``except`` block.

- ``B007`` (loop variable not used in the loop body) on a variable read after the loop:
  humanize's ``for i, s in enumerate(suffix, 2): … break`` keeps ``s`` for the return
  that follows. The rename to ``_s`` the rule asks for breaks the function.
- ``S102``/``S307`` (``exec``/``eval``) on code written as a string literal right there,
  bare or through ``compile``: bottle's ``exec(compile('def _raise(*a): raise a[0], a[1],
  a[2]', …))`` hides Python 2 syntax from Python 3's parser. The rules are about running
  code that comes from somewhere else; this comes from the author.

- ``F821`` (undefined name) in a module that defines names as it runs, through
  ``vars().update(…)``, ``globals().update(…)`` or ``globals()[name] = …``: pyparsing's
  examples make a keyword object of each word of a grammar (``NOT``, ``AND``, …) so.
  What the module defines cannot be read off its text, so no name is plainly undefined.

- ``S105`` to ``S107`` (hardcoded password) on a value that is a placeholder, as the
  credential scanner reads values: flask-wtf's example apps set ``SECRET_KEY = "secret"``.
  Nor on a value that spells its name out word for word: pydantic-extra-types' MIME type
  ``APPLICATION_VND_ETSI_TIMESTAMP_TOKEN = "application/vnd.etsi.timestamp-token"``.
- ``S704`` (unsafe ``Markup``) on markup built from a literal whose every interpolated
  value goes through ``escape()`` (an f-string or ``.format``): flask-wtf's
  ``Markup(f'<meta name="{escape(name)}" content="{escape(token)}">')`` is what the rule
  asks for.
- ``RUF001``/``RUF002``/``RUF003`` (a character that looks like an ASCII one) where no
  ASCII letter or digit touches it and it is not a letter standing alone: croniter 7's
  tests parse a cron line that starts with an Arabic-Indic five, to see it rejected;
  semver's expect an Arabic-Indic seven to read as 7; a Chinese comment is punctuated
  with fullwidth commas and colons. Ruff already leaves a word of another script alone
  (a Russian word); the slip the rules are for is a look-alike inside ASCII text (a
  Cyrillic a in "pass") or a lone letter, unless the file has words of that letter's
  script (num2words' Chechen numerals and their noun-class letters, a Cyrillic be alone).
  In a comment or a docstring (RUF002/RUF003), a character that is no letter or digit at
  all: plotext 6's comments write "length by 1" with the multiplication sign, and mean it.
  Nor on a line that names the character, by its Unicode name or its code point:
  html2text's table of Windows-1252 characters shows each one beside its name.
- ``SIM115`` (a file opened without a ``with``) on a file that goes, through a
  conditional, straight into an exit stack's ``enter_context``: pyaml 26's command line.
- ``S310`` (a URL opened with any scheme) where every address the call can open is one
  the file writes with ``http://`` or ``https://``, read through the names bound to it:
  crccheck 1.3's downloader loops over a tuple of ``https://`` addresses.
- ``RUF063`` (annotations read from a class's ``__dict__``) in a function that calls
  ``get_annotations`` too: the dict read is its fallback for older Pythons.
- ``F401`` (unused import) on a name a ``# type:`` comment uses: ruff does not read
  type comments (PEP 484's form for Python 2 and older tools), pyflakes did. sentry-sdk
  2.14 imports ``Any`` and the rest under ``TYPE_CHECKING`` for ``# type: (Any) -> None``
  and got 28 "unused import" remarks for it (of 30).
- ``F811`` (redefinition of an unused name) on a function's parameter: pytest's way to
  use a fixture defined in another module is to import it and name it as a parameter
  (gunicorn 27's tests: 44 "high" remarks on one release). A parameter only shadows the
  import inside its function; an import nothing uses is F401's remark, not this one. Nor
  is it on ``import h2.config`` after ``h2 = pytest.importorskip("h2")``: the import
  extends the module the skip returned. Nor on a function importing again what the
  module imported under the same name (pyyaml 6.0.4's build backend, ``import inspect``
  at the top and in the function that uses it): one module bound twice; the unused top
  import is F401's remark. Nor on a Gherkin step, ``@when('…') def step_impl``: behave
  and pytest-bdd find steps by their text, and behave's docs name them all ``step_impl``
  (behave 1.3's examples: two "high" remarks). Nor where both definitions are decorated
  by calls of one plain name with other arguments (multipledispatch's ``@dispatch(int)``,
  ``@dispatch(str)``): each call registers its function. A Flask route keeps it: there
  the name is the endpoint; so does a test (``@given(…) def test_x`` twice: the first
  never runs). For F821/F811 in a class body its metaclass's namespace fills (SLY's
  grammars) see workers.review.class_namespaces.
- ``UP036`` (outdated version block) on a check against a Python the project still
  supports: ruff lints for 3.7 at the oldest, so to loguru, which supports 3.5,
  ``if sys.version_info >= (3, 6):`` looks decided; on 3.5 it takes the other branch.
- ``SIM201``/``SIM202``/``SIM208``/``SIM300`` (a comparison to rewrite) and ``PLR0124``
  (a name compared with itself) in an ``assert`` of test code: babel 2.19 tests its
  ``__eq__`` and ``__ne__`` with ``assert not (message == other)`` and
  ``assert en_US == en_US``. The operator as written is what the test is about.
- ``PLR0124`` (a name compared with itself) where it tests for NaN, the one float not
  equal to itself: a word of NaN or infinity within two lines (tablib 3.10's
  ``value == value and value not in (float('inf'), …)`` under ``# non-finite as NULL``,
  the json encoder's ``if o != o: text = 'NaN'``), or an ``isinstance(x, float)``
  deciding it. Without either, ``a == a`` is the typo the rule is for.
- ``PLW1510`` (``subprocess.run`` without ``check``) on a call whose result is kept and
  its ``returncode`` read, or ``check_returncode()`` called, in the same function:
  click-repl's test asserts ``result.returncode == 0`` with the child's stderr as the
  message, which ``check=True`` would lose.
- ``RUF012`` (mutable class attribute) on one a comment calls shared, on its line or the
  line above (fsspec's ``pseudo_dirs = [""]  # shared by default``, documented: every
  instance sees one in-memory filesystem): the sharing the rule warns of is the design.
- ``DTZ`` rules (a naive datetime) where a comment on the line or just above says it is
  naive on purpose (python-docx 1.2 falls back to ``strptime`` "as naive datetime").
- ``RUF012`` (mutable class attribute) inside a nested ``class Meta``: Django's
  ``required_db_features = {...}`` and ``ordering = [...]``, DRF's ``fields = [...]``,
  factory_boy's and marshmallow's options. A framework reads them once; no instance holds
  them as state to share by mistake.
- Bandit's rules about one library's API (``S702`` Mako templates, ``S308`` Django's
  ``mark_safe``, ``S506`` PyYAML's ``load``, ``S601`` paramiko's ``exec_command``, …) in
  that library's own package: they warn the projects that use it, and said to its
  authors on its source (mako 1.4 renders its HTML traceback page with a Mako template)
  they are noise. The package is the path's first directory, or the one under ``src/``
  or ``lib/``; a module of another project that shares the name is deeper than that.
- ``S604`` (a call with a truthy ``shell`` argument) where ``shell`` is given the name of
  a shell: shtab's ``complete(parser, shell="bash")`` picks the shell to write a
  completion script for. The rule is about ``shell=True`` handing a string to a shell.
- ``PLE1300`` (an unsupported format character) in a ``str.format`` call, where the file
  defines ``__format__`` or the call is in test code: ``format`` hands the spec to the
  object's ``__format__``, and uncertainties' numbers read ``{:P}`` (pretty print) and
  ``{:L}`` (LaTeX) themselves, stanza's documents ``{:C}`` (CoNLL). Ruff knows only the
  builtin types' letters. Where a builtin got the spec, the test fails with ValueError; a
  ``%`` format has no ``__format__`` to ask and keeps the remark.
- ``RUF043`` (a ``match=`` pattern with metacharacters, neither escaped nor raw) where
  the only ones are a ``^`` at its start and a ``$`` at its end: cbor2's tests expect
  ``match="^-: "``, an error message that starts that way. An anchor says the text is a
  regular expression on purpose; the rule is about a ``.`` or ``(`` meant literally.
- ``SIM201``/``SIM202`` (``not a == b``) where a comment at the line speaks of
  ``__ne__``, ``__eq__`` or ``!=``: pyrsistent writes ``not (k2 == k)`` "to avoid
  relying on a well implemented ``__ne__``", for keys of any type.
- ``SIM118`` (``for k in d.keys()``) where the loop deletes from, or writes to, the same
  mapping: lxml-html-clean 0.4.7's ``for aname in attrib.keys(): … del attrib[aname]``
  iterates lxml's list of the keys on purpose; iterating the mapping itself, as the
  remark says, would change it under the loop.
- ``E711``/``E712`` (``== None``, ``== True``) on a comparison that is itself compared:
  bitstring 5's ``assert (a == None) is False`` asks what the class's ``__eq__`` answers
  for None; ``a is None``, as the remark says, would ask something else.
- ``DTZ901`` (``datetime.min``/``max`` without a timezone) where only a field of it is
  read: caldav 3.6's ``ts.year == datetime.min.year`` is the same year in every zone.
- ``SIM115`` (``open`` outside a ``with``) where the file is kept past its function
  (stored on an object or in a container, returned or yielded): caldav 3.6's test
  servers hold a lock file open until another method closes it.
- ``RUF009`` (a call as a dataclass default) on a call named ``field`` or ``Field`` (or
  ending so): a field specifier, which the dataclass machinery reads, as it does
  ``dataclasses.field``. desert's ``desert.field(NaiveDateTime())`` returns a
  ``dataclasses.field`` carrying marshmallow metadata.
- ``B015`` (a comparison standing alone) that pipes a value into a call with ``|``,
  ``>>``, ``&``: an assertion library's overloaded operators at work (grappa's tests:
  ``error | should.raise_error(AssertionError) > should.equal('foo')``).
- ``F821`` (undefined name) in a string that is a value of a ``Literal[...]`` ruff does
  not know as typing's (defopt's tests: ``defopt.Literal[1, "a"]``, "undefined name
  ``a``"): a value, not a forward reference.
- ``S301`` (``pickle.load``) on data the same function pickled itself before, with the
  same module (``pickle.loads(pickle.dumps(x))``, or a ``pickle.dump`` to a file the
  function then reads back): anytree 2.13's test of pickling support writes a tree to a
  file in ``tmp_path`` and loads it again. The rule is about data from elsewhere.
- ``B904`` (``raise`` in an ``except`` without ``from``) on an exception a command line
  prints as its message alone: argparse's ``ArgumentTypeError`` in a ``type=`` converter
  (webvtt-py 0.6), click's ``BadParameter``, ``SystemExit``. No traceback shows the chain.
  Nor in a ``with pytest.raises(…)``, where the chain is what the test looks at
  (exceptiongroup's tests of ``__context__``).

And these are right about the code but wrong about its weight:

- ``F821`` (undefined name) inside a string annotation, a forward reference: pyramid
  2.1's tutorial models write ``Mapped[List['Page']]`` with ``Page`` in another module,
  which SQLAlchemy's registry resolves by name. Nothing fails until a type checker or
  ``get_type_hints`` reads it: minor, not "high".

- ``RUF012`` (mutable class attribute) on an attribute nothing in its file changes in
  place (no ``.append``/``.update``/… on it, no item assigned, no ``+=``): declarative
  data a framework or the class reads, pygments' ``aliases = ['bitbake']`` in every
  lexer, arrow's locale tables, babel's command options (42 candidates on eight of
  the releases read on 2026-12-06). The shared-state bug the rule is about needs a
  change in place; where there is none in the file, the remark is minor.

- ``S506`` (unsafe ``yaml.load``) with a ``Loader`` of the project's own, a name it did
  not import from ``yaml`` or a call (omegaconf's ``get_yaml_loader()`` builds a subclass
  of ``BaseLoader`` in another module): ruff names every loader but PyYAML's safe ones,
  without seeing what this one derives from. Worth a look (minor), not an "important"
  remark that the code loads arbitrary objects.

- ``ISC001`` (two string literals side by side on one line) is medium because it is
  usually a missing comma (``["a" "b", "c"]``). Where the text runs on across the split,
  a space or a line break at it (``"Cannot set {key} " f"due to {value}"``, marshmallow;
  ``"Successful " "Response"``, fastapi), it is one sentence a formatter joined onto one
  line: a minor remark (combine them), not a likely bug. So is a pair formatted whole
  with ``%`` or ``.format`` (isodate's regex pieces): one template. And so is an
  f-string beside a plain literal, or a raw one beside one with escapes (pycparser's
  lexer patterns): two kinds that cannot be one literal as written. And so is a pair in
  a value joined over several lines (pyelftools' tests write a frame's bytes an
  instruction per line, ``b'\\x0e\\x0c' b'\\x41'``): written in pieces on purpose.

- ``S324`` (md5 or sha1) where the digest is cut to a few characters
  (``md5(url).hexdigest()[:8]``, plotext 6's download cache): a name for something,
  which protects nothing and is not meant to. Minor: ``usedforsecurity=False`` says so,
  and FIPS builds of OpenSSL refuse md5 without it. A whole digest in a function that
  names nothing a hash protects (no password, token, signature, salt, session) is a
  fingerprint, xhtml2pdf's font files told apart: a warning, not "important".

- ``SIM115`` (``open`` outside a ``with``) in the ``if __name__ == "__main__":`` block:
  a script's one run, whose files the interpreter's exit closes (hexdump's command
  line). Minor, as in test code; so is a file the function closes in a ``finally``
  (textfsm's ``/dev/tty``, or stdin when there is none, which no ``with`` can say).

- ``B007`` (loop variable unused) on a loop over a ``range``: "do this n times" (ping3's
  tests' ``for round_idx in range(num_rounds):``), or on one of several names a loop
  unpacks while it reads another (pefile's ``for root, dirs, files in os.walk(d):``),
  or on a loop that only counts its items (minio's tests' ``for bucket in buckets:
  count += 1``) or drains them (``pass``); minor, where a loop over data that reads none
  of its names may be a bug.

- ``PLR1704`` (an argument rebound) by a ``with`` or ``for`` whose own expression reads
  it (asyncclick's ``with _pager_contextmanager(color=color) as (…, color):``): the
  caller's value resolved to the one to use, on purpose; or under ``if name is None:``
  (camelot 2's ``with playa.open(…) as pdf:`` when no open PDF was passed), where it
  supplies what the caller left out. Minor.

- ``B006`` (mutable default) on a parameter the function only reads (py-cpuinfo 9's
  ``acceptable_values={}``, only looked up): minor, as nothing changes the shared value.

- ``S202`` (``tarfile.extractall``) in the fallback of a version check whose other
  branch extracts with ``filter=`` (nodeenv 1.12): minor; the safe call is made where it
  exists.

- ``F811`` on an import of what the first import already bound (``import re`` twice,
  pykwalify 1.8): minor, delete the copy; nothing is lost, as it is when a function is
  defined over another.

- ``RET503`` (falling off the end after returning a value) where the function ends with
  an ``if`` that only asks whether a value is there and returns from it (ntlm-auth's
  ``if self._authenticate_message: return …``): the None that falls out is the answer.
  Minor, where ``if x > 0: … elif x < 0: …`` may have left a case out.

- ``ISC001`` (two literals side by side) that together are a hex digest's length
  (requests-ntlm's SHA-256 wrapped by a formatter): one value. Minor.

- ``E711``/``E712`` on an array's comparison used as a mask (xarray's ``dates[~(dates ==
  None)]``): numpy compares element by element, which ``is None`` would not. No remark.

- ``SIM103`` (return the condition directly) on the last of a run of ``if …: return``
  cases (pylint-django's ``_is_interpolated_string``): folded, it reads unlike the
  cases before it. No remark.

- ``RUF001`` (ambiguous character in a string) on a dash or another sign in a string
  that is a sentence (optax's "Complex Newton<en dash>Schulz did not …"): typed on
  purpose, as in a docstring. No remark.

- ``B006`` (mutable default) on a parameter named as a cache (matplotlib's
  ``_cache=weakref.WeakKeyDictionary()``, a ``memo={}``): one store kept across calls is
  what it is for. No remark.

- ``S105`` (hardcoded password) on a string compared with a name that its function
  compares with three different strings or more (lizard's readers classify a lexer's
  ``token`` as ``'else'``, ``'if'``, ``'for'``): a kind being told apart, not a secret
  being checked. No remark.

- ``PLE0605`` (``__all__`` not a list or tuple) on a slice of another module's
  ``__all__`` (metpy's ``__all__ = aws.__all__[:]``): a copy of a list. No remark.

- ``S104`` (binding to all interfaces) on ``"0.0.0.0"`` compared with (volatility3's
  socket scan drops rows whose ``src == "0.0.0.0"``): an address read, none bound. No
  remark.

- ``S108`` (hard-coded temporary path) given to a container's ``tmpfs=`` or
  ``working_dir=`` (mlflow's job containers): the container's own /tmp. No remark.

- ``B020`` (loop variable replaces its iterable) on ``for i in range(i, n)`` (sympy's
  ``ddm.py``): the range is built once, from where ``i`` stopped. No remark.

- ``B018`` (useless expression) standing alone at the top level of an example script
  (scikit-image's gallery shows ``bad_tform``): sphinx-gallery and notebooks display a
  cell's last value. No remark.

- ``S102`` (``exec``) of a file named on the command line (``sys.argv``, an
  ``argparse`` result): diagrams' CLI runs the scripts its user names, as ``python
  path`` would. Minor (``runpy.run_path`` is the tidier way), not a security alarm.

- ``RET501`` (``return None`` where nothing else is returned) that is the whole body of
  its function (cartopy's tests' stand-in for a font's ``get_sfnt_table``): the
  stand-in's result is its point. No remark.

- ``PLW0108`` (a lambda that only calls a function) on one lambda of a list, tuple, set
  or dict of lambdas (zarr's tests' parametrized builders): inlined, it would read unlike
  the items beside it. No remark.

- ``B905`` (``zip`` without ``strict=``) of two sequences the code just checked to be as
  long as each other (gql's ``elif … and len(b1) == len(b2):``, an ``assert``, a guard
  that raises), or both built item for item from the same sequence (ezdxf's
  ``[line.base_point for line in self.pattern.lines]`` zipped with those lines, a
  ``map(f, xs)``, great-tables' ``lhs`` and ``rhs`` each appended to once per value of
  one loop), or rows one expression builds alike, transposed (flax's
  ``zip(*(nnx.split(b) for b in layers))``): ``strict=True`` would check it again. No
  remark.

- ``PLE0303``-``PLE0309`` (``__len__``, ``__bool__``, ``__index__``, ``__str__``,
  ``__bytes__``, ``__hash__`` returning the wrong type) in a class a test defines inside
  itself (nltk's ``class Wrong`` whose ``__str__`` returns 42, to see ``safe_print`` fail
  closed): a test double built to break the protocol. No remark.

- ``F811`` (redefinition of an unused name) on a function decorated by a call that also
  decorates two definitions of that name or more which the change left alone
  (owlready2's rply grammar, where every production is ``def f(p)`` under
  ``@pg.production("…")``): the decorator keeps each function, and the file already
  runs so. No remark.

- ``SIM300`` (Yoda condition) on a comparison that starts with a capital name its
  function binds as a variable (timm's ``O, I, J, K = conv_weight.shape`` then ``if I >
  base_chans``): ruff takes capitals for constants. No remark; a capital name set to a
  literal, or the module's, is a constant and keeps it. Nor is the lower bound of a
  range check in two comparisons (xgboost's ``(0 <= idx) & (idx < n)``, written so
  because arrays do not chain comparisons): it reads as in ``0 <= idx < n``.

- ``DTZ001``/``DTZ005``/``DTZ006`` (a naive ``datetime``) bound to a name that the
  function then makes aware (mike's ``when = datetime.now()`` … ``when =
  when.astimezone()``, or a ``.replace(tzinfo=…)`` returned). No remark.

- ``F722`` (a forward annotation that does not parse) on a value of ``Literal[…]``
  imported from a module ruff cannot follow (colour-science's ``colour.hints``): the
  strings are values, not references. No remark.

- ``PLE1205`` (too many arguments for a logging format) on a logger the module imports
  from elsewhere, given a message of ``{}`` fields, one per argument
  (scikit-build-core's own ``_logging.logger`` formats with ``str.format``): ruff takes
  every logger for the standard library's. No remark; a ``logging.getLogger`` logger
  given braces keeps it.

- ``B039`` (mutable ``ContextVar`` default) and ``B008`` (a call in a default) making an
  instance of a class the module defines as immutable, a NamedTuple or a frozen
  dataclass (sqlfluff's ``ContextVar("_worker_state", default=_WorkerState(None,
  True))``, replaced with ``_replace``, never changed): no remark.

- ``S608`` (SQL built from strings) on a text that only becomes a message: an
  exception's, a warning's or a log call's argument, directly or through a name used
  for nothing else (polars' ``"delete from an Iceberg v{version} table is not supported
  yet"``, raised as ``NotImplementedError``). No remark.
"""

from __future__ import annotations

import ast
import builtins
import codecs
import contextlib
import functools
import io
import re
import string
import tokenize
import unicodedata
from collections.abc import Collection, Iterator
from typing import TypeVar

from workers.review.secrets_scan import name_words
from workers.review.tolerant_parse import parse_tolerantly
from workers.review.version_guards import int_tuple

__all__ = [
    "DJANGO_EXTRA_KEYWORDS",
    "LIBRARY_RULES",
    "a_local_variable_first",
    "a_path_in_a_container",
    "a_range_bound",
    "a_symbol_in_a_sentence",
    "among_lambdas",
    "an_immutable_instance",
    "byte_offset",
    "called_name",
    "changes_what_it_iterates",
    "closed_in_a_finally",
    "compared_elementwise",
    "compared_not_bound",
    "compared_with_many",
    "compares_with_a_supported_python",
    "copies_another_all",
    "counts_its_items",
    "counts_on_from_itself",
    "defines_names_at_run_time",
    "escapes_every_value",
    "formats_with_braces",
    "formats_with_its_own_spec",
    "formatted_as_one",
    "harmless_redefinition",
    "in_a_lazy_annotation",
    "in_a_literal_type",
    "in_a_local_class",
    "in_a_meta_class",
    "in_a_string",
    "in_an_assert",
    "in_its_own_script",
    "in_the_librarys_own_package",
    "in_type_comments",
    "joins_two_kinds",
    "keyword_strings",
    "lengths_checked_equal",
    "loads_with_its_own_loader",
    "loop_variable_read_after",
    "made_aware_later",
    "mutated_nowhere_in_the_file",
    "names_a_shell",
    "not_djangos_extra",
    "one_value_over_lines",
    "only_a_message",
    "only_anchored",
    "only_returns_none",
    "own_nodes",
    "parse_source",
    "raised_where_expected",
    "raises_a_usage_message",
    "raises_on_purpose",
    "reads_a_property",
    "reexported_by_its_package",
    "registered_like_the_rest",
    "reraises_a_handled_exception",
    "result_thrown_away",
    "return_code_read",
    "returns_when_there",
    "runs_a_file_the_user_names",
    "runs_code_written_here",
    "said_to_be_naive",
    "said_to_be_shared",
    "said_why_not_ne",
    "self_assigned_builtin",
    "shared_on_purpose",
    "split_inside_a_sentence",
    "splits_a_digest",
    "stands_at_module_level",
    "string_at",
    "strings_on",
    "the_last_of_several_cases",
    "unpacked_beside_used_names",
]

_SELF_ASSIGNED = re.compile(r"Self-assignment of variable `(\w+)`")
_REDEFINED = re.compile(r"Redefinition of unused `([\w.]+)` from line (\d+)")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# One string literal on one line: prefix, quote, body (escapes kept as written).
_LITERAL = re.compile(
    r"""(?P<prefix>[rRbBuUfFtT]{0,2})(?P<q>\"\"\"|'''|"|')(?P<body>(?:\\.|(?!(?P=q)).)*?)(?P=q)"""
)
_RUNS_ON_END = re.compile(r"(?:\s|\\[nrt])$")
_RUNS_ON_START = re.compile(r"^(?:\s|\\[nrt])")
_IMPORTS_DJANGO = re.compile(r"^[ \t]*(?:from|import)[ \t]+django\b", re.MULTILINE)
DJANGO_EXTRA_KEYWORDS = frozenset(
    {"select", "where", "params", "tables", "order_by", "select_params"}
)


def self_assigned_builtin(message: str, newer_builtins: frozenset[str] = frozenset()) -> bool:
    """Whether ruff's PLW0127 ``message`` is about a builtin (of this Python, or one of
    ``newer_builtins``, added after it)."""
    match = _SELF_ASSIGNED.search(message)
    return match is not None and (
        match.group(1) in newer_builtins or hasattr(builtins, match.group(1))
    )


def not_djangos_extra(source: str, row: int) -> bool:
    """Whether every ``.extra(...)`` call on ``row`` is plainly not Django's: the file
    does not import Django and no such call passes Django's arguments. A file that does
    not parse, or a row without such a call, keeps the remark."""
    if _IMPORTS_DJANGO.search(source):
        return False
    calls = [
        call
        for call in _calls_on(source, row)
        if isinstance(call.func, ast.Attribute) and call.func.attr == "extra"
    ]
    return bool(calls) and not any(_djangos_shape(call) for call in calls)


def _calls_on(source: str, row: int) -> list[ast.Call]:
    """The calls whose text spans ``row`` (none in a file that does not parse)."""
    tree = parse_source(source)
    return (
        [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and node.lineno <= row <= (node.end_lineno or node.lineno)
        ]
        if tree is not None
        else []
    )


def _djangos_shape(call: ast.Call) -> bool:
    if any(k.arg in DJANGO_EXTRA_KEYWORDS or k.arg is None for k in call.keywords):
        return True  # ``**kwargs`` may hold them too
    return any(
        isinstance(a, ast.Dict | ast.List | ast.Tuple | ast.Starred | ast.DictComp)
        for a in call.args
    )


def raises_on_purpose(source: str, row: int) -> bool:
    """Whether ``row`` holds an expression standing alone as a statement directly in the
    body of a ``try`` that has an ``except`` (not only a ``finally``), or one that divides
    by a literal zero."""
    tree = parse_source(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and _on_row(node, row) and _divides_by_zero(node.value):
            return True
        if (
            isinstance(node, ast.With | ast.AsyncWith)
            and any(_expects_a_raise(item.context_expr) for item in node.items)
            and any(isinstance(s, ast.Expr) and _on_row(s, row) for s in _statements(node.body))
        ):
            return True  # at any depth: omegaconf's ``if access == "attr": c.missng``
        if not isinstance(node, ast.Try | ast.TryStar) or not node.handlers:
            continue
        for statement in node.body:
            if isinstance(statement, ast.Expr) and _on_row(statement, row):
                return True
    return False


def reads_a_property(source: str, row: int, in_tests: bool) -> bool:
    """Whether ``row`` holds an attribute read standing alone as a statement, in test code
    or with a comment after it on its line (``channel.pool  # force pool creation``) or on
    the line just above it (django-q2's "Ensure that the cluster starts only if the
    SECRET_KEY is set" over ``settings.SECRET_KEY``); or
    a bare name with such a comment (pottery's tests: ``basket  # Workaround for
    Pyflakes.``, the name used so a linter stops calling it unused)."""
    tree = parse_source(source)
    lines = source.splitlines()
    if tree is None or not 0 < row <= len(lines):
        return False
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Attribute | ast.Name)
            and node.lineno == row
            and node.end_lineno == row
        ):
            after = lines[row - 1].encode("utf-8")[node.end_col_offset or 0 :]
            commented = after.decode("utf-8", "replace").lstrip().startswith("#")
            above = row > 1 and lines[row - 2].lstrip().startswith("#")
            attribute = isinstance(node.value, ast.Attribute)
            return commented or (attribute and (in_tests or above))
    return False


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of ``body`` and of the blocks nested in it, not in functions or
    classes defined there (their code runs elsewhere)."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(statement, field, None) or [])
        for handler in getattr(statement, "handlers", None) or []:
            yield from _statements(handler.body)
        for case in getattr(statement, "cases", None) or []:
            yield from _statements(case.body)


_EXPECTS_A_RAISE = frozenset(
    {
        "raises",
        "warns",
        "deprecated_call",
        "assertRaises",
        "assertRaisesRegex",
        "assertWarns",
        "assertWarnsRegex",
    }
)


def _expects_a_raise(expression: ast.expr) -> bool:
    if not isinstance(expression, ast.Call):
        return False
    return called_name(expression.func) in _EXPECTS_A_RAISE


def _on_row(node: ast.stmt, row: int) -> bool:
    return node.lineno <= row <= (node.end_lineno or node.lineno)


def _divides_by_zero(expression: ast.expr) -> bool:
    return (
        isinstance(expression, ast.BinOp)
        and isinstance(expression.op, ast.Div | ast.FloorDiv | ast.Mod)
        and isinstance(expression.right, ast.Constant)
        and expression.right.value == 0
    )


_HANDLED_NOW = frozenset({"exc_info", "exception"})  # sys.exc_info(), sys.exception()


def reraises_a_handled_exception(source: str, row: int) -> bool:
    """Whether the bare ``raise`` on ``row`` runs only while an exception is handled: it
    sits under an ``if`` whose test asks ``sys.exc_info()`` or ``sys.exception()``, or in
    a function that is handed the exception (see the module docstring)."""
    tree = parse_source(source)
    if tree is None:
        return False
    under_a_check = (
        inner
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _asks_for_handled(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
    )
    if any(_bare_raise_on(inner, row) for inner in under_a_check):
        return True
    return any(_bare_raise_on(inner, row) for inner in ast.walk(tree)) and _in_a_handler(tree, row)


def reraises_an_outer_exception(source: str, row: int) -> bool:
    """Whether the ``raise name`` on ``row`` raises the exception a handler around it
    caught (``except TypeError as exc:`` … ``raise exc``, from a nested handler):
    python-socketio 5.18 tries a second signature and, when that fails too, raises the
    first error again. Ruff's B904 asks for ``from``; there is no new exception to chain,
    and one raised in the handler that caught it already passes."""
    tree = parse_source(source)
    if tree is None:
        return False
    parents = _parent_map(tree)
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Raise)
            and node.lineno == row
            and isinstance(node.exc, ast.Name)
            and node.cause is None
        ):
            continue
        around = parents.get(node)
        while around is not None:
            if isinstance(around, ast.ExceptHandler) and around.name == node.exc.id:
                return True
            if isinstance(around, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                break
            around = parents.get(around)
    return False


def _bare_raise_on(node: ast.AST, row: int) -> bool:
    return isinstance(node, ast.Raise) and node.exc is None and node.lineno == row


def _in_a_handler(tree: ast.Module, row: int) -> bool:
    """Whether ``row`` is in the body of a function handed an exception (see
    :func:`_handed_an_exception`): one a framework calls from its ``except`` block."""
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and _handed_an_exception(node.args)
        and node.body[0].lineno <= row <= (node.end_lineno or node.lineno)
        for node in ast.walk(tree)
    )


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
_SKIPS = frozenset({"skip", "skipTest", "SkipTest", "importorskip"})


def skips_without_it(source: str, row: int) -> bool:
    """Whether the import on ``row`` stands in a ``try`` whose ``except ImportError``
    skips the test (``self.skipTest``, ``pytest.skip``, ``raise SkipTest``): the test's
    check that a dependency is there, ``pytest.importorskip`` written out (schedule's
    ``try: import pytz`` / ``except ModuleNotFoundError: self.skipTest(...)``)."""
    tree = parse_source(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try) or not any(
            isinstance(s, ast.Import | ast.ImportFrom) and _on_row(s, row) for s in node.body
        ):
            continue
        for handler in node.handlers:
            caught = [] if handler.type is None else list(ast.walk(handler.type))
            if any(called_name(n) in _IMPORT_ERRORS for n in caught) and any(
                called_name(n) in _SKIPS for s in handler.body for n in ast.walk(s)
            ):
                return True
    return False


def guarded_by_import_error(source: str, row: int) -> bool:
    """Whether the import on ``row`` stands in a ``try`` (its body or a handler's) that
    catches ``ImportError``: code written for the module being there or not, such as
    parameterized 0.9's ``try: from unittest import mock`` / ``except ImportError:
    import mock``, and its ``try: import mock as _mock_backport`` to read the backport's
    own version. "Use ``unittest.mock``" (UP026) is what such code already does first."""
    tree = parse_source(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try) or not any(
            h.type is not None and any(called_name(n) in _IMPORT_ERRORS for n in ast.walk(h.type))
            for h in node.handlers
        ):
            continue
        blocks = [node.body, *(h.body for h in node.handlers)]
        if any(
            isinstance(s, ast.Import | ast.ImportFrom) and _on_row(s, row)
            for block in blocks
            for s in block
        ):
            return True
    return False


def logs_a_handled_exception(source: str, row: int) -> bool:
    """Whether the ``.exception()`` call on ``row`` is in a function handed the exception
    it logs (see the module docstring): flask-cors 6's example
    ``@app.errorhandler(500) def server_error(e: Exception)`` runs inside Flask's
    ``except`` block, where ``logging.exception`` has the traceback to log."""
    tree = parse_source(source)
    return tree is not None and _in_a_handler(tree, row)


_EXCEPTION_PARAMETERS = frozenset(
    {"e", "ex", "exc", "err", "error", "exception", "exc_value", "exc_val"}
)
_EXCEPTION_TYPE = re.compile(r"(?:\w+\.)*(?:BaseException|\w*Exception|\w*Error)")


def _handed_an_exception(args: ast.arguments) -> bool:
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        if arg.arg in _EXCEPTION_PARAMETERS:
            return True
        if arg.annotation is not None and _EXCEPTION_TYPE.fullmatch(ast.unparse(arg.annotation)):
            return True
    return False


_NAMESPACES = frozenset({"vars", "globals", "locals"})


def defines_names_at_run_time(source: str) -> bool:
    """Whether the module writes into its own namespace: ``vars().update(…)`` (also
    ``globals()``/``locals()``) or an assignment to ``globals()[…]``."""
    tree = parse_source(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("update", "setdefault")
            and _namespace(node.func.value)
        ):
            return True
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and _namespace(node.value)
        ):
            return True
    return False


def _namespace(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _NAMESPACES
        and not node.args
    )


_TYPE_COMMENT = re.compile(r"#\s*type:(?!\s*ignore\b)\s*(.+)")
_IMPORTED = re.compile(r"`([\w.]+)` imported but unused")


def in_type_comments(source: str, message: str) -> bool:
    """Whether the import ruff's F401 ``message`` names is used in a ``# type:`` comment:
    by the name it binds (``Any`` of ``typing.Any``) or written out (``sentry_sdk.consts``)."""
    match = _IMPORTED.search(message)
    if match is None or "type:" not in source:
        return False
    qualified = match.group(1)
    names = {qualified, qualified.rsplit(".", 1)[-1]}
    text = _type_comments(source)
    return any(re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) for name in names)


@functools.lru_cache(maxsize=16)
def _type_comments(source: str) -> str:
    comments: list[str] = []
    # extend keeps what was read before an error: it still counts
    with contextlib.suppress(tokenize.TokenError, SyntaxError, ValueError):
        comments.extend(
            token.string
            for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type == tokenize.COMMENT
        )
    return "\n".join(m.group(1) for c in comments if (m := _TYPE_COMMENT.match(c)))


def in_a_string(source: str, row: int, column: int) -> bool:
    """Whether ``column`` (1-based, characters) of ``row`` lies inside a string literal."""
    lines = source.splitlines()
    if not 0 < row <= len(lines):
        return False
    code = lines[row - 1].lstrip()
    offset = column - 1 - (len(lines[row - 1]) - len(code))  # in the line without its indent
    with contextlib.suppress(tokenize.TokenError, SyntaxError, IndentationError):
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if (
                token.type == tokenize.STRING
                and token.start[0] == token.end[0] == 1
                and token.start[1] < offset < token.end[1]
            ):
                return True
    return False


def in_a_lazy_annotation(source: str, row: int, column: int) -> bool:
    """Whether the name at ``row``/``column`` stands in an annotation of a module that
    says ``from __future__ import annotations``: never evaluated at run time, only read
    by type checkers and ``typing.get_type_hints`` (soda-core's ``measurement_values:
    MeasurementValues``, the class imported inside the function that needs it)."""
    found = _node_at(source, row, column, ast.Name)
    if found is None:
        return False
    node, tree, parents = found
    if not any(
        isinstance(statement, ast.ImportFrom)
        and statement.module == "__future__"
        and any(alias.name == "annotations" for alias in statement.names)
        for statement in tree.body
    ):
        return False
    child: ast.AST = node
    holder = parents.get(node)
    while holder is not None and not isinstance(holder, ast.stmt | ast.arg):
        child, holder = holder, parents.get(holder)
    return (
        (isinstance(holder, ast.arg) and child is holder.annotation)
        or (isinstance(holder, ast.FunctionDef | ast.AsyncFunctionDef) and child is holder.returns)
        or (isinstance(holder, ast.AnnAssign) and child is holder.annotation)
    )


_SHARED = re.compile(r"(?i)\bshared?\b|\bglobal\b|\bclass[- ](?:level|wide)\b")
_COMMENT = re.compile(r"#[^'\"]*$")  # a comment with no quote after its "#"


def said_to_be_shared(source: str, row: int) -> bool:
    """Whether the comment on ``row``, or a comment line just above it, says the value is
    shared (``# shared by default``, ``# class-level registry``, ``# global cache``)."""
    return any(_SHARED.search(text) for text in _comments_at(source, row, 1))


_NAIVE = re.compile(r"(?i)\bnaive\b|\blocal[ -]?time\b|\bwall[ -]clock\b|\bno (?:tz|timezone)\b")


def said_to_be_naive(source: str, row: int) -> bool:
    """Whether a comment on ``row`` or on the two lines above it says the datetime is
    naive on purpose (python-docx 1.2: ``# -- fall-back to parsing as naive datetime --``
    over its ``strptime``)."""
    return any(_NAIVE.search(text) for text in _comments_at(source, row, 2))


_NOT_NE = re.compile(r"__ne__|__eq__|!=")


def said_why_not_ne(source: str, row: int) -> bool:
    """Whether a comment on ``row`` or on the two lines above it speaks of ``__ne__``,
    ``__eq__`` or ``!=``: ``not (a == b)`` written so on purpose. pyrsistent 0.20:
    ``# Use `not (k2 == k)` rather than `!=` to avoid relying on a well implemented
    `__ne__`, see #268.`` (keys of any type, some defining ``__eq__`` alone)."""
    return any(_NOT_NE.search(text) for text in _comments_at(source, row, 2))


_DODGES_A_CHECKER = re.compile(
    r"(?i)\b(?:mypy|pyright|pyre|pytype|ty|type[ -]?check(?:er|ers|ing)?|"
    r"unresolved-attribute|attr-defined|dynamic(?:ally)?)\b"
)


def said_to_dodge_a_type_checker(source: str, row: int) -> bool:
    """Whether the comment on ``row``, or a comment line of the two above it, says why a
    constant attribute goes through ``getattr``/``setattr`` (B009, B010): a type checker
    that would reject the plain attribute, or an attribute set dynamically on purpose.
    litecli 1.17: ``# self.formatter.litecli = self, ty raises unresolved-attribute,
    hence use dynamic assignment`` over ``setattr(self.formatter, "litecli", self)``. A
    comment trailing the line above speaks of that line, not this one."""
    said = _comments_at(source, row, 2, comment_lines_only=True)
    return any(_DODGES_A_CHECKER.search(text) for text in said)


def reached_only_by_name(source: str, row: int) -> bool:
    """Whether every ``getattr``/``setattr`` with a constant name on ``row`` (B009,
    B010) stands in an annotated function and names an attribute the file never reaches
    or defines any other way: an attribute its class does not declare, written by name
    so the type checker lets it be. pymunk 7.3.1's tests set ``"observed"`` on a
    ``Space`` this way and read it back with ``getattr`` seven times."""
    tree = parse_source(source)
    if tree is None:
        return False
    functions = _functions_around(tree, row)
    if not functions or not _annotated(functions[-1]):
        return False
    names = [
        node.args[1].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and node.lineno == row
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "setattr")
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ]
    known = _attribute_names(tree)
    return bool(names) and all(name not in known for name in names)


def _annotated(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return function.returns is not None or any(a.annotation is not None for a in every)


def _names_set_by(statement: ast.stmt) -> list[str]:
    """The plain names an assignment or an annotated assignment sets (none for others)."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign):
        targets = [statement.target]
    else:
        targets = []
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _class_attributes_on(tree: ast.Module, row: int) -> list[str]:
    """The names a class body's assignment on ``row`` sets."""
    return [
        name
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for statement in node.body
        if isinstance(statement, ast.Assign | ast.AnnAssign) and _on_row(statement, row)
        for name in _names_set_by(statement)
    ]


def _attribute_names(tree: ast.Module) -> set[str]:
    """Every name the module reaches as an attribute (``x.name``) or defines in a
    class: a function, an assignment or an annotation of its body."""
    names = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for statement in node.body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(statement.name)
            names.update(_names_set_by(statement))
    return names


def major_checked_too(source: str, row: int) -> bool:
    """Whether every ``sys.version_info`` minor compared on ``row`` (YTT203, YTT204) is
    compared only where the major is known to be 3: after ``major == 3 and`` in one
    condition, or under an ``if`` on it. aiosql 15's tests assert
    ``sys.version_info.major == 3 and sys.version_info.minor < 14``, which Python 4
    cannot get wrong."""
    tree = parse_source(source)
    if tree is None:
        return False
    parents = _parent_map(tree)
    minors = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        and node.lineno == row
        and any(_version_part(n) == 1 for n in [node.left, *node.comparators])
    ]
    return bool(minors) and all(_under_major_three(node, parents) for node in minors)


def _version_part(node: ast.AST) -> int | None:
    """0 for ``sys.version_info.major``/``[0]``, 1 for ``.minor``/``[1]``, else None."""
    if isinstance(node, ast.Attribute) and _is_version_info(node.value):
        return {"major": 0, "minor": 1}.get(node.attr)
    if isinstance(node, ast.Subscript) and _is_version_info(node.value):
        index = node.slice
        if isinstance(index, ast.Constant) and isinstance(index.value, int):
            return index.value if index.value in (0, 1) else None
    return None


def _is_version_info(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "version_info") or (
        isinstance(node, ast.Name) and node.id == "version_info"
    )


def _major_is_three(test: ast.AST) -> bool:
    """``sys.version_info.major == 3`` (or ``[0] == 3``), alone or among ``and``-ed tests."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_major_is_three(value) for value in test.values)
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and 0 in (_version_part(test.left), _version_part(test.comparators[0]))
        and any(
            isinstance(side, ast.Constant) and side.value == 3
            for side in (test.left, test.comparators[0])
        )
    )


def _under_major_three(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether a test of the major being 3 decides that ``node`` is evaluated at all."""
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
            for value in parent.values:  # the tests ``and``-ed before this one
                if value is child:
                    break
                if _major_is_three(value):
                    return True
        if isinstance(parent, ast.If) and child in parent.body and _major_is_three(parent.test):
            return True
        child, parent = parent, parents.get(parent)
    return False


def _comments_at(
    source: str, row: int, above: int, *, comment_lines_only: bool = False
) -> list[str]:
    """The comment on ``row`` and the comments among the ``above`` lines before it (a
    comment line, or a line's trailing comment; with ``comment_lines_only``, only the
    comment lines right above ``row``, as a trailing comment speaks of its own line)."""
    lines = source.splitlines()
    if not 0 < row <= len(lines):
        return []
    numbers = [row]
    for number in range(row - 1, max(row - above, 1) - 1, -1):
        if comment_lines_only and not lines[number - 1].lstrip().startswith("#"):
            break
        numbers.append(number)
    found = []
    for number in sorted(numbers):
        comment = _COMMENT.search(lines[number - 1])
        if comment is not None:
            found.append(comment.group())
    return found


def in_a_meta_class(source: str, row: int) -> bool:
    """Whether ``row`` is an assignment directly in the body of a class named ``Meta``
    that is nested in another class."""
    tree = parse_source(source)
    if tree is None:
        return False
    for outer in ast.walk(tree):
        if not isinstance(outer, ast.ClassDef):
            continue
        for meta in outer.body:
            if not (isinstance(meta, ast.ClassDef) and meta.name == "Meta"):
                continue
            for statement in meta.body:
                if isinstance(statement, ast.Assign | ast.AnnAssign) and _on_row(statement, row):
                    return True
    return False


def _scopes(source: str) -> list[ast.Module | ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module and every function in it (none for a file that does not parse)."""
    tree = parse_source(source)
    if tree is None:
        return []
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def loop_variable_read_after(source: str, row: int, name: str) -> bool:
    """Whether the ``for`` loop whose target on ``row`` binds ``name`` is followed, in the
    same function (or module), by a read of ``name``: the loop's last value is used."""
    for scope in _scopes(source):
        for loop in own_nodes(scope):
            if (
                isinstance(loop, ast.For | ast.AsyncFor)
                and loop.target.lineno <= row <= (loop.target.end_lineno or row)
                and _binds(loop.target, name)
            ):
                after = loop.end_lineno or loop.lineno
                return any(
                    isinstance(node, ast.Name)
                    and node.id == name
                    and isinstance(node.ctx, ast.Load)
                    and node.lineno > after
                    for node in ast.walk(scope)
                )
    return False


def own_nodes(scope: ast.AST, skip: tuple[type[ast.AST], ...] = ()) -> list[ast.AST]:
    """The nodes of ``scope`` that are not inside a function or class defined in it, nor
    inside a node of the ``skip`` types (lambdas, comprehensions: they bind their own)."""
    stop = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, *skip)
    found: list[ast.AST] = []
    pending = list(ast.iter_child_nodes(scope))
    while pending:
        node = pending.pop()
        found.append(node)
        if not isinstance(node, stop):
            pending.extend(ast.iter_child_nodes(node))
    return found


def _binds(target: ast.expr, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target))


_OPENS_URLS = frozenset({"urlopen", "Request", "urlretrieve"})
_WEB_SCHEMES = ("http://", "https://")


def opens_web_addresses_only(source: str, row: int) -> bool:
    """Whether every ``urlopen``/``Request``/``urlretrieve`` call on ``row`` (S310) opens an
    address this file writes with an ``http(s)://`` scheme, through the names bound to it:
    crccheck 1.3's downloader loops ``for url in urls`` over a tuple of ``https://``
    addresses. Ruff leaves a literal address alone but does not follow a name; a
    parameter, or any binding it cannot read, keeps the remark."""
    tree = parse_source(source)
    calls = [
        call
        for call in _calls_on(source, row)
        if called_name(call.func) in _OPENS_URLS and call.lineno == row
    ]
    if tree is None or not calls:
        return False
    scopes = _lookup_scopes(tree, row)
    parents = _parent_map(tree)
    return all(
        bool(call.args) and _a_web_address(call.args[0], scopes, parents, 4) for call in calls
    )


def _parent_map(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _located(
    source: str, row: int, column: int
) -> tuple[ast.Module, int, dict[ast.AST, ast.AST]] | None:
    """The parsed source, the ``col_offset`` of ruff's ``row``/``column`` and each
    node's parent; None when the source does not parse or has no such place."""
    tree = parse_source(source)
    offset = byte_offset(source, row, column)
    if tree is None or offset is None:
        return None
    return tree, offset, _parent_map(tree)


_Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef


def _a_web_address(
    node: ast.expr, scopes: list[_Scope], parents: dict[ast.AST, ast.AST], depth: int
) -> bool:
    """Whether ``node`` is an ``http(s)://`` address, reading names in ``scopes``
    (innermost first, as Python looks them up)."""
    if depth < 0:
        return False
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.lower().startswith(_WEB_SCHEMES)
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        inner = first.value if isinstance(first, ast.FormattedValue) else first
        return _a_web_address(inner, scopes, parents, depth - 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return _a_web_address(node.left, scopes, parents, depth - 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "format" and _a_web_address(
            node.func.value, scopes, parents, depth - 1
        )
    if isinstance(node, ast.Name):
        values = _values_bound(node.id, scopes, parents)
        return bool(values) and all(
            v is not None and _a_web_address(v, scopes, parents, depth - 1) for v in values
        )
    return False


def _values_bound(
    name: str, scopes: list[_Scope], parents: dict[ast.AST, ast.AST], *, iterated: bool = False
) -> list[ast.expr | None]:
    """What each binding of ``name`` in the innermost of ``scopes`` that binds it gives
    it (None: one this cannot read, a parameter, an import, an augmented assignment): an
    assignment's value, or each element of the literal a ``for`` loop iterates, directly
    or through a name (``iterated``: what the loop iterates, whatever it is)."""
    for scope in scopes:
        values: list[ast.expr | None] = []
        for node in own_nodes(scope):
            if (isinstance(node, ast.arg) and node.arg == name) or (
                isinstance(node, ast.alias) and (node.asname or node.name).split(".")[0] == name
            ):
                values.append(None)
            elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                holder = parents.get(node)
                if isinstance(holder, ast.Assign | ast.AnnAssign) and holder.value is not None:
                    values.append(holder.value)
                elif isinstance(holder, ast.For | ast.comprehension) and holder.target is node:
                    if iterated:
                        values.append(holder.iter)
                    else:
                        values.extend(_elements_iterated(holder.iter, scopes, parents))
                else:
                    values.append(None)
        if values:
            return values
    return []


def _elements_iterated(
    node: ast.expr, scopes: list[_Scope], parents: dict[ast.AST, ast.AST]
) -> list[ast.expr | None]:
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return list(node.elts) or [None]
    if isinstance(node, ast.Name):
        found: list[ast.expr | None] = []
        for value in _values_bound(node.id, scopes, parents):
            if isinstance(value, ast.Tuple | ast.List | ast.Set) and value.elts:
                found.extend(value.elts)
            else:
                found.append(None)
        return found or [None]
    return [None]


_RUNS_CODE = frozenset({"exec", "eval"})


def runs_code_written_here(source: str, row: int) -> bool:
    """Whether every ``exec``/``eval`` call on ``row`` runs a string literal, bare or
    passed through ``compile``. A row with no such call keeps the remark."""
    calls = [
        call
        for call in _calls_on(source, row)
        if isinstance(call.func, ast.Name) and call.func.id in _RUNS_CODE
    ]
    return bool(calls) and all(_literal_code(call) for call in calls)


def _literal_code(call: ast.Call) -> bool:
    if not call.args:
        return False
    code = call.args[0]
    if (
        isinstance(code, ast.Call)
        and isinstance(code.func, ast.Name)
        and code.func.id == "compile"
        and code.args
    ):
        code = code.args[0]
    return isinstance(code, ast.Constant) and isinstance(code.value, str | bytes)


def _asks_for_handled(test: ast.expr) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in _HANDLED_NOW
                and isinstance(func.value, ast.Name)
                and func.value.id == "sys"
            ) or (isinstance(func, ast.Name) and func.id == "exc_info"):
                return True
    return False


def harmless_redefinition(source: str, row: int, message: str) -> bool:
    """Whether ruff's F811 ``message`` on ``row`` is a parameter or a function's local
    named like the unused import (a pytest fixture taken in; PyX 0.18's ``otffile =
    OTFfile(data)`` beside ``from . import otffile``), the name was first bound by
    ``importorskip``, a
    function imports again what the module imported under that name, the function is
    a Gherkin step its decorator registers by its text, or the first definition is an
    ``@overload`` signature (``overload`` from a project's own typing module)."""
    found = _redefinition(source, message)
    if found is None:
        return False
    tree, name, first = found
    if _an_overload_at(tree, name, first):
        return True  # a signature, through a project's own typing module (awkward's)
    imported = _imports_binding(tree, name)
    if imported.get(first) is not None and imported.get(first) == _imported_in_a_function(
        tree, row, name
    ):
        return True  # the same module again, for the function's own use
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name == name
            and node.lineno <= row <= (node.body[0].lineno if node.body else row)
            and not name.startswith("test")  # hypothesis' @given on a test
            and any(_registers_a_step(d) for d in node.decorator_list)
        ):
            return True  # found by its step text, not its name
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name == name
            and node.lineno <= row <= (node.body[0].lineno if node.body else row)
            and not name.startswith("test")
            and _registered_both_times(tree, node, first)
        ):
            return True  # each definition is kept by the call that decorates it
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            arguments = node.args
            every = [
                *arguments.posonlyargs,
                *arguments.args,
                *arguments.kwonlyargs,
                *(a for a in (arguments.vararg, arguments.kwarg) if a is not None),
            ]
            if any(a.arg == name and a.lineno == row for a in every):
                return True
            if imported.get(first) is not None and _binds_locally(node, name, row):
                return True  # PyX's ``otffile = OTFfile(data)``: the module's name untouched
        elif isinstance(node, ast.Assign) and node.lineno == first:
            call = node.value
            if isinstance(call, ast.Call) and called_name(call.func) == "importorskip":
                return True
    return False


def registered_like_the_rest(source: str, row: int, message: str, added: Collection[int]) -> bool:
    """Whether ruff's F811 ``message`` on ``row`` is a function decorated by a call that
    also decorates two definitions or more of the same name on lines the change left
    alone (owlready2's rply grammar: every production is ``def f(p)`` under
    ``@pg.production("…")``). The file already relies on that decorator keeping what it
    decorates, and runs; Flask's ``@app.route``, which refuses a second view of one name,
    never gets that far. Tests are left out: a test run under a decorator that keeps it
    would not be found by its name."""
    found = _redefinition(source, message)
    if found is None:
        return False
    tree, name, _first = found
    if name.startswith("test"):
        return False
    definitions = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
    ]
    later = next(
        (node for node in definitions if _decorated_start(node) <= row <= node.lineno), None
    )
    if later is None:
        return False
    callees = {ast.dump(d.func) for d in later.decorator_list if isinstance(d, ast.Call)}
    kept = [
        node
        for node in definitions
        if node is not later
        and not any(r in added for r in range(_decorated_start(node), node.lineno + 1))
        and any(
            isinstance(d, ast.Call) and ast.dump(d.func) in callees for d in node.decorator_list
        )
    ]
    return len(kept) >= 2


def _decorated_start(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return min((d.lineno for d in node.decorator_list), default=node.lineno)


def _an_overload_at(tree: ast.Module, name: str, first: int) -> bool:
    """Whether the definition of ``name`` on line ``first`` is decorated ``@overload``,
    whatever module the name comes from: awkward imports it from ``awkward._typing``,
    which ruff cannot follow to ``typing.overload``."""
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name == name
        and first in (node.lineno, *(d.lineno for d in node.decorator_list))
        and any(called_name(d) == "overload" for d in node.decorator_list)
        for node in ast.walk(tree)
    )


def _binds_locally(function: ast.AST, name: str, row: int) -> bool:
    """Whether ``function``'s own body (not a nested function's) binds ``name`` on
    ``row`` with no ``global`` for it: a local, which leaves the module's name as it was."""
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    nodes = own_nodes(function, (ast.Lambda, ast.comprehension))
    if any(isinstance(n, ast.Global | ast.Nonlocal) and name in n.names for n in nodes):
        return False
    return any(
        isinstance(n, ast.Name)
        and n.id == name
        and isinstance(n.ctx, ast.Store)
        and n.lineno == row
        for n in nodes
    )


# Decorators that register a Gherkin step by its text (behave, pytest-bdd, radish): the
# function's name is never looked up, and ``step_impl`` is what behave's docs call them all.
_STEP_DECORATORS = frozenset({"given", "when", "then"})


def _registered_both_times(
    tree: ast.Module, later: ast.FunctionDef | ast.AsyncFunctionDef, first: int
) -> bool:
    """Whether the definition on line ``first`` and ``later`` are each decorated by a call
    of the same plain name with other arguments: multipledispatch's ``@dispatch(int)`` and
    ``@dispatch(str)`` register two implementations, and the name left bound is the
    dispatcher. A decorator reached through an attribute (Flask's ``@app.route``) or a
    test (``@given``, ``@pytest.mark…``: the first test would never run) stays a remark."""
    earlier = next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name == later.name
            and first in (node.lineno, *(d.lineno for d in node.decorator_list))
        ),
        None,
    )
    if earlier is None:
        return False
    calls = {
        d.func.id: ast.dump(d)
        for d in earlier.decorator_list
        if isinstance(d, ast.Call) and isinstance(d.func, ast.Name)
    }
    return any(
        isinstance(d, ast.Call)
        and isinstance(d.func, ast.Name)
        and d.func.id in calls
        and calls[d.func.id] != ast.dump(d)
        for d in later.decorator_list
    )


def _registers_a_step(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Call) and (
        (called_name(decorator.func) or "").lower() in _STEP_DECORATORS
    )


def _imported_as(node: ast.Import | ast.ImportFrom, name: str) -> str | None:
    """What the import statement ``node`` binds to ``name``: ``os.path`` for ``import
    os.path`` (bound as ``os``), ``.mod.x`` for ``from .mod import x``; None if nothing."""
    for alias in node.names:
        bound = alias.asname or alias.name.split(".")[0]
        if bound != name and alias.name != name:
            continue
        if isinstance(node, ast.Import):
            return alias.name
        return f"{'.' * node.level}{node.module or ''}.{alias.name}"
    return None


def _imported_in_a_function(tree: ast.AST, row: int, name: str) -> str | None:
    """What an import on ``row`` inside a function binds to ``name``, or None."""
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import | ast.ImportFrom) and node.lineno == row:
                return _imported_as(node, name)
    return None


def called_name(func: ast.AST) -> str | None:
    """The name a call, a raise or an ``except`` names: ``f``, or ``…f`` (``x.f``)."""
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def loads_with_its_own_loader(source: str, row: int) -> bool:
    """Whether every ``….load(…)`` call spanning ``row`` is given a ``Loader`` that is
    neither ``yaml.X`` nor a name imported from ``yaml``."""
    tree = parse_source(source)
    if tree is None:
        return False
    from_yaml = {"yaml"}  # the module's own names, and the names taken from it
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "yaml":
            from_yaml.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            from_yaml.update(a.asname for a in node.names if a.name == "yaml" and a.asname)
    loads = [
        call
        for call in _calls_on(source, row)
        if called_name(call.func) == "load" and (len(call.args) >= 2 or call.keywords)
    ]
    loaders = [
        (call.args[1] if len(call.args) >= 2 else None)
        or next((k.value for k in call.keywords if k.arg == "Loader"), None)
        for call in loads
    ]
    return bool(loaders) and all(
        loader is not None and not _yaml_name(loader, from_yaml) for loader in loaders
    )


def _yaml_name(node: ast.expr, from_yaml: set[str]) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in from_yaml


_MUTATING_METHODS = frozenset(
    {
        "append", "appendleft", "extend", "extendleft", "insert", "remove", "pop",
        "popleft", "popitem", "clear", "update", "add", "discard", "setdefault",
        "sort", "reverse", "__setitem__", "__delitem__", "difference_update",
        "intersection_update", "symmetric_difference_update",
    }
)  # fmt: skip


def mutated_nowhere_in_the_file(source: str, row: int) -> bool:
    """Whether the class attribute assigned on ``row`` (in a class body) is never changed
    in place anywhere in the file through an attribute of its name (``self.x.append``,
    ``cls.x[k] = v``, ``Klass.x += …``). False when ``row`` is no such assignment."""
    tree = parse_source(source)
    if tree is None:
        return False
    names = set(_class_attributes_on(tree, row))
    if not names:
        return False
    for node in ast.walk(tree):
        changed: ast.expr | None = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            changed = node.func.value if node.func.attr in _MUTATING_METHODS else None
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            changed = node.value
        elif isinstance(node, ast.AugAssign):
            changed = node.target
        if isinstance(changed, ast.Attribute) and changed.attr in names:
            return False
    return True


def return_code_read(source: str, row: int) -> bool:
    """Whether the ``subprocess.run(…)`` on ``row`` is assigned to a name whose
    ``returncode`` the same function (or module) reads, or whose ``check_returncode()``
    it calls, after the call; or whose result the function returns, leaving the exit
    status to its caller."""
    for scope in _scopes(source):
        for node in _statements(scope.body):
            if not (
                isinstance(node, ast.Assign | ast.AnnAssign | ast.Return)
                and _on_row(node, row)
                and isinstance(node.value, ast.Call)
                and called_name(node.value.func) == "run"
            ):
                continue
            if isinstance(node, ast.Return):
                return True
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            after = node.end_lineno or node.lineno
            return any(
                _reads_the_exit_status(use, names) and use.lineno > after
                for use in ast.walk(scope)
                if isinstance(use, ast.Attribute | ast.Return)
            )
    return False


def _reads_the_exit_status(node: ast.Attribute | ast.Return, names: set[str]) -> bool:
    """``x.returncode``, ``x.check_returncode`` or ``return x`` for a name in ``names``."""
    if isinstance(node, ast.Attribute) and node.attr in ("returncode", "check_returncode"):
        return isinstance(node.value, ast.Name) and node.value.id in names
    return (
        isinstance(node, ast.Return) and isinstance(node.value, ast.Name) and node.value.id in names
    )


def names_a_shell(source: str, row: int) -> bool:
    """Whether every call on ``row`` given a ``shell`` keyword gives it a string: the name
    of a shell, not a switch to run a command line through one."""
    given = [k.value for call in _calls_on(source, row) for k in call.keywords if k.arg == "shell"]
    return bool(given) and all(
        isinstance(v, ast.Constant) and isinstance(v.value, str) for v in given
    )


def formats_with_its_own_spec(source: str, row: int, column: int, in_tests: bool) -> bool:
    """Whether the format at ``row``/``column`` is a ``str.format`` call handing its spec
    to an object that may read it itself: the file defines ``__format__``, or the call
    is in test code (stanza's ``"{:C}".format(doc)`` writes a document as CoNLL; a spec
    nothing reads fails the test on its first run)."""
    tree = parse_source(source)
    offset = byte_offset(source, row, column)
    if tree is None or offset is None:
        return False
    if not any(
        isinstance(call.func, ast.Attribute)
        and call.func.attr == "format"
        and isinstance(call.func.value, ast.Constant)
        and isinstance(call.func.value.value, str)
        and (call.lineno, call.col_offset) == (row, offset)
        for call in _calls_on(source, row)
    ):
        return False
    defines = any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "__format__"
        for node in ast.walk(tree)
    )
    return defines or in_tests


_REGEX_METACHARACTERS = frozenset(".^$*+?{}[]\\|()")


def only_anchored(source: str, row: int, column: int) -> bool:
    """Whether the string at ``row``/``column`` has no regular expression metacharacter
    but a leading ``^`` and a trailing ``$``, and at least one of those."""
    tree = parse_source(source)
    offset = byte_offset(source, row, column)
    if tree is None or offset is None:
        return False
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and (node.lineno, node.col_offset) == (row, offset)
        ):
            inner = node.value.removeprefix("^")
            inner = inner[:-1] if inner.endswith("$") and not inner.endswith("\\$") else inner
            return inner != node.value and not _REGEX_METACHARACTERS.intersection(inner)
    return False


_MUTATORS = frozenset({"pop", "popitem", "clear", "update", "setdefault", "__delitem__"})


def changes_what_it_iterates(source: str, row: int) -> bool:
    """Whether a ``for`` loop over ``m.keys()`` starting on ``row`` deletes from ``m``,
    writes a key of it or calls one of its mutating methods in its body."""
    tree = parse_source(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.For | ast.AsyncFor)
            and node.lineno == row
            and isinstance(node.iter, ast.Call)
            and isinstance(node.iter.func, ast.Attribute)
            and node.iter.func.attr == "keys"
        ):
            continue
        mapping = ast.dump(node.iter.func.value)
        for inner in (n for stmt in node.body for n in ast.walk(stmt)):
            if isinstance(inner, ast.Subscript) and isinstance(inner.ctx, ast.Del | ast.Store):
                if ast.dump(inner.value) == mapping:
                    return True
            elif (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Attribute)
                and inner.func.attr in _MUTATORS
                and ast.dump(inner.func.value) == mapping
            ):
                return True
    return False


def escapes_every_value(source: str, row: int) -> bool:
    """Whether each ``Markup(…)`` call on ``row`` is given an f-string, or a literal's
    ``.format(…)``, whose every interpolated value is an ``escape(…)`` call."""
    marks = [c for c in _calls_on(source, row) if called_name(c.func) == "Markup" and c.args]
    return bool(marks) and all(_escaped_text(call.args[0]) for call in marks)


def _escaped_text(node: ast.expr) -> bool:
    if isinstance(node, ast.JoinedStr):
        values = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        values = [*node.args, *(k.value for k in node.keywords)]
    else:
        return False
    return all(isinstance(v, ast.Call) and called_name(v.func) == "escape" for v in values)


def strings_on(source: str, row: int) -> list[str]:
    """The string literals that start on ``row`` (none in a file that does not parse)."""
    tree = parse_source(source)
    if tree is None:
        return []
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.lineno == row
    ]


_Node = TypeVar("_Node", bound=ast.AST)


def _node_at(
    source: str, row: int, column: int, kind: type[_Node]
) -> tuple[_Node, ast.Module, dict[ast.AST, ast.AST]] | None:
    """The ``kind`` of node that starts at ruff's ``row``/``column``, the parsed source and
    each node's parent; None when there is none."""
    located = _located(source, row, column)
    if located is None:
        return None
    tree, offset, parents = located
    for node in ast.walk(tree):
        if isinstance(node, kind) and (
            getattr(node, "lineno", None),
            getattr(node, "col_offset", None),
        ) == (row, offset):
            return node, tree, parents
    return None


def _constant_at(
    source: str, row: int, column: int
) -> tuple[ast.Constant, ast.Module, dict[ast.AST, ast.AST]] | None:
    """The literal that starts at ruff's ``row``/``column`` (see :func:`_node_at`)."""
    return _node_at(source, row, column, ast.Constant)


def string_at(source: str, row: int, column: int) -> str | None:
    """The string literal that starts at ruff's ``row``/``column``, if one does."""
    found = _constant_at(source, row, column)
    return found[0].value if found is not None and isinstance(found[0].value, str) else None


MANY_CASES = 3  # distinct strings a name is compared with before it is a kind, not a secret


def compared_with_many(source: str, row: int, column: int) -> bool:
    """Whether the string at ``row``/``column`` (S105 on ``token == "else"``) is compared
    with a name that its function (or module) compares with ``MANY_CASES`` different
    strings or more: lizard's readers classify a lexer's ``token`` as ``'else'``,
    ``'if'``, ``'for'``; a secret is checked against one value."""
    found = _constant_at(source, row, column)
    if found is None:
        return False
    node, tree, parents = found
    compare = parents.get(node)
    if not isinstance(compare, ast.Compare):
        return False
    names = [side.id for side in (compare.left, *compare.comparators) if isinstance(side, ast.Name)]
    return len(names) == 1 and (
        len(_strings_compared_with(names[0], _innermost_scope(tree, row))) >= MANY_CASES
    )


def _strings_compared_with(name: str, scope: ast.AST) -> set[str]:
    """The string literals ``scope`` compares ``name`` with (``==``, ``!=``, ``in`` a
    literal tuple, list or set)."""
    found: set[str] = set()
    for node in ast.walk(scope):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if not any(isinstance(side, ast.Name) and side.id == name for side in sides):
            continue
        for side in sides:
            items = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
            found.update(
                item.value
                for item in items
                if isinstance(item, ast.Constant) and isinstance(item.value, str)
            )
    return found


def keyword_strings(source: str, row: int, name: str) -> list[str]:
    """The string literals passed as the keyword argument ``name`` on ``row``."""
    tree = parse_source(source)
    if tree is None:
        return []
    return [
        node.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.keyword)
        and node.arg == name
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and node.value.lineno == row
    ]


def in_an_assert(source: str, row: int) -> bool:
    """Whether ``row`` is part of an ``assert`` statement."""
    tree = parse_source(source)
    return tree is not None and any(
        isinstance(node, ast.Assert) and node.lineno <= row <= (node.end_lineno or node.lineno)
        for node in ast.walk(tree)
    )


def _the_name_bound(statement: ast.AST | None) -> str | None:
    """The one name an assignment ``name = …`` binds; None for anything else."""
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        return statement.targets[0].id
    return None


def made_aware_later(source: str, row: int, column: int) -> bool:
    """Whether the naive ``datetime`` call ruff's DTZ rule puts at ``row``/``column`` is
    bound to a name that its function then makes aware: ``name.astimezone()`` or
    ``name.replace(tzinfo=…)`` bound to that name again, or returned (mike's ``when =
    datetime.now()`` … ``if not when.tzinfo: when = when.astimezone()``)."""
    found = _node_at(source, row, column, ast.Call)
    if found is None:
        return False
    call, tree, parents = found
    name = _the_name_bound(parents.get(call))
    if name is None:
        return False
    scope = _innermost_scope(tree, row)
    for node in own_nodes(scope):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
            and (
                node.func.attr == "astimezone"
                or (node.func.attr == "replace" and any(k.arg == "tzinfo" for k in node.keywords))
            )
        ):
            continue
        user = parents.get(node)
        while user is not None and not isinstance(user, ast.stmt):
            user = parents.get(user)
        if isinstance(user, ast.Return) or (
            isinstance(user, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in user.targets)
        ):
            return True
    return False


def result_thrown_away(source: str, row: int) -> bool:
    """Whether the statement on ``row`` is an expression whose value nothing keeps: alone,
    or bound to ``_``. In a test, an operator run for its own sake (pikepdf's threading
    tests run ``_ = d == d`` on many threads to see ``__eq__`` survive)."""
    tree = parse_source(source)
    return tree is not None and any(
        isinstance(node, ast.stmt)
        and node.lineno == row
        and (
            isinstance(node, ast.Expr)
            or (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "_"
            )
        )
        for node in ast.walk(tree)
    )


def compares_a_comparison(source: str, row: int, column: int) -> bool:
    """Whether the comparison with ``None``/``True``/``False`` at ``row``, ``column`` (ruff's,
    1-based) is itself compared: ``assert (a == None) is False`` (bitstring 5's tests)
    checks what ``__eq__`` answers for None, which ``a is None`` would not ask."""
    tree = parse_source(source)
    offset = byte_offset(source, row, column)
    if tree is None or offset is None:
        return False
    for outer in ast.walk(tree):
        if not isinstance(outer, ast.Compare):
            continue
        for operand in (outer.left, *outer.comparators):
            # ruff places E711 at the singleton, E712 at the comparison's start
            if isinstance(operand, ast.Compare) and any(
                (part.lineno, part.col_offset) == (row, offset)
                and (
                    part is operand
                    or (
                        isinstance(part, ast.Constant)
                        and any(part.value is singleton for singleton in (None, True, False))
                    )
                )
                for part in (operand, operand.left, *operand.comparators)
            ):
                return True
    return False


def compared_elementwise(source: str, row: int, column: int) -> bool:
    """Whether the comparison with ``None``/``True``/``False`` at ``row``, ``column``
    (ruff's, 1-based) is an array's, element by element: used as a mask (``data[data ==
    None] = ""``), inverted with ``~``, or assigned to a name used so (xarray 2026.9's
    ``none_position = dates == None`` then ``dates[~none_position]``). ``dates is None``,
    as the remark says, asks whether the array itself is None."""
    located = _located(source, row, column)
    if located is None:
        return False
    tree, offset, parents = located
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or not any(
            (part.lineno, part.col_offset) == (row, offset)
            for part in (node, node.left, *node.comparators)
        ):
            continue
        if _used_as_a_mask(node, parents):
            return True
        parent = parents.get(node)
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
            target = parent.targets[0]
            if isinstance(target, ast.Name):
                return any(
                    isinstance(use, ast.Name)
                    and use.id == target.id
                    and isinstance(use.ctx, ast.Load)
                    and _used_as_a_mask(use, parents)
                    for use in ast.walk(tree)
                )
    return False


def lengths_checked_equal(source: str, row: int, column: int) -> bool:
    """Whether the ``zip(a, b)`` at ``row``/``column`` (B905: no ``strict=``) zips what
    the code just checked to be as long as each other: inside ``if len(a) == len(b):``
    (gql 4.4's tests, as part of an ``and``), or after ``assert len(a) == len(b)`` or
    ``if len(a) != len(b): raise …`` (or ``return``) earlier in an enclosing block;
    or both are built item for item from the same sequence (see
    :func:`_one_per_item_of`); or ``zip(*rows)`` transposes
    rows one expression builds alike (flax's ``zip(*(nnx.split(b) for b in layers))``).
    ``strict=True`` would check it again."""
    located = _located(source, row, column)
    if located is None:
        return False
    tree, offset, parents = located
    for call in ast.walk(tree):
        if (
            isinstance(call, ast.Call)
            and (call.lineno, call.col_offset) == (row, offset)
            and called_name(call.func) == "zip"
            and len(call.args) == 1
            and isinstance(call.args[0], ast.Starred)
        ):
            return _rows_built_alike(call.args[0].value)
        if not (
            isinstance(call, ast.Call)
            and (call.lineno, call.col_offset) == (row, offset)
            and called_name(call.func) == "zip"
            and len(call.args) >= 2
            and not any(isinstance(a, ast.Starred) for a in call.args)
        ):
            continue
        scopes = _lookup_scopes(tree, row)
        if len({_one_per_item_of(a, scopes, parents) for a in call.args}) == 1:
            return True
        if len(call.args) > 2:
            continue
        first, second = call.args
        if _index_arrays_of_one_call(first, second, scopes, parents):
            return True
        pair = frozenset(ast.dump(a) for a in call.args)
        child: ast.AST = call
        parent = parents.get(call)
        while parent is not None:
            if (
                isinstance(parent, ast.If | ast.While)
                and child in parent.body
                and _says_equal_lengths(parent.test, pair, ast.Eq)
            ):
                return True
            for field in ("body", "orelse", "finalbody"):
                block = getattr(parent, field, None)
                if (
                    isinstance(block, list)
                    and child in block
                    and any(_checks_lengths(s, pair) for s in block[: block.index(child)])
                ):
                    return True
            child, parent = parent, parents.get(parent)
    return False


def the_last_of_several_cases(source: str, row: int) -> bool:
    """Whether the ``if`` on ``row`` (SIM103: return its condition directly) follows, in
    the same block, another ``if`` whose body returns: a run of cases, each tested and
    answered in turn (pylint-django's ``_is_interpolated_string``). Folded into a
    ``return``, the last case reads unlike the ones before it."""
    tree = parse_source(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for index, statement in enumerate(block):
                if isinstance(statement, ast.If) and statement.lineno == row:
                    return any(
                        isinstance(earlier, ast.If) and isinstance(earlier.body[-1], ast.Return)
                        for earlier in block[:index]
                    )
    return False


def compared_not_bound(source: str, row: int, column: int) -> bool:
    """Whether the string at ``row``/``column`` (S104: ``"0.0.0.0"``) is compared with,
    directly or as an item of the collection compared: volatility3's socket scan drops
    rows whose ``src == "0.0.0.0"``. It reads an address; nothing binds to it."""
    found = _constant_at(source, row, column)
    if found is None:
        return False
    node, _, parents = found
    holder = parents.get(node)
    if isinstance(holder, ast.Tuple | ast.List | ast.Set):
        holder = parents.get(holder)
    return isinstance(holder, ast.Compare)


# Keyword arguments whose paths are a container's (docker-py, testcontainers, podman):
# mlflow's jobs mount ``tmpfs={"/tmp": ""}``, a fresh memory-backed /tmp of their own.
# (Not ``volumes=``: docker-py's keys there are the host's paths, mounted in.)
_CONTAINER_PATHS = frozenset({"tmpfs", "working_dir", "workdir"})


def a_path_in_a_container(source: str, row: int, column: int) -> bool:
    """Whether the string at ``row``/``column`` (S108: a hard-coded temporary path) is
    given, alone or inside a dict or list, to a keyword argument that names a container's
    paths: the container's /tmp, not the host's shared one."""
    found = _constant_at(source, row, column)
    if found is None:
        return False
    node, _, parents = found
    holder = parents.get(node)
    while isinstance(holder, ast.Dict | ast.List | ast.Tuple | ast.Set):
        holder = parents.get(holder)
    return isinstance(holder, ast.keyword) and holder.arg in _CONTAINER_PATHS


def counts_on_from_itself(source: str, row: int) -> bool:
    """Whether the ``for`` on ``row`` (B020: its variable replaces what it iterates) loops
    over a ``range`` built from that variable: sympy's ``for i in range(i, rows):`` goes
    on from where ``i`` stopped, and the range is built once, before the first step."""
    tree = parse_source(source)
    return tree is not None and any(
        isinstance(node, ast.For)
        and node.lineno == row
        and isinstance(node.iter, ast.Call)
        and called_name(node.iter.func) == "range"
        for node in ast.walk(tree)
    )


def only_a_message(source: str, row: int, column: int) -> bool:
    """Whether the text ruff's S608 puts at ``row``/``column`` only ever becomes a
    message: the argument of an exception, a warning or a log call, directly or through
    a name used for nothing else. polars 2.2: ``msg = f"delete from an Iceberg
    v{version} table is not supported yet"`` then ``raise NotImplementedError(msg)``;
    ruff reads "delete from" as SQL, but no database runs an error message."""
    located = _located(source, row, column)
    if located is None:
        return False
    tree, offset, parents = located
    at = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr | ast.BinOp | ast.Call | ast.Constant)
        and (node.lineno, node.col_offset) == (row, offset)
    ]
    if not at:
        return False
    text = max(at, key=lambda node: (node.end_lineno or 0, node.end_col_offset or 0))
    holder = parents.get(text)
    if _a_message_to(holder, text):
        return True
    name = _the_name_bound(holder)
    if name is None:
        return False
    uses = [
        node
        for node in own_nodes(_innermost_scope(tree, row))
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
    ]
    return bool(uses) and all(_a_message_to(parents.get(use), use) for use in uses)


# What a call that only shows its text is called: logging's and warnings' functions.
_SHOWS_A_MESSAGE = frozenset(
    {"warn", "debug", "info", "warning", "error", "exception", "critical", "log", "fail"}
)


def _a_message_to(call: ast.AST | None, argument: ast.expr) -> bool:
    """Whether ``argument`` is handed to ``call`` as a message: an exception's or a
    warning's constructor, or a logging or ``warnings.warn`` call."""
    if not isinstance(call, ast.Call) or argument not in call.args:
        return False
    name = called_name(call.func) or ""
    return (
        name in _SHOWS_A_MESSAGE
        or bool(_EXCEPTION_TYPE.fullmatch(name))
        or name.endswith("Warning")
    )


def an_immutable_instance(source: str, row: int, column: int) -> bool:
    """Whether the call ruff puts at ``row``/``column`` (a default: B008, B039) makes an
    instance of a class this module defines as immutable: a NamedTuple (a class or
    ``namedtuple(…)``) or a frozen dataclass. sqlfluff's worker state is a NamedTuple
    each worker replaces (``state._replace(…)``); one shared instance is as safe as a
    tuple. Ruff knows frozen dataclasses for B008 only, and NamedTuples for neither."""
    found = _node_at(source, row, column, ast.Call)
    if found is None:
        return False
    call, tree, _parents = found
    name = called_name(call.func)
    return name is not None and name in _immutable_classes(tree)


def _immutable_classes(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and (
            any(called_name(base) == "NamedTuple" for base in node.bases)
            or any(_frozen_dataclass(d) for d in node.decorator_list)
        ):
            names.add(node.name)
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and called_name(node.value.func) in ("namedtuple", "NamedTuple")
        ):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _frozen_dataclass(decorator: ast.expr) -> bool:
    return (
        isinstance(decorator, ast.Call)
        and called_name(decorator.func) == "dataclass"
        and any(
            k.arg == "frozen" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in decorator.keywords
        )
    )


def in_a_local_class(source: str, row: int) -> bool:
    """Whether ``row`` is in a class defined inside a function: in a test, a double
    made for that test alone (nltk's ``class Wrong`` with a ``__str__`` returning 42)."""
    tree = parse_source(source)
    return tree is not None and any(
        isinstance(node, ast.ClassDef) and node.lineno <= row <= (node.end_lineno or node.lineno)
        for function in _functions_around(tree, row)
        for node in ast.walk(function)
    )


def formats_with_braces(source: str, row: int, column: int) -> bool:
    """Whether the logging call ruff's PLE1205 (too many arguments) puts at
    ``row``/``column`` goes to a logger the module imports from elsewhere (the project's
    own), with a message of ``{}`` fields, one per argument, and no ``%`` conversion:
    scikit-build-core's ``_logging.logger`` formats with ``str.format``. Ruff takes every
    logger for the standard library's, which wants ``%s``."""
    found = _node_at(source, row, column, ast.Call)
    if found is None:
        return False
    call, tree, _parents = found
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and call.args
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
    ):
        return False
    message = call.args[0].value
    try:
        fields = [
            f for _text, f, _spec, _conv in string.Formatter().parse(message) if f is not None
        ]
    except ValueError:
        return False
    name = func.value.id
    imported = any(
        isinstance(node, ast.ImportFrom)
        and (node.level > 0 or (node.module or "").split(".")[0] not in ("logging", "loguru"))
        and any((alias.asname or alias.name) == name for alias in node.names)
        for node in tree.body
    )
    return (
        imported
        and bool(fields)
        and len(fields) == len(call.args) - 1
        and not _PERCENT_CONVERSION.search(message)
    )


_PERCENT_CONVERSION = re.compile(r"%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdifrxXoeEgGc]")


def in_a_literal_type(source: str, row: int, column: int) -> bool:
    """Whether the string ruff's F722 (a forward annotation that does not parse) puts at
    ``row``/``column`` is a value of a ``Literal[…]`` type, whatever module ``Literal``
    comes from: colour-science imports it from its own ``colour.hints``, which ruff cannot
    follow, and ``Literal["CIE 1994", …]`` read as references does not parse."""
    found = _constant_at(source, row, column)
    if found is None or not isinstance(found[0].value, str):
        return False
    node, _tree, parents = found
    holder = parents.get(node)
    if isinstance(holder, ast.Tuple):
        holder = parents.get(holder)
    return (
        isinstance(holder, ast.Subscript)
        and holder.value is not node
        and called_name(holder.value) == "Literal"
    )


def a_range_bound(source: str, row: int, column: int) -> bool:
    """Whether the comparison ruff's SIM300 puts at ``row``/``column`` is the lower bound
    of a range check written in two comparisons: ``(0 <= idx) & (idx < n)`` (xgboost's
    tests; arrays do not chain comparisons) or ``0 <= n and n < m``, the bound read as it
    would be in ``0 <= n < m``."""
    found = _node_at(source, row, column, ast.Compare)
    if found is None:
        return False
    compare, _tree, parents = found
    holder = parents.get(compare)
    if isinstance(holder, ast.BinOp) and isinstance(holder.op, ast.BitAnd):
        siblings = [holder.left, holder.right]
    elif isinstance(holder, ast.BoolOp) and isinstance(holder.op, ast.And):
        siblings = list(holder.values)
    else:
        return False
    if len(compare.comparators) != 1 or not isinstance(compare.ops[0], _ORDERINGS):
        return False
    subject = ast.dump(compare.comparators[0])
    return any(
        isinstance(other, ast.Compare)
        and other is not compare
        and len(other.comparators) == 1
        and isinstance(other.ops[0], _ORDERINGS)
        and ast.dump(other.left) == subject
        for other in siblings
    )


_ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def a_local_variable_first(source: str, row: int, column: int) -> bool:
    """Whether the comparison ruff's SIM300 puts at ``row``/``column`` starts with a
    capital name its function binds as a variable: unpacked, looped over, taken as a
    parameter or computed (timm's ``O, I, J, K = conv_weight.shape`` then ``if I >
    base_chans``). Ruff takes capitals for constants; a name set to a literal is one."""
    found = _node_at(source, row, column, ast.Compare)
    if found is None:
        return False
    compare, tree, _parents = found
    if not isinstance(compare.left, ast.Name):
        return False
    name = compare.left.id
    scope = _innermost_scope(tree, row)
    if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    arguments = scope.args
    if any(a.arg == name for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)):
        return True
    nodes = own_nodes(scope)
    set_to_literals = {
        id(target)
        for node in nodes
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
    }
    return any(
        isinstance(node, ast.Name)
        and node.id == name
        and isinstance(node.ctx, ast.Store)
        and id(node) not in set_to_literals
        for node in nodes
    )


# Calls that never return: anyio's and trio's ``sleep_forever`` (a test double's
# ``receive`` that has nothing more to give waits until it is cancelled).
_NEVER_RETURN = frozenset({"sleep_forever"})


def ends_waiting_forever(source: str, row: int) -> bool:
    """Whether the function RET503 reports on ``row`` ends with a call that never
    returns, awaited or not: nothing falls off its end (sse-starlette 3.7's tests)."""
    tree = parse_source(source)
    if tree is None:
        return False
    functions = _functions_around(tree, row)
    if not functions:
        return False
    last = functions[-1].body[-1]
    if not isinstance(last, ast.Expr):
        return False
    call = last.value.value if isinstance(last.value, ast.Await) else last.value
    return isinstance(call, ast.Call) and called_name(call.func) in _NEVER_RETURN


def the_subject_of_its_function(source: str, row: int, column: int) -> bool:
    """Whether the capital name the comparison at ``row``/``column`` starts with (SIM300)
    names what its function is about: every word of it is a word of the function's name.
    kornia 0.9's ``torch_version_le`` returns ``_TORCH_VERSION <= (major, minor,
    patch)``: the installed version is the subject, and it reads first."""
    found = _node_at(source, row, column, ast.Compare)
    if found is None:
        return False
    compare, tree, _parents = found
    scope = _innermost_scope(tree, row)
    if not (
        isinstance(compare.left, ast.Name)
        and isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef)
    ):
        return False
    words = set(_words_of(compare.left.id))
    return bool(words) and words <= set(_words_of(scope.name))


def _words_of(name: str) -> list[str]:
    """``_TORCH_VERSION`` → ``["torch", "version"]``: a snake_case name's words."""
    return [word.lower() for word in name.split("_") if word]


def stands_at_module_level(source: str, row: int) -> bool:
    """Whether ``row`` starts an expression statement of the module itself (not of a
    function, class or block): in an example script, a value shown as a notebook or
    sphinx-gallery shows a cell's last expression (scikit-image's ``bad_tform``)."""
    tree = parse_source(source)
    return tree is not None and any(
        isinstance(statement, ast.Expr) and statement.lineno == row for statement in tree.body
    )


def runs_a_file_the_user_names(source: str, row: int) -> bool:
    """Whether the ``exec`` on ``row`` (S102) runs the text of a file named on the command
    line (``sys.argv``, or what an ``argparse`` parser parsed), read there or through
    ``compile``: diagrams' CLI runs the diagram scripts its user names, as ``python path``
    would. ``runpy.run_path`` is worth a word; nobody else's code gets in."""
    tree = parse_source(source)
    if tree is None:
        return False
    scopes = _lookup_scopes(tree, row)
    parents = _parent_map(tree)
    for call in ast.walk(tree):
        if (
            isinstance(call, ast.Call)
            and call.lineno == row
            and called_name(call.func) == "exec"
            and call.args
        ):
            code = call.args[0]
            if isinstance(code, ast.Call) and called_name(code.func) == "compile" and code.args:
                code = code.args[0]
            return _reads_a_named_file(code, scopes, parents)
    return False


def _reads_a_named_file(
    node: ast.expr, scopes: list[_Scope], parents: dict[ast.AST, ast.AST]
) -> bool:
    """``f.read()`` of ``with open(P) as f`` (or ``open(P).read()``, ``Path(P).read_text()``)
    where ``P`` comes from the command line."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("read", "read_text", "read_bytes")
    ):
        return False
    opened: ast.expr | None = node.func.value
    if isinstance(opened, ast.Name):
        opened = _opened_as(opened.id, scopes)
    return (
        isinstance(opened, ast.Call)
        and called_name(opened.func) in ("open", "Path")
        and bool(opened.args)
        and _from_the_command_line(opened.args[0], scopes, parents, 3)
    )


def _opened_as(name: str, scopes: list[_Scope]) -> ast.expr | None:
    """What ``with X as name`` (or ``name = X``) opened, if that is all ``name`` is."""
    for scope in scopes:
        bound: list[ast.expr] = []
        for n in own_nodes(scope):
            if isinstance(n, ast.withitem) and isinstance(n.optional_vars, ast.Name):
                if n.optional_vars.id == name:
                    bound.append(n.context_expr)
            elif isinstance(n, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in n.targets
            ):
                bound.append(n.value)
        if bound:
            return bound[0] if len(bound) == 1 else None
    return None


def _from_the_command_line(
    node: ast.expr, scopes: list[_Scope], parents: dict[ast.AST, ast.AST], depth: int
) -> bool:
    """``sys.argv[i]``, ``args.x`` of ``args = parser.parse_args()``, or a name bound to
    one of those or looping over them."""
    if depth < 0:
        return False
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Attribute) and node.value.attr == "argv"
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        values = _values_bound(node.value.id, scopes, parents)
        return bool(values) and all(
            isinstance(v, ast.Call) and called_name(v.func) in ("parse_args", "parse_known_args")
            for v in values
        )
    if isinstance(node, ast.Name):
        sources = _values_bound(node.id, scopes, parents, iterated=True)
        return bool(sources) and all(
            s is not None and _from_the_command_line(s, scopes, parents, depth - 1) for s in sources
        )
    return False


def only_returns_none(source: str, row: int) -> bool:
    """Whether the ``return None`` on ``row`` (RET501) is the whole body of its function,
    a docstring aside: a stand-in stating its result (cartopy's tests patch a font's
    ``get_sfnt_table`` with one), where a bare ``return`` or nothing would hide it."""
    tree = parse_source(source)
    if tree is None:
        return False
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            body = function.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].lineno == row:
                return True
    return False


def among_lambdas(source: str, row: int, column: int) -> bool:
    """Whether the lambda at ``row``/``column`` (PLW0108: it only calls a function) is one
    of the items of a list, tuple, set or dict with other lambdas in it (zarr's tests'
    ``[lambda config: ArrayConfig.from_dict(config), lambda config: zarr.create(…), …]``)."""
    found = _node_at(source, row, column, ast.Lambda)
    if found is None:
        return False
    node, _, parents = found
    holder = parents.get(node)
    items: list[ast.expr | None] = []
    if isinstance(holder, ast.List | ast.Tuple | ast.Set):
        items = list(holder.elts)
    elif isinstance(holder, ast.Dict) and node in holder.values:
        items = list(holder.values)
    return any(isinstance(i, ast.Lambda) and i is not node for i in items)


def _rows_built_alike(rows: ast.expr) -> bool:
    """``(f(x) for x in xs)`` or ``[(a, b) for …]``: rows that one expression builds, a
    call or a tuple display, each as long as the next."""
    return isinstance(rows, ast.ListComp | ast.GeneratorExp) and isinstance(
        rows.elt, ast.Call | ast.Tuple
    )


# numpy's (and torch's) functions that give a tuple of index arrays, one per axis, all
# as long as each other; ``where`` only with its condition alone.
_INDEX_TUPLES = frozenset(
    {"nonzero", "triu_indices", "tril_indices", "triu_indices_from", "tril_indices_from"}
    | {"diag_indices", "diag_indices_from", "unravel_index", "where"}
)
# Modules whose functions read a list they are given and cannot change its length.
_LENGTH_KEEPING_MODULES = frozenset({"np", "numpy", "math", "statistics"})


def _index_arrays_of_one_call(
    first: ast.expr, second: ast.expr, scopes: list[_Scope], parents: dict[ast.AST, ast.AST]
) -> bool:
    """Whether ``first`` and ``second`` are names bound once, together, by unpacking one
    call of an index function: pingouin's ``g1, g2 = np.triu_indices(n, k=1)``, or
    ``rows, cols = mask.nonzero()``."""
    if not (isinstance(first, ast.Name) and isinstance(second, ast.Name)):
        return False
    targets = []
    for name in (first.id, second.id):
        if len(_values_bound(name, scopes, parents)) != 1:
            return False
        scope = next((sc for sc in scopes if _stores(sc, name)), None)
        if scope is None:
            return False
        stores = [
            n
            for n in own_nodes(scope)
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
        ]
        if len(stores) != 1:
            return False
        targets.append(parents.get(stores[0]))
    unpacked, other = targets
    binding = parents.get(unpacked) if unpacked is not None else None
    if not (
        unpacked is other
        and isinstance(unpacked, ast.Tuple)
        and isinstance(binding, ast.Assign)
        and binding.targets == [unpacked]
        and isinstance(binding.value, ast.Call)
    ):
        return False
    function = called_name(binding.value.func)
    return function in _INDEX_TUPLES and (function != "where" or len(binding.value.args) == 1)


def _one_per_item_of(
    node: ast.expr, scopes: list[_Scope], parents: dict[ast.AST, ast.AST], depth: int = 0
) -> str:
    """What ``node`` has one item per item of, by construction, as far back as that can
    be read (as ``ast.dump`` text): a comprehension with one ``for`` and no ``if`` over
    ``xs``, ``map(f, xs)``, ``list(xs)`` and the like, ``range(len(xs))`` (or from
    ``start`` to ``start + len(xs)``), ``[x] * len(xs)`` (pingouin's covariate names), or
    a list that one loop over ``xs``
    fills with one ``append`` each time round (great-tables' ``lhs``/``rhs``), have one
    per item of ``xs``; a name bound once, to what its value has. Two sequences with the
    same answer are as long as each other."""
    if depth > _ORIGIN_DEPTH:
        return ast.dump(node)
    if isinstance(node, ast.Name):
        values = _values_bound(node.id, scopes, parents)
        if len(values) != 1 or values[0] is None:
            return ast.dump(node)
        value = values[0]
        scope = next((sc for sc in scopes if _stores(sc, node.id)), None)
        if scope is None:
            return ast.dump(node)
        if isinstance(value, ast.List) and not value.elts:
            loop = _filled_once_per_iteration(node.id, value, scope, parents)
            if loop is None:
                return ast.dump(node)
            return _one_per_item_of(loop.iter, scopes, parents, depth + 1)
        if _resized(node.id, scope, parents, allowed=None):
            return ast.dump(node)
        return _one_per_item_of(value, scopes, parents, depth + 1)
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Mult)
        and isinstance(node.left, ast.List)
        and len(node.left.elts) == 1
        and (measured := _length_of(node.right))
    ):
        return _one_per_item_of(measured, scopes, parents, depth + 1)
    if isinstance(node, ast.ListComp | ast.GeneratorExp):
        (*more, generator) = node.generators
        if not more and not generator.ifs and not generator.is_async:
            return _one_per_item_of(generator.iter, scopes, parents, depth + 1)
    elif isinstance(node, ast.Call) and not node.keywords:
        name = called_name(node.func)
        if name == "map" and len(node.args) == 2:
            return _one_per_item_of(node.args[1], scopes, parents, depth + 1)
        if name == "range" and (measured := _range_over_a_length(node.args)):
            return _one_per_item_of(measured, scopes, parents, depth + 1)
        if name in _ITEM_FOR_ITEM and len(node.args) == 1:
            return _one_per_item_of(node.args[0], scopes, parents, depth + 1)
    return ast.dump(node)


def _range_over_a_length(arguments: list[ast.expr]) -> ast.expr | None:
    """``xs`` of ``range(len(xs))`` or ``range(start, start + len(xs))`` (kedro-datasets'
    new ids, one per record), else None."""
    if len(arguments) == 1:
        return _length_of(arguments[0])
    if len(arguments) == 2 and isinstance(end := arguments[1], ast.BinOp):
        start = ast.dump(arguments[0])
        if isinstance(end.op, ast.Add) and ast.dump(end.left) == start:
            return _length_of(end.right)
        if isinstance(end.op, ast.Add) and ast.dump(end.right) == start:
            return _length_of(end.left)
    return None


def _length_of(node: ast.expr) -> ast.expr | None:
    """``xs`` of ``len(xs)``, else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and len(node.args) == 1
        and not node.keywords
    ):
        return node.args[0]
    return None


_ORIGIN_DEPTH = 8
# Builtins that give one item per item of their one argument.
_ITEM_FOR_ITEM = frozenset({"list", "tuple", "sorted", "reversed", "enumerate"})
# Methods that change a list's length, and calls that may (anything it is passed to).
_RESIZING = frozenset({"append", "extend", "insert", "pop", "remove", "clear"})
_READS_ONLY = frozenset(
    {"len", "zip", "enumerate", "max", "min", "sum", "sorted", "reversed", "list", "tuple"}
    | {"set", "any", "all", "map", "filter", "iter", "print", "str", "repr", "isinstance"}
)


def _reads_only(func: ast.expr) -> bool:
    """A builtin that only reads, or a function of numpy, ``math`` or ``statistics``
    (pingouin's ``np.prod(n_levels)``): none can make a list longer or shorter."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id in _LENGTH_KEEPING_MODULES
    return called_name(func) in _READS_ONLY


def _stores(scope: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
        for n in own_nodes(scope)
    )


def _resized(
    name: str, scope: ast.AST, parents: dict[ast.AST, ast.AST], allowed: ast.Call | None
) -> bool:
    """Whether anything in ``scope`` but the call ``allowed`` may change the length of
    the list ``name``: a resizing method, ``del name[…]``, ``name += …``, or handing it
    to a call that is not a builtin that only reads."""
    for n in own_nodes(scope):
        if isinstance(n, ast.Call) and n is not allowed:
            func = n.func
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == name
                and func.attr in _RESIZING
            ):
                return True
            handed = [*n.args, *(k.value for k in n.keywords)]
            if not _reads_only(func) and any(
                isinstance(a, ast.Name) and a.id == name for a in handed
            ):
                return True
        elif (
            isinstance(n, ast.Delete)
            and any(
                isinstance(t, ast.Subscript)
                and isinstance(t.value, ast.Name)
                and t.value.id == name
                for t in n.targets
            )
        ) or (
            isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id == name
        ):
            return True
    return False


def _filled_once_per_iteration(
    name: str, empty: ast.List, scope: ast.AST, parents: dict[ast.AST, ast.AST]
) -> ast.For | None:
    """The ``for`` loop that fills the list ``name`` (bound once, to ``empty``): its
    only ``append``, a statement of the loop's own body, and the loop, which cannot
    ``break`` or ``continue``, follows the binding in the same block. None otherwise."""
    appends = [
        n
        for n in own_nodes(scope)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == name
        and n.func.attr == "append"
    ]
    if len(appends) != 1 or _resized(name, scope, parents, allowed=appends[0]):
        return None
    statement = parents.get(appends[0])
    loop = parents.get(statement) if isinstance(statement, ast.Expr) else None
    binding = parents.get(empty)
    block = parents.get(binding) if binding is not None else None
    if not (
        isinstance(loop, ast.For)
        and statement in loop.body
        and block is not None
        and parents.get(loop) is block
        and not _leaves_early(loop)
    ):
        return None
    for field in ("body", "orelse", "finalbody"):
        statements = getattr(block, field, None)
        if isinstance(statements, list) and binding in statements and loop in statements:
            return loop if statements.index(binding) < statements.index(loop) else None
    return None


def _leaves_early(loop: ast.For) -> bool:
    """Whether ``loop``'s body can ``break`` or ``continue`` (its own, not a nested
    loop's)."""
    pending: list[ast.AST] = list(loop.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Break | ast.Continue):
            return True
        if not isinstance(
            node, ast.For | ast.AsyncFor | ast.While | ast.FunctionDef | ast.AsyncFunctionDef
        ):
            pending.extend(ast.iter_child_nodes(node))
        elif isinstance(node, ast.For | ast.AsyncFor | ast.While):
            pending.extend(node.orelse)  # a nested loop's else belongs to this one
    return False


def _checks_lengths(statement: ast.stmt, pair: frozenset[str]) -> bool:
    """``assert len(a) == len(b)``, or ``if len(a) != len(b):`` that raises or returns."""
    if isinstance(statement, ast.Assert):
        return _says_equal_lengths(statement.test, pair, ast.Eq)
    return (
        isinstance(statement, ast.If)
        and not statement.orelse
        and isinstance(statement.body[-1], ast.Raise | ast.Return)
        and _says_equal_lengths(statement.test, pair, ast.NotEq)
    )


def _says_equal_lengths(test: ast.expr, pair: frozenset[str], op: type[ast.cmpop]) -> bool:
    """``len(a) <op> len(b)`` for the two of ``pair``, alone or as one part of an ``and``
    (``==``) or an ``or`` (``!=``)."""
    parts = [test]
    joined = ast.And if op is ast.Eq else ast.Or
    if isinstance(test, ast.BoolOp) and isinstance(test.op, joined):
        parts = test.values
    for part in parts:
        if (
            isinstance(part, ast.Compare)
            and len(part.ops) == 1
            and isinstance(part.ops[0], op)
            and all(
                isinstance(side, ast.Call)
                and called_name(side.func) == "len"
                and len(side.args) == 1
                for side in (part.left, part.comparators[0])
            )
        ):
            sides = frozenset(
                ast.dump(side.args[0])
                for side in (part.left, part.comparators[0])
                if isinstance(side, ast.Call)
            )
            if sides == pair:
                return True
    return False


def _used_as_a_mask(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """``x[node]``, ``~node``, or either of those with ``&``/``|`` between masks."""
    child, parent = node, parents.get(node)
    while isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.BitAnd | ast.BitOr):
        child, parent = parent, parents.get(parent)
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Invert):
        return True
    return isinstance(parent, ast.Subscript) and parent.slice is child


# What a naive ``datetime.min``/``max`` answers the same in every timezone: its fields
_CALENDAR_READS = frozenset(
    {
        "year",
        "month",
        "day",
        "hour",
        "minute",
        "second",
        "microsecond",
        "date",
        "time",
        "weekday",
        "isoweekday",
        "isocalendar",
        "toordinal",
    }
)


def reads_a_calendar_field(source: str, row: int, column: int) -> bool:
    """Whether the ``datetime.min``/``max`` at ``row``, ``column`` (ruff's, 1-based) is
    only read for a field: caldav 3.6's ``if ts.year == datetime.min.year:`` asks which
    year the earliest date has, which no timezone changes."""
    tree = parse_source(source)
    offset = byte_offset(source, row, column)
    if tree is None or offset is None:
        return False
    return any(
        isinstance(node, ast.Attribute)
        and node.attr in _CALENDAR_READS
        and (node.value.lineno, node.value.col_offset) == (row, offset)
        for node in ast.walk(tree)
    )


def keeps_the_file_open(source: str, row: int, column: int) -> bool:
    """Whether the file opened on ``row`` is kept past its function: stored on an
    object or in a container (``self.f = open(…)``, ``locks[name] = f``,
    ``files.append(f)``), or returned or yielded. caldav 3.6's test servers hold a lock
    file open until ``release_server`` closes it; a ``with``, as SIM115 asks, would
    release the lock at once. Only the opening call itself counts as stored: a name
    given what was read from the file (``tree = ast.parse(open(p).read())``,
    line_profiler's tests) holds no file."""
    tree = parse_source(source)
    offset = byte_offset(source, row, column)
    if tree is None or offset is None:
        return False
    scope = _innermost_scope(tree, row)
    for target in _assigned_the_call_at(scope, row, offset):
        if isinstance(target, ast.Attribute | ast.Subscript):
            return True
        if isinstance(target, ast.Name) and _kept(scope, target.id):
            return True
    return False


def _assigned_the_call_at(scope: ast.AST, row: int, offset: int) -> Iterator[ast.expr]:
    """The targets (``a = b = …`` has two) that ``scope`` assigns the call starting at
    ``row``/``offset``, there or through ``typing.cast(T, …)`` (nibabel's
    ``self.myfileobj = ty.cast('io.FileIO', open(…))``)."""
    for node in ast.walk(scope):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        value = node.value
        if called_name(value.func) == "cast" and len(value.args) == 2:
            cast = value.args[1]
            value = cast if isinstance(cast, ast.Call) else value
        if (value.lineno, value.col_offset) == (row, offset):
            yield from node.targets


_ENTERS = frozenset({"enter_context", "enter_async_context"})


def entered_in_a_stack(source: str, row: int, column: int) -> bool:
    """Whether the file opened at ``row``/``column`` goes, as one branch of a conditional
    or an ``or``, straight into an exit stack's ``enter_context`` (pyaml 26's command
    line: ``dsts.enter_context(safe_replacement(p) if not special else open(p, 'w'))``).
    The stack closes it as a ``with`` would; ruff sees that only for a bare ``open``."""
    located = _located(source, row, column)
    if located is None:
        return False
    tree, offset, parents = located
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (node.lineno, node.col_offset) == (row, offset):
            child: ast.AST = node
            holder = parents.get(child)
            while isinstance(holder, ast.IfExp | ast.BoolOp) and child is not getattr(
                holder, "test", None
            ):
                child, holder = holder, parents.get(holder)
            return (
                isinstance(holder, ast.Call)
                and child in holder.args
                and called_name(holder.func) in _ENTERS
            )
    return False


def closed_in_a_finally(source: str, row: int, column: int) -> bool:
    """Whether the file opened on ``row`` and named is closed in a ``finally`` of the
    same function (textfsm's terminal: ``/dev/tty``, or stdin when there is none, closed
    in the ``finally`` after the read). A ``with`` cannot say "this file or stdin"; the
    close is written, and only what runs between the open and the ``try`` can leak it."""
    tree = parse_source(source)
    offset = byte_offset(source, row, column)
    if tree is None or offset is None:
        return False
    scope = _innermost_scope(tree, row)
    opened = {t.id for t in _assigned_the_call_at(scope, row, offset) if isinstance(t, ast.Name)}
    return any(
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "close"
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id in opened
        for node in ast.walk(scope)
        if isinstance(node, ast.Try | ast.TryStar)
        for statement in node.finalbody
        for call in ast.walk(statement)
    )


def _kept(scope: ast.AST, name: str) -> bool:
    """Whether ``scope`` stores, returns or yields the value of ``name``."""

    def named(node: ast.expr | None) -> bool:
        return isinstance(node, ast.Name) and node.id == name

    for node in ast.walk(scope):
        if isinstance(node, ast.Return | ast.Yield) and (
            named(node.value)
            or (isinstance(node.value, ast.Tuple) and any(named(e) for e in node.value.elts))
        ):
            return True
        if (
            isinstance(node, ast.Assign)
            and named(node.value)
            and any(isinstance(t, ast.Attribute | ast.Subscript) for t in node.targets)
        ):
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("append", "add", "push", "put", "enter_context")
            and any(named(arg) for arg in node.args)
        ):
            return True
    return False


def compares_with_a_supported_python(source: str, row: int, oldest_minor: int) -> bool:
    """Whether a comparison on ``row`` holds a version tuple ``(3, N, …)`` with N newer
    than ``oldest_minor``: a check that Pythons the project supports answer both ways, so
    no branch of it is dead code."""
    tree = parse_source(source)
    if tree is None:
        return False
    versions = [
        version
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare) and node.lineno == row
        for operand in (node.left, *node.comparators)
        if (version := int_tuple(operand)) is not None
    ]
    return any(v[:1] == (3,) and len(v) >= 2 and v[1] > oldest_minor for v in versions)


def _functions_around(tree: ast.Module, row: int) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions whose lines hold ``row``, outermost first."""
    return sorted(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.lineno <= row <= (node.end_lineno or node.lineno)
        ),
        key=lambda node: node.lineno,
    )


def _lookup_scopes(tree: ast.Module, row: int) -> list[_Scope]:
    """The scopes Python looks a name on ``row`` up in: its functions, innermost first,
    then the module."""
    return [*reversed(_functions_around(tree, row)), tree]


def _innermost_scope(tree: ast.Module, row: int) -> ast.AST:
    """The innermost function holding ``row``, or the module."""
    functions = _functions_around(tree, row)
    return functions[-1] if functions else tree


@functools.lru_cache(maxsize=16)  # ruff reports several lines per file
def parse_source(source: str) -> ast.Module | None:
    """The module's tree, or None for text that does not parse (lines only a newer Python
    parses stood in for: see workers.review.tolerant_parse); cached, since ruff reports
    several lines of one file and each reader here asks."""
    return parse_tolerantly(source)


def byte_offset(source: str, row: int, column: int) -> int | None:
    """The ``col_offset`` the ``ast`` gives a node that ruff places at ``row``/``column``
    (1-based, in characters: the ``ast`` counts UTF-8 bytes); None past the text."""
    lines = source.splitlines()
    if not 0 < row <= len(lines):
        return None
    return len(lines[row - 1][: max(column - 1, 0)].encode("utf-8"))


def formatted_as_one(source: str, row: int, column: int) -> bool:
    """Whether the string literal starting at ``row``/``column`` (1-based, characters),
    two or more pieces side by side, is formatted whole: the left side of ``%`` or the
    receiver of ``.format``. Its placeholders span the pieces, so they are one template
    (isodate 0.7's ``r"(?P<sign>[+-]){%d}" r"(?P<century>[0-9]{%d})" % (sign, n)``),
    not a list missing a comma."""
    tree = parse_source(source)
    offset = byte_offset(source, row, column)
    if tree is None or offset is None:
        return False
    for node in ast.walk(tree):
        template = None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            template = node.left
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            template = node.func.value if node.func.attr == "format" else None
        if (
            isinstance(template, ast.Constant)
            and isinstance(template.value, str)
            and (template.lineno, template.col_offset) == (row, offset)
        ):
            return True
    return False


def one_value_over_lines(source: str, row: int, column: int) -> bool:
    """Whether the literals side by side at ``row``/``column`` (ISC001) belong to one
    implicitly joined value that goes on over other lines (pyelftools' tests write a
    frame's bytes an instruction per line: ``b'\\x0e\\x0c' b'\\x41'``). Such a value is
    written in pieces on purpose; the missing comma ISC001 looks for is a list's items on
    one line."""
    tree = parse_source(source)
    offset = byte_offset(source, row, column)
    if tree is None or offset is None:
        return False
    return any(
        isinstance(node, ast.Constant | ast.JoinedStr)
        and node.end_lineno is not None
        and node.end_col_offset is not None
        and node.lineno != node.end_lineno
        and (node.lineno, node.col_offset) <= (row, offset) < (node.end_lineno, node.end_col_offset)
        for node in ast.walk(tree)
    )


def split_inside_a_sentence(source: str, row: int, start: int, end: int) -> bool:
    """Whether ruff's ISC001 pair from column ``start`` to ``end`` (1-based, ``end``
    exclusive) on ``row`` is one text split where it runs on: the first literal ends, or
    the second starts, with whitespace (or a ``\\n``/``\\r``/``\\t`` escape). Anything
    this cannot read as exactly two literals is not."""
    pair = _literal_pair(source, row, start, end)
    return pair is not None and (
        _runs_on(pair[0], _RUNS_ON_END) or _runs_on(pair[1], _RUNS_ON_START)
    )


def joins_two_kinds(source: str, row: int, start: int, end: int) -> bool:
    """Whether ruff's ISC001 pair (as in :func:`split_inside_a_sentence`) is an f-string
    beside a plain literal, or a raw one beside one with escapes: two kinds that cannot
    be one literal as written, side by side on purpose: pycparser 3.12's lexer puts
    ``rf"(?!{_unicode_escape})"`` beside a raw pattern with braces and quotes in it."""
    pair = _literal_pair(source, row, start, end)
    if pair is None:
        return False
    kinds = [set(found.group("prefix").lower()) & {"f", "t", "r"} for found in pair]
    return kinds[0] != kinds[1]


def splits_a_digest(source: str, row: int, start: int, end: int) -> bool:
    """Whether ruff's ISC001 pair (as in :func:`split_inside_a_sentence`) is one digest
    in hex cut in two: both pieces hex digits, together as long as an MD5, SHA-1,
    SHA-224, SHA-256, SHA-384 or SHA-512 is (requests-ntlm 1.3's tests keep a SHA-256 as
    ``"2334…A130" "2A96…B0F6"``, where a formatter wrapped it). Two items a comma was
    meant to part are rarely together a digest's length."""
    pair = _literal_pair(source, row, start, end)
    if pair is None:
        return False
    bodies = [found.group("body") for found in pair]
    return all(_HEX.fullmatch(body) for body in bodies) and (
        sum(map(len, bodies)) in _DIGEST_HEX_LENGTHS
    )


_HEX = re.compile(r"[0-9a-fA-F]+")
_DIGEST_HEX_LENGTHS = frozenset({32, 40, 56, 64, 96, 128})


def _literal_pair(
    source: str, row: int, start: int, end: int
) -> tuple[re.Match[str], re.Match[str]] | None:
    """The two literals of ruff's ISC001 pair from column ``start`` to ``end`` (1-based,
    ``end`` exclusive) on ``row``; None for anything this cannot read as exactly two."""
    lines = _LINE_BREAK.split(source)
    if not 1 <= row <= len(lines) or not 1 <= start < end:
        return None
    pair = lines[row - 1][start - 1 : end - 1]
    found = list(_LITERAL.finditer(pair))
    if len(found) != 2 or found[0].start() != 0 or found[1].end() != len(pair):
        return None
    if pair[found[0].end() : found[1].start()].strip():
        return None  # something between them that is not space: not read right
    return found[0], found[1]


def _runs_on(literal: re.Match[str], edge: re.Pattern[str]) -> bool:
    body = literal.group("body")
    if "r" in literal.group("prefix").lower():  # a raw string has no escapes
        body = body.replace("\\", "\x00")
    return edge.search(body) is not None


# Bandit's rules that are about one library's API, and that library's import name.
LIBRARY_RULES: dict[str, str] = {
    "S201": "flask",
    "S308": "django",
    "S506": "yaml",
    "S507": "paramiko",
    "S508": "pysnmp",
    "S509": "pysnmp",
    "S601": "paramiko",
    "S610": "django",
    "S611": "django",
    "S701": "jinja2",
    "S702": "mako",
    "S704": "markupsafe",
}
_SOURCE_ROOTS = frozenset({"src", "lib"})


def in_the_librarys_own_package(path: str, code: str) -> bool:
    """Whether a rule about a library's API is on a file of that library's own package
    (``mako/exceptions.py``, ``src/django/utils/html.py``)."""
    library = LIBRARY_RULES.get(code)
    return library is not None and _package_of(path) == library


def _package_of(path: str) -> str | None:
    """The package a file is in: the path's first directory, or the one under ``src/``
    or ``lib/``; None for a file at the root."""
    parts = path.split("/")
    if parts[0] in _SOURCE_ROOTS:
        parts = parts[1:]
    return parts[0] if len(parts) > 1 else None


_UNESCAPED = re.compile(r'use "(\\[^"]+)" instead')
_AMBIGUOUS = re.compile(r"contains ambiguous `(.)`", re.DOTALL)


def _character_of(message: str) -> str | None:
    """The one character ruff's message is about: RUF001-3's "ambiguous `…`", or the
    escape PLE2510-5 asks for (``Invalid unescaped character zero-width-space, use
    "\\u200B" instead``)."""
    found = _AMBIGUOUS.search(message)
    if found is not None:
        return found.group(1)
    escaped = _UNESCAPED.search(message)
    if escaped is None:
        return None
    try:
        char = codecs.decode(escaped.group(1), "unicode_escape")
    except UnicodeDecodeError:
        return None
    return char if len(char) == 1 else None


# an escape of a control character (``\n``, ``\t``) right before a place: lm-eval's
# Greek prompt starts a line with a capital epsilon after "\n\n"
_ESCAPE_BEFORE = re.compile(r"(?<!\\)(?:\\\\)*\\[nrt]\Z")


def in_its_own_script(source: str, row: int, message: str) -> bool:
    """Whether every place on line ``row`` of the character ruff's RUF001-3 ``message``
    names has no ASCII letter or digit beside it (the letter of an escape such as
    ``\n`` is none), and is not a letter standing alone."""
    char = _character_of(message)
    lines = _LINE_BREAK.split(source)
    if char is None or not 0 < row <= len(lines):
        return False
    line = lines[row - 1]
    places = [i for i, c in enumerate(line) if c == char]
    if not places:
        return False
    for i in places:
        beside = [line[j] for j in (i - 1, i + 1) if 0 <= j < len(line)]
        if _ESCAPE_BEFORE.search(line, 0, i):  # "\n" before it: a line break, no letter n
            beside = beside[1:]
        if any(c.isascii() and c.isalnum() for c in beside):
            return False
        if (
            char.isalpha()
            and not any(c.isalnum() for c in beside)
            and _script(char) not in _scripts_written_in(source)
        ):
            return False
    return True


def a_digest_cut_short(source: str, row: int) -> bool:
    """Whether a ``hashlib`` call on ``row`` has its digest sliced (``.hexdigest()[:8]``):
    plotext 6 names its download cache ``md5(url)[:8]``. A few characters of a hash
    protect nothing and are not meant to; ``usedforsecurity=False`` (which FIPS builds
    of OpenSSL need for md5) is still worth a word, not an "important" label."""
    tree = parse_source(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)):
            continue
        call = node.value
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in ("hexdigest", "digest")
            and isinstance(call.func.value, ast.Call)
            and call.func.value.lineno <= row <= (call.func.value.end_lineno or row)
        ):
            return True
    return False


def names_the_character(source: str, row: int, message: str) -> bool:
    """Whether line ``row`` names the character ruff's RUF001-3 ``message`` (or PLE2510-5,
    an invisible control character) is about, by its Unicode name or its code point
    (``U+02C6``, ``0x02C6``, ``\\u02c6``): html2text's table of Windows-1252 characters
    writes ``0x88: 0x02C6,  # MODIFIER LETTER CIRCUMFLEX ACCENT`` and then the accent
    itself, ocrmypdf's font tests a zero width space beside ``# ZERO WIDTH SPACE``. A line
    about a character shows it on purpose."""
    char = _character_of(message)
    lines = _LINE_BREAK.split(source)
    if char is None or not 0 < row <= len(lines):
        return False
    line = lines[row - 1]
    name = unicodedata.name(char, "")
    if name and name.casefold() in line.casefold():
        return True
    point = rf"(?:U\+|0x|\\u|\\U|&#x)0*{ord(char):X}(?![0-9A-F])"
    return re.search(point, line, re.IGNORECASE) is not None


def falls_back_from_get_annotations(source: str, row: int) -> bool:
    """Whether the function holding ``row`` (or the module) also calls ``get_annotations``:
    mypy-extensions 1.1 reads ``annotationlib.get_annotations(tp)`` on 3.14 and
    ``tp.__dict__.get('__annotations__', {})`` on the Pythons before, where the class's
    dict is where annotations live. The dict read there is the fallback RUF063 asks for."""
    tree = parse_source(source)
    if tree is None:
        return False
    for node in ast.walk(_innermost_scope(tree, row)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == "get_annotations":
                return True
    return False


def exports_by_their_names(source: str, row: int) -> bool:
    """Whether the ``__all__`` assigned (or added to) on ``row`` lists only strings and
    ``name.__name__`` reads: jsons 1.6 writes ``__all__ = [dump.__name__, …]`` so a
    rename cannot leave a stale string behind; or another module's ``__all__``, unpacked
    (dspy's ``[*_vendored_all, …]`` of ``from … import __all__ as _vendored_all``), or
    in a module that serves its names lazily (a module ``__getattr__``), a name
    unpacked: vedo 2026.6's ``[*_LAZY_EXPORTS, "VedoLogo"]``, the names it serves.
    Those are strings, which ruff's PLE0604 cannot tell; any other expression there (a
    call, a name) keeps the remark."""
    tree = parse_source(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) or node.lineno != row:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        value = node.value
        imported_alls = _imported_alls(tree)
        lazy = any(isinstance(s, ast.FunctionDef) and s.name == "__getattr__" for s in tree.body)
        return isinstance(value, ast.List | ast.Tuple) and all(
            (isinstance(e, ast.Constant) and isinstance(e.value, str))
            or (isinstance(e, ast.Attribute) and e.attr == "__name__")
            or (
                isinstance(e, ast.Starred)
                and (
                    _another_modules_all(e.value, imported_alls)
                    or (lazy and isinstance(e.value, ast.Name))
                )
            )
            for e in value.elts
        )
    return False


def copies_another_all(source: str, row: int) -> bool:
    """Whether the ``__all__`` assigned on ``row`` (PLE0605: not a list or tuple) is a
    slice of another module's ``__all__``: metpy's ``__all__ = aws.__all__[:]`` copies
    its submodule's list, which ruff cannot see."""
    tree = parse_source(source)
    if tree is None:
        return False
    imported_alls = _imported_alls(tree)
    return any(
        isinstance(node, ast.Assign)
        and node.lineno == row
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        and isinstance(node.value, ast.Subscript)
        and isinstance(node.value.slice, ast.Slice)
        and _another_modules_all(node.value.value, imported_alls)
        for node in ast.walk(tree)
    )


def _imported_alls(tree: ast.Module) -> set[str]:
    """The names ``from module import __all__ [as name]`` binds in ``tree``."""
    return {
        alias.asname or alias.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom)
        for alias in n.names
        if alias.name == "__all__"
    }


def _another_modules_all(node: ast.expr, imported_alls: set[str]) -> bool:
    """``module.__all__``, or a name ``from module import __all__ as name`` bound."""
    return (isinstance(node, ast.Attribute) and node.attr == "__all__") or (
        isinstance(node, ast.Name) and node.id in imported_alls
    )


def a_symbol_in_prose(message: str) -> bool:
    """Whether ruff's RUF002/RUF003 ``message`` (a docstring, a comment) names a
    character that is no letter or digit: the multiplication sign of "length by 1"
    (plotext 6's comments), a dash, a curly quote. Those are typed on purpose and read as
    meant; the slip the rules are for is a letter of another script from a keyboard
    layout left switched, which such prose still gets a remark for."""
    found = _AMBIGUOUS.search(message)
    return found is not None and not found.group(1).isalnum()


_WORD = re.compile(r"[^\W\d_]{2,}")  # two letters or more, of any script
SENTENCE_WORDS = 4


def a_symbol_in_a_sentence(source: str, row: int, message: str) -> bool:
    """Whether ruff's RUF001 ``message`` names a character that is no letter or digit
    and the string holding it on ``row`` is a sentence (``SENTENCE_WORDS`` words or
    more, spaces between): optax's "Complex Newton<en dash>Schulz did not produce a
    unitary matrix." joins two names with an en dash, as typography wants. A dash in a string
    of one word (a command line's ``"<en dash>verbose"``) stays a remark. The typographic
    apostrophe between two letters is an elision whatever the length (datacontract-cli's
    French "Échec de l<apostrophe>enregistrement"), and an en dash between two letters
    in words joins them (ase's "Lennard<en dash>Jones potential")."""
    found = _AMBIGUOUS.search(message)
    if found is None or found.group(1).isalnum():
        return False
    char = found.group(1)
    if char == _APOSTROPHE:  # an elision or a possessive (French "l<apostrophe>")
        return any(_ELIDED.search(value) for value in strings_on(source, row))
    if char == _EN_DASH and any(
        " " in value and _JOINED.search(value) for value in strings_on(source, row)
    ):
        return True  # two names joined in prose: ase's "Lennard<en dash>Jones potential"
    return any(
        char in value and " " in value and len(_WORD.findall(value)) >= SENTENCE_WORDS
        for value in strings_on(source, row)
    )


_APOSTROPHE = "\u2019"  # RIGHT SINGLE QUOTATION MARK, typography's apostrophe
_ELIDED = re.compile(r"[^\W\d_]\u2019[^\W\d_]")
_EN_DASH = "\u2013"
_JOINED = re.compile(r"[^\W\d_]\u2013[^\W\d_]")  # between two letters


def _script(char: str) -> str:
    """``CYRILLIC`` for CYRILLIC SMALL LETTER A: the first word of the character's name."""
    return unicodedata.name(char, "").split(" ", 1)[0]


@functools.lru_cache(maxsize=16)
def _scripts_written_in(source: str) -> frozenset[str]:
    """The scripts of the non-ASCII words (two letters or more, all of one script) in
    ``source``: a file with Chechen numerals in it (num2words' ``lang_CE.py``) writes
    a noun-class letter alone (Cyrillic be) as the Chechen letter it is."""
    scripts: set[str] = set()
    for word in _WORD.findall(source):
        if word.isascii():
            continue
        found = {_script(c) for c in word}
        if len(found) == 1:
            scripts |= found
    return frozenset(scripts)


_UNUSED_IMPORT = re.compile(r"`([\w.]+)` imported but unused")


def reexported_by_its_package(path: str, message: str) -> bool:
    """Whether ruff's F401 ``message`` is about a package's ``__init__.py`` importing from
    that package: relatively, or by the name of the package it is in (its top
    directory, or the one under ``src/``/``lib/``)."""
    parts = path.split("/")
    found = _UNUSED_IMPORT.search(message)
    if parts[-1] != "__init__.py" or found is None:
        return False
    imported = found.group(1)
    return imported.startswith(".") or imported.split(".")[0] == _package_of(path)


_SELF_COMPARED = re.compile(r"`([\w.]+) (?:==|!=) \1`")
_NAN_WORDS = re.compile(r"(?i)\b(?:nan|inf|infinity|infinite|finite|isnan|isinf|isfinite)\b")


def tests_for_nan(source: str, row: int, message: str) -> bool:
    """Whether the comparison with itself on ``row`` is a NaN test (see the module's
    docstring): a word of NaN or infinity on the lines around it or in the opening of
    its function (its docstring, its first comments), a float check on the name in the
    ``if`` tests around it or in the same condition, or ``name is None or name != name``."""
    compared = _SELF_COMPARED.search(message)
    lines = source.splitlines()
    if compared is None or not 0 < row <= len(lines):
        return False
    if any(_NAN_WORDS.search(line) for line in lines[max(row - 3, 0) : row + 2]):
        return True
    tree = parse_source(source)
    if tree is None:
        return False
    functions = _functions_around(tree, row)
    if functions and any(_NAN_WORDS.search(line) for line in _opening(functions[-1], lines)):
        return True  # bokeh's "NaN-like floats … are treated as missing", then val != val
    name = compared.group(1)
    return _float_checked(tree, row, name, ()) or _missing_as_none_or_nan(tree, row, name)


def _missing_as_none_or_nan(tree: ast.Module, row: int, name: str) -> bool:
    """Whether ``name is None or name != name`` stands on ``row``: a value missing as
    ``None`` or as NaN (clickhouse-connect's ``0.0 if value is None or value != value``),
    or its converse, ``name is not None and name == name`` (momepy's ids that are
    present)."""

    def asks(test: ast.expr, op: type[ast.cmpop], right: ast.expr | None) -> bool:
        return (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == name
            and len(test.ops) == 1
            and isinstance(test.ops[0], op)
            and ast.dump(test.comparators[0]) == ast.dump(right if right else test.left)
        )

    none = ast.Constant(value=None)
    forms = {ast.Or: (ast.Is, ast.NotEq), ast.And: (ast.IsNot, ast.Eq)}
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.BoolOp) and node.lineno <= row <= (node.end_lineno or node.lineno)
        ):
            continue
        is_none, to_itself = forms[type(node.op)]
        if any(asks(v, is_none, none) for v in node.values) and any(
            asks(v, to_itself, None) for v in node.values
        ):
            return True
    return False


def _opening(function: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> list[str]:
    """The lines that open ``function``: its ``def``, its docstring and the comments
    before its first statement, where a function says what it is for."""
    first = function.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        end = first.end_lineno or first.lineno
    else:
        end = first.lineno - 1
    return lines[function.lineno - 1 : end]


def _float_checked(node: ast.AST, row: int, name: str, tests: tuple[ast.expr, ...]) -> bool:
    """Whether an ``isinstance(name, float)`` stands in ``tests`` (the tests of the
    ``if``s whose body holds ``row``) or in the statement on ``row``, below ``node``."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, ast.stmt) or not (
            child.lineno <= row <= (child.end_lineno or child.lineno)
        ):
            continue
        if isinstance(child, ast.If | ast.While) and child.test.lineno <= row <= (
            child.test.end_lineno or child.test.lineno
        ):
            return any(_checks_float(test, name) for test in (*tests, child.test))
        if not any(isinstance(inner, ast.stmt) for inner in ast.iter_child_nodes(child)):
            return any(_checks_float(test, name) for test in (*tests, child))
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return _float_checked(child, row, name, ())  # an outer test decides no call
        if isinstance(child, ast.If) and child.body[0].lineno <= row <= (
            child.body[-1].end_lineno or child.body[-1].lineno
        ):
            tests = (*tests, child.test)
        return _float_checked(child, row, name, tests)
    return False


def _checks_float(node: ast.AST, name: str) -> bool:
    return any(
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "isinstance"
        and len(call.args) == 2
        and ast.unparse(call.args[0]) == name
        and any(isinstance(t, ast.Name) and t.id == "float" for t in ast.walk(call.args[1]))
        for call in ast.walk(node)
    )


def imports_the_same_again(source: str, row: int, message: str) -> bool:
    """Whether ruff's F811 ``message`` on ``row`` is an import of what the first import of
    the name already bound: pykwalify 1.8's ``types.py`` says ``import re`` twice. Worth
    a word (delete the copy), but nothing is lost, unlike a function defined over another.
    A name taken from a package and again from one of its modules is taken as the same:
    openapi-schema-validator's tests import ``OAS32Validator`` from the package and from
    ``openapi_schema_validator.validators``, which the package re-exports."""
    found = _redefinition(source, message)
    if found is None:
        return False
    tree, name, first = found
    bound = _imports_binding(tree, name)
    before, now = bound.get(first), bound.get(row)
    return before is not None and now is not None and _the_same_import(before, now)


def _the_same_import(one: str, other: str) -> bool:
    """``re`` and ``re``; ``pkg.X`` and ``pkg.sub.X`` (a package's re-export), also
    relative to the same package (``..types.X`` and ``..types.params.X``, anthropic's
    generated resources); ``typing.X`` and ``collections.abc.X`` (typing's alias of the
    class, flair's ``Iterable``) or ``typing_extensions.X``."""
    if one == other:
        return True
    if {one.rpartition(".")[0], other.rpartition(".")[0]} <= _TYPING_HOMES and (
        one.rpartition(".")[2] == other.rpartition(".")[2]
    ):
        return True
    (a, _, leaf_a), (b, _, leaf_b) = one.rpartition("."), other.rpartition(".")
    level_a, level_b = len(a) - len(a.lstrip(".")), len(b) - len(b.lstrip("."))
    if leaf_a != leaf_b or level_a != level_b or not a.lstrip(".") or not b.lstrip("."):
        return False
    return b.startswith(a + ".") or a.startswith(b + ".")


# Where typing's names live: its aliases of collections.abc's classes, and
# typing_extensions' copies of typing's own.
_TYPING_HOMES = frozenset({"typing", "typing_extensions", "collections.abc"})


def _redefinition(source: str, message: str) -> tuple[ast.Module, str, int] | None:
    """The parsed source, the name and the line of its first binding that ruff's F811
    ``message`` names; None if it names none or the source does not parse."""
    match = _REDEFINED.search(message)
    tree = parse_source(source) if match else None
    if match is None or tree is None:
        return None
    return tree, match.group(1), int(match.group(2))


def _imports_binding(tree: ast.Module, name: str) -> dict[int, str]:
    """Line → what the import statement there binds to ``name`` (see :func:`_imported_as`)."""
    return {
        node.lineno: target
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        and (target := _imported_as(node, name)) is not None
    }


# Security words with other common senses, counted in names only, not in prose: panel's
# md5 of a closure "so that a function recreated for each session shares a cache" keys a
# cache; a ``session_id`` hashed is another matter. So with a lexer's token, a number's sign.
_NAMES_ONLY = frozenset({"session", "token", "sign", "signed"})

# Words that put a hash to a security use: what bandit's S324 is about. ``key`` is left out
# (a cache key is the commonest use of md5 there is), and so is ``check``.
_SECURITY_WORDS = frozenset(
    {
        "auth",
        "authenticate",
        "authentication",
        "credential",
        "credentials",
        "crypt",
        "csrf",
        "decrypt",
        "encrypt",
        "hmac",
        "integrity",
        "login",
        "nonce",
        "passwd",
        "password",
        "pwd",
        "salt",
        "secret",
        "session",
        "sign",
        "signature",
        "signed",
        "token",
        "verify",
    }
)


def hashes_for_no_security(source: str, row: int) -> bool:
    """Whether the function around ``row`` (the statement, at module level) names nothing
    a hash protects: no password, token, signature, salt, session, ``verify``…
    xhtml2pdf 0.2.28 tells two font files apart by their md5. An md5 there is a
    fingerprint, which a collision could at worst confuse; worth a warning
    (``usedforsecurity=False`` says so and keeps FIPS builds working), not an
    "important" label, which stays for a weak hash beside a password or a token. A
    session, a token or a sign in prose (a docstring, a string) is not counted: panel's
    closure key is for "a function recreated for each session"."""
    tree = parse_source(source)
    if tree is None:
        return False
    functions = _functions_around(tree, row)
    statements = [s for s in tree.body if s.lineno <= row <= (s.end_lineno or s.lineno)]
    scopes: list[ast.AST] = [*statements, *functions]  # walked outside in: the last is innermost
    if not scopes:
        return False
    scope = scopes[-1]
    words: set[str] = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, ast.arg):
            text = node.arg
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            text = node.name
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            prose = name_words(re.sub(r"[^\w.\-]+", " ", node.value))
            words.update(w for w in prose if w not in _NAMES_ONLY)
            continue
        else:
            continue
        words.update(name_words(text))
    return not words & _SECURITY_WORDS


# Calls that read what they are given and keep no reference to it.
_READ_ONLY_CALLS = frozenset(
    {
        "len", "iter", "sorted", "list", "tuple", "set", "frozenset", "dict", "str",
        "repr", "bool", "any", "all", "min", "max", "sum", "enumerate", "zip",
        "reversed", "isinstance", "print", "format", "hash", "id", "type",
    }
)  # fmt: skip


def default_only_read(source: str, row: int) -> bool:
    """Whether every mutable default (B006) on ``row`` belongs to a parameter its function
    only reads: no item set or deleted, no mutating method, no augmented assignment, not
    passed to a call that could keep or change it (builtins that read aside), not
    returned, yielded, stored or aliased. py-cpuinfo 9's
    ``_filter_dict_keys_with_empty_values(info, acceptable_values = {})`` only looks
    keys up: the shared dict is never changed, so the classic trap cannot spring. Nor
    can it where the default is only unpacked into a call (keras' tests'
    ``optimizer_class(**init_kwargs)``): the callee gets a copy. An
    override may hand it to the method it overrides (``super().name(…, x)``), whose own
    default it mirrors: the trap, if any, is the base's, which the PR left alone. Still
    worth a word (``None`` or a ``MappingProxyType`` says so), not a warning."""
    defaults = _mutable_defaults_on(source, row)
    return bool(defaults) and all(_only_read(f, p.arg) for f, p in defaults)


_CACHE_WORDS = frozenset({"cache", "caches", "cached", "memo", "memos"})


# What a class keeps for all its instances on purpose: devito's ``_scoped_caches = {}``
_SHARED_STORE_WORDS = _CACHE_WORDS | {"registry", "registries", "instances"}


def named_as_a_shared_store(source: str, row: int) -> bool:
    """Whether the class attribute assigned on ``row`` (RUF012) is named as a store kept
    for every instance: a cache, a registry, a singleton's instances."""
    tree = parse_source(source)
    if tree is None:
        return False
    names = _class_attributes_on(tree, row)
    return bool(names) and all(_SHARED_STORE_WORDS & set(_words_of(name)) for name in names)


def shared_on_purpose(source: str, row: int) -> bool:
    """Whether every mutable default on ``row`` (B006) belongs to a parameter named as a
    cache (matplotlib's ``_cache=weakref.WeakKeyDictionary()``, a ``memo={}``): one store
    kept across calls is what such a default is for."""
    defaults = _mutable_defaults_on(source, row)
    return bool(defaults) and all(_CACHE_WORDS & set(_words_of(p.arg)) for _, p in defaults)


def _mutable_defaults_on(
    source: str, row: int
) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, ast.arg]]:
    """The functions and parameters whose mutable default (a dict, list or set display,
    or a call) spans ``row``."""
    tree = parse_source(source)
    if tree is None:
        return []
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        pairs = list(
            zip(
                positional[len(positional) - len(arguments.defaults) :],
                arguments.defaults,
                strict=True,
            )
        )
        pairs += [
            (a, d)
            for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
            if d is not None
        ]
        found += [
            (function, parameter)
            for parameter, default in pairs
            if default.lineno <= row <= (default.end_lineno or default.lineno)
            and isinstance(default, ast.Dict | ast.List | ast.Set | ast.Call)
        ]
    return found


def _only_read(function: ast.AST, name: str) -> bool:
    """Whether ``name`` is only read in ``function`` (see :func:`default_only_read`)."""
    parents = _parent_map(function)
    for node in ast.walk(function):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        if isinstance(node.ctx, ast.Store | ast.Del):
            return False  # rebound: what it holds then is another story
        parent = parents.get(node)
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if not isinstance(parent.ctx, ast.Load):
                return False
            continue
        if isinstance(parent, ast.Attribute):
            if parent.attr in _MUTATING_METHODS or parent.attr.startswith("__i"):
                return False
            continue
        if isinstance(parent, ast.Compare | ast.BoolOp | ast.UnaryOp | ast.comprehension):
            continue
        if isinstance(parent, ast.If | ast.While | ast.IfExp | ast.For | ast.Assert):
            continue
        if isinstance(parent, ast.Call) and node in parent.args:
            if isinstance(parent.func, ast.Name) and parent.func.id in _READ_ONLY_CALLS:
                continue
            if _calls_its_namesake(parent, function):
                continue
            return False
        if isinstance(parent, ast.keyword) and _calls_its_namesake(parents.get(parent), function):
            continue
        if (isinstance(parent, ast.keyword) and parent.arg is None) or (
            isinstance(parent, ast.Starred) and isinstance(parents.get(parent), ast.Call)
        ):
            continue  # f(**name), f(*name): the call gets a copy
        if isinstance(parent, ast.BinOp) and not isinstance(parents.get(parent), ast.AugAssign):
            continue
        return False  # returned, yielded, stored, passed on, aliased: it may change later
    return True


def _calls_its_namesake(call: ast.AST | None, function: ast.AST) -> bool:
    """Whether ``call`` is ``super().name(…)`` or ``Base.name(…)`` (``.__func__`` too)
    inside the method ``name``: an override handing its default to the method it
    overrides, whose own default it mirrors (asyncpg's tests' ``get_connection_spec``)."""
    if not isinstance(call, ast.Call) or not isinstance(
        function, ast.FunctionDef | ast.AsyncFunctionDef
    ):
        return False
    called = call.func
    if isinstance(called, ast.Attribute) and called.attr == "__func__":
        called = called.value
    return isinstance(called, ast.Attribute) and called.attr == function.name


def filters_where_python_can(source: str, row: int) -> bool:
    """Whether the ``extractall`` on ``row`` (S202) is the fallback of a version check
    whose other branch extracts with ``filter=``: nodeenv 1.12 writes
    ``if sys.version_info >= (3, 12): tarf.extractall(d, filter="data")`` ``else:
    tarf.extractall(d)``. The author made the safe call where it exists (and 3.8.17,
    3.9.17, 3.10.12 and 3.11.4 have it too, which is worth a word)."""
    tree = parse_source(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not _checks_the_version(node.test):
            continue
        for here, there in ((node.body, node.orelse), (node.orelse, node.body)):
            if any(_extracts(s, row, filtered=False) for s in here) and any(
                _extracts(s, None, filtered=True) for s in there
            ):
                return True
    return False


def _checks_the_version(test: ast.expr) -> bool:
    """A test that reads ``sys.version_info`` or asks whether ``tarfile`` has its
    ``data_filter``."""
    return any(
        (isinstance(n, ast.Attribute) and n.attr in ("version_info", "data_filter"))
        or (isinstance(n, ast.Constant) and n.value == "data_filter")
        for n in ast.walk(test)
    )


def _extracts(statement: ast.stmt, row: int | None, *, filtered: bool) -> bool:
    """Whether ``statement`` holds an ``extractall``/``extract`` call (on ``row``, if
    given) that passes ``filter=`` (or does not)."""
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in ("extractall", "extract")
        and (row is None or n.lineno <= row <= (n.end_lineno or n.lineno))
        and any(k.arg == "filter" for k in n.keywords) is filtered
        for n in ast.walk(statement)
    )


_PICKLES = frozenset({"dump", "dumps", "Pickler"})
_UNPICKLES = frozenset({"load", "loads", "Unpickler"})


def loads_what_it_pickled(source: str, row: int) -> bool:
    """Whether the unpickling on ``row`` (S301) reads what its own function (or the
    module, outside one) pickled before with the same module: a round trip, the data
    made right there (see the module docstring)."""
    tree = parse_source(source)
    if tree is None:
        return False
    scope = _innermost_scope(tree, row)
    loads = [c for c in _module_calls(scope, _UNPICKLES) if c[0].lineno == row]
    if not loads:
        return False
    dumps = _module_calls(scope, _PICKLES)
    return all(
        any(
            module == load_module
            and (
                (dump.end_lineno or dump.lineno) < load.lineno
                or any(dump is n for n in ast.walk(load))
            )
            for dump, module in dumps
        )
        for load, load_module in loads
    )


def _module_calls(scope: ast.AST, names: frozenset[str]) -> list[tuple[ast.Call, str]]:
    """Calls ``module.name(…)`` in ``scope`` with ``name`` in ``names``, and the module."""
    return [
        (node, node.func.value.id)
        for node in ast.walk(scope)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in names
        and isinstance(node.func.value, ast.Name)
    ]


def a_field_specifier(source: str, row: int, column: int) -> bool:
    """Whether the call at ``row``/``column`` (RUF009, a call as a dataclass default) is
    named ``field`` or ``Field``, or ends so (``config_field``, ``IntField``): a field
    specifier that tells the dataclass machinery how to build the field, as
    ``dataclasses.field`` does. desert's ``x: datetime = desert.field(NaiveDateTime())``
    returns a ``dataclasses.field`` with marshmallow metadata; ruff knows only the
    standard library's and attrs' by name."""
    tree = parse_source(source)
    offset = byte_offset(source, row, column)
    if tree is None or offset is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (node.lineno, node.col_offset) == (row, offset):
            name = called_name(node.func) or ""
            return name in ("field", "Field") or name.endswith(("_field", "Field"))
    return False


_OVERLOADABLE = (ast.BitOr, ast.BitAnd, ast.BitXor, ast.RShift, ast.LShift, ast.MatMult)


def an_operator_dsl(source: str, row: int) -> bool:
    """Whether the comparison standing alone on ``row`` (B015) pipes a value into a call
    with ``|``, ``>>``, ``&``, … : an assertion library's or a pipeline's overloaded
    operators, which do their work when evaluated. grappa's tests write
    ``error | should.raise_error(AssertionError) > should.equal('foo')``; plain values
    are not combined so and then compared for nothing."""
    tree = parse_source(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Expr) and _on_row(node, row)):
            continue
        if not isinstance(node.value, ast.Compare):
            continue
        for inner in ast.walk(node.value):
            if (
                isinstance(inner, ast.BinOp)
                and isinstance(inner.op, _OVERLOADABLE)
                and any(isinstance(side, ast.Call) for side in (inner.left, inner.right))
            ):
                return True
    return False


def in_the_main_block(source: str, row: int) -> bool:
    """Whether ``row`` is in the module's ``if __name__ == "__main__":`` block: code that
    runs once when the file is a script, whose open files the interpreter's exit closes
    (hexdump 3.3's ``hexdump(open(args[0], 'rb'))``)."""
    tree = parse_source(source)
    if tree is None:
        return False
    return any(
        isinstance(node, ast.If)
        and node.lineno < row <= (node.end_lineno or node.lineno)
        and isinstance(node.test, ast.Compare)
        and {
            n.id if isinstance(n, ast.Name) else n.value
            for n in (node.test.left, *node.test.comparators)
            if isinstance(n, ast.Name) or (isinstance(n, ast.Constant) and isinstance(n.value, str))
        }
        == {"__name__", "__main__"}
        for node in tree.body
    )


def repeats_a_number_of_times(source: str, row: int) -> bool:
    """Whether the loop on ``row`` (B007, its variable unused) iterates a ``range``: "do
    this n times", where the count is the point and the index is not (ping3's tests:
    ``for round_idx in range(num_rounds):``). Renaming it ``_`` says so; worth a word,
    not a warning, as an unused variable of a loop over data may be."""
    tree = parse_source(source)
    return tree is not None and any(
        isinstance(node, ast.For | ast.AsyncFor)
        and node.lineno == row
        and isinstance(node.iter, ast.Call)
        and called_name(node.iter.func) == "range"
        for node in ast.walk(tree)
    )


def returns_when_there(source: str, row: int) -> bool:
    """Whether the function at ``row`` (RET503: it falls off its end after returning a
    value elsewhere) ends with an ``if`` that only asks whether a value is there (``if
    x:``, ``if x is not None:``, ``if self._message:``) and returns from its body: with
    nothing there the None that falls out is the answer (ntlm-auth's ``session_key``,
    param's weak-method ``__call__``). A branch that compares (``if x > 0:``) may have
    left a case out, and keeps the warning."""
    tree = parse_source(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        starts = [node.lineno, *(d.lineno for d in node.decorator_list)]
        if row not in starts:
            continue
        last = node.body[-1]
        return (
            isinstance(last, ast.If)
            and not last.orelse
            and _asks_whether_there(last.test)
            and isinstance(last.body[-1], ast.Return)
        )
    return False


def _asks_whether_there(test: ast.expr) -> bool:
    """``x``, ``self.x``, ``x is not None``."""
    if isinstance(test, ast.Compare):
        return (
            len(test.ops) == 1
            and isinstance(test.ops[0], ast.IsNot)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
            and _a_plain_name(test.left)
        )
    return _a_plain_name(test)


def _a_plain_name(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def counts_its_items(source: str, row: int) -> bool:
    """Whether the loop on ``row`` (B007, its variable unused) does nothing but count or
    drain: every statement of its body adds one to a counter (minio's tests: ``for
    bucket in buckets: count += 1``), or the body is ``pass`` (gql's tests drain a
    subscription, ``async for result in session.subscribe(query): pass``, under
    ``pytest.raises``). The iterating is the point, as in a ``range`` loop."""
    tree = parse_source(source)
    return tree is not None and any(
        isinstance(node, ast.For | ast.AsyncFor)
        and node.lineno == row
        and not node.orelse
        and (
            all(_adds_one(statement) for statement in node.body)
            or all(isinstance(statement, ast.Pass) for statement in node.body)
        )
        for node in ast.walk(tree)
    )


def _adds_one(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.AugAssign)
        and isinstance(statement.op, ast.Add)
        and isinstance(statement.value, ast.Constant)
        and statement.value.value == 1
        and type(statement.value.value) is int
    )


def unpacked_beside_used_names(source: str, row: int, column: int) -> bool:
    """Whether the loop variable B007 names at ``row``/``column`` is one of several a
    ``for`` unpacks and the loop body reads another of them (pefile's tests:
    ``for root, dirs, files in os.walk(d):`` with ``dirs`` unread). The loop is doing its
    work; the name left over asks for a ``_`` prefix, worth a word. A loop none of whose
    names is read may iterate the wrong thing, and stays a warning."""
    tree = parse_source(source)
    offset = byte_offset(source, row, column)
    if tree is None or offset is None:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.For | ast.AsyncFor) or isinstance(node.target, ast.Name):
            continue
        names = [n for n in ast.walk(node.target) if isinstance(n, ast.Name)]
        if not any((n.lineno, n.col_offset) == (row, offset) for n in names):
            continue
        read = {
            n.id
            for statement in node.body
            for n in ast.walk(statement)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        return any(n.id in read for n in names)
    return False


# Exceptions a command-line framework catches to print their message alone (argparse's
# type converters, click's and typer's parameter errors) and SystemExit: no traceback
# ever shows what they were raised from.
_SHOWN_AS_MESSAGES = frozenset(
    {"ArgumentTypeError", "ArgumentError", "BadParameter", "BadArgumentUsage"}
    | {"BadOptionUsage", "UsageError", "ClickException", "FileError", "Abort", "Exit"}
    | {"SystemExit"}
)


def raises_a_usage_message(source: str, row: int) -> bool:
    """Whether the ``raise`` on ``row`` (B904: raised in an ``except`` without ``from``)
    raises what a command line prints as a message (webvtt-py's ``raise
    argparse.ArgumentTypeError(f'invalid duration: {value!r}')`` in an argparse
    ``type=``): ``from err`` would keep a chain nothing shows."""
    tree = parse_source(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.lineno == row and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            return called_name(raised) in _SHOWN_AS_MESSAGES
    return False


def raised_where_expected(source: str, row: int) -> bool:
    """Whether ``row`` is in the body of a ``with`` that expects an exception
    (``pytest.raises``, ``assertRaises``, …): exceptiongroup's tests raise in an
    ``except`` there to see what the new exception's ``__context__`` holds."""
    tree = parse_source(source)
    return tree is not None and any(
        isinstance(node, ast.With | ast.AsyncWith)
        and any(_expects_a_raise(item.context_expr) for item in node.items)
        and any(isinstance(s, ast.Raise) and _on_row(s, row) for s in _statements(node.body))
        for node in ast.walk(tree)
    )


def a_literal_value(source: str, row: int, column: int) -> bool:
    """Whether the F821 at ``row``/``column`` is inside a string that is a value of a
    ``Literal[...]`` (``Literal`` under any module: defopt re-exports typing's, and its
    tests write ``defopt.Literal[1, "a"]``). Ruff reads such a string as a forward
    reference when it does not know the ``Literal`` is typing's; it names no name."""
    tree = parse_source(source)
    offset = byte_offset(source, row, column)
    if tree is None or offset is None:
        return False
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Subscript) and called_name(node.value) == "Literal"):
            continue
        for value in ast.walk(node.slice):
            if (
                isinstance(value, ast.Constant)
                and isinstance(value.value, str)
                and value.lineno == row == value.end_lineno
                and value.col_offset <= offset < (value.end_col_offset or 0)
            ):
                return True
    return False


_LOCAL_NAME = re.compile(r"local name `([A-Za-z_]\w*)`")


def fills_in_a_missing_argument(source: str, row: int, message: str) -> bool:
    """Whether the argument PLR1704 names is rebound on ``row`` only where the caller gave
    none: under ``if name is None:`` or ``if not name:``. camelot 2 opens the PDF itself
    when no open one was passed (``if pdf is None: with playa.open(…) as pdf:``), as
    ``name = default`` there would, which ruff leaves alone."""
    found = _LOCAL_NAME.search(message)
    tree = parse_source(source)
    if found is None or tree is None:
        return False
    name = found.group(1)
    parents = _parent_map(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.lineno != row:
            continue
        child: ast.AST = node
        parent = parents.get(node)
        while parent is not None and not isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef):
            if isinstance(parent, ast.If) and child in parent.body and _missing(parent.test, name):
                return True
            child, parent = parent, parents.get(parent)
    return False


def _missing(test: ast.expr, name: str) -> bool:
    """``name is None`` or ``not name``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return isinstance(test.operand, ast.Name) and test.operand.id == name
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == name
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    )


def rebinds_from_itself(source: str, row: int, message: str) -> bool:
    """Whether the argument PLR1704 names is rebound on ``row`` from a value made of
    itself: asyncclick's ``with _pager_contextmanager(color=color) as (stream, encoding,
    color):`` resolves the ``color`` the caller gave to the one to use, on purpose. A
    ``for`` or ``with`` that throws the argument away for something else keeps the
    warning."""
    found = _LOCAL_NAME.search(message)
    tree = parse_source(source)
    if found is None or tree is None:
        return False
    name = found.group(1)
    for node in ast.walk(tree):
        if isinstance(node, ast.With | ast.AsyncWith) and node.lineno == row:
            sources: list[ast.AST] = [item.context_expr for item in node.items]
        elif isinstance(node, ast.For | ast.AsyncFor) and node.lineno == row:
            sources = [node.iter]
        else:
            continue
        if any(
            isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
            for source_node in sources
            for n in ast.walk(source_node)
        ):
            return True
    return False
