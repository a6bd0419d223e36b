"""What ``--help`` shows, read from the source of the module that defines it, without
importing that module: ``judged X --help`` and ``judged --version`` import no numpy,
pyarrow or registry and answer in well under 0.15 s.

    power = declared("judged.analyses.meta.power")
    power.DEFAULT_SAMPLES, power.__doc__     # read from meta/power.py's text

A module's docstring and its top-level names bound once to a literal (strings, numbers,
tuples, lists, dicts and sets of them: :func:`ast.literal_eval`) are read from its text;
any other name (a computed value, one rebound or changed in place) imports the module and
is its attribute, the same value, only slower. A module already imported (a command about
to run: ``judged.cli.ENGINES``) answers for itself: reading its text would only cost time
(0.1 G instructions for eval's options). The value has one home, its module; the help test
(``tests/cli/test_cli_help.py``) fails when building any command's help imports a heavy
module.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys

_COMPUTED = object()  # a name not bound once to a literal in the module's text
# methods that change a list, dict or set in place: a name they are called on is not a constant
_MUTATORS = "append|extend|insert|update|setdefault|pop|popitem|clear|remove|add|discard|sort|reverse"


@functools.lru_cache(maxsize=None)
def _text(module: str) -> str:
    """The source of ``module`` (a ``judged.`` module), read from its file, not imported."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # src/judged
    parts = module.split(".")[1:]
    path = os.path.join(root, *parts) + ".py"
    if not os.path.exists(path):
        path = os.path.join(root, *parts, "__init__.py")
    with open(path, encoding="utf-8") as f:
        return f.read()


# one pass of each pattern over a module's text (a pattern per name would cost more to compile)
_TARGETS = (r"^[ \t]*((?:[\w.]+(?:\[[^\]\n]*\])?[ \t]*,[ \t]*)*[\w.]+(?:\[[^\]\n]*\])?)[ \t]*"
            r"(?::[^=\n]*)?[-+*/|&%@^]?=(?!=)")  # the targets of every assignment line
_CHANGED = rf"\b(\w+)\.(?:{_MUTATORS})\(|\b(?:global|nonlocal|as|for|del)[ \t]+(\w+)\b"


@functools.lru_cache(maxsize=None)
def _scan(module: str):
    """(text, {name: offset of its top-level binding}, names bound more than once or changed)."""
    text = _text(module)
    top, seen, changed = {}, set(), set()
    for m in re.finditer(_TARGETS, text, re.M):
        for target in m.group(1).split(","):
            target = target.strip()
            name = re.match(r"\w+", target).group(0)
            if target != name:  # X[k] = ..., X.attr = ...: X changed in place
                changed.add(name)
            elif name in seen:
                changed.add(name)
            else:
                seen.add(name)
                if m.start(1) == m.start() and "," not in m.group(1):
                    top[name] = m.start()
    for m in re.finditer(_CHANGED, text):
        changed.add(m.group(1) or m.group(2))
    return text, top, changed


@functools.lru_cache(maxsize=None)
def _literal(module: str, name: str):
    """The value of ``name`` in ``module``'s text, or _COMPUTED. Only the statement that binds
    it is parsed (parsing whole modules would cost a good part of the 0.15 s)."""
    import ast
    import io
    import tokenize

    if name == "__doc__":  # the first token that is not a comment or a blank line
        for tok in tokenize.generate_tokens(io.StringIO(_text(module)).readline):
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENCODING):
                continue
            return ast.literal_eval(tok.string) if tok.type == tokenize.STRING else None
        return None
    text, top, changed = _scan(module)
    if name not in top or name in changed:
        return _COMPUTED
    statement = text[top[name]:]
    for tok in tokenize.generate_tokens(io.StringIO(statement).readline):  # to the end of the logical line
        if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            statement = "\n".join(statement.split("\n", tok.end[0])[:tok.end[0]])
            break
    try:
        return ast.literal_eval(ast.parse(statement).body[0].value)
    except (SyntaxError, ValueError):
        return _COMPUTED


class Declared:
    # the literal values of one module, read from its text; other names by importing it

    def __init__(self, module: str):
        self._module = module

    @property
    def __doc__(self):  # the module's docstring (this class's own is in the module docstring)
        if self._module in sys.modules:
            return sys.modules[self._module].__doc__
        return _literal(self._module, "__doc__")

    def __getattr__(self, name: str):
        if self._module in sys.modules:
            return getattr(sys.modules[self._module], name)
        value = _literal(self._module, name)
        if value is _COMPUTED:
            return getattr(importlib.import_module(self._module), name)
        return value

    def __repr__(self) -> str:
        return f"<declared values of {self._module}>"


def declared(module: str) -> Declared:
    """The values ``module`` declares, for ``--help`` (see the module)."""
    return Declared(module)


# set by judged.cli.main for a command that imports its engine when it runs (judged.cli.ENGINES):
# a Later value then comes from its imported module, never from the module's text
IMPORT_ON_USE = False


class Later:
    """``declared(module).name`` looked up when first used, not when the parser is built: an
    option's choices (argparse iterates them for help and checks a value given with ``in``)
    or default (its ``str`` in help; :func:`settle` puts the value itself in the parsed
    arguments). So a command line argparse refuses is refused before any module is read or
    imported for its values."""

    def __init__(self, module: str, name: str):
        self._module, self._name = module, name

    @property
    def value(self):
        if IMPORT_ON_USE and self._module not in sys.modules:
            importlib.import_module(self._module)
        return getattr(Declared(self._module), self._name)

    def __iter__(self):
        return iter(self.value)

    def __contains__(self, item) -> bool:
        return item in self.value

    def __str__(self) -> str:
        return str(self.value)

    def __repr__(self) -> str:
        return repr(self.value)


def later(module: str, name: str) -> Later:
    """``declared(module).name``, looked up when first used (see :class:`Later`)."""
    return Later(module, name)


def settle(namespace):
    """The parsed arguments with every :class:`Later` default replaced by its value."""
    for name, value in vars(namespace).items():
        if isinstance(value, Later):
            setattr(namespace, name, value.value)
    return namespace
