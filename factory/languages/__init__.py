"""The programming languages programs are written in: the ``Language`` interface and its registry.

A grammar folder names its language (the ``statements:`` key of its statements file, see
grammars/README.md); ``language(name)`` gives the implementation. Python is built in; another
language registers itself with ``register`` (this process) or is named in ``LANGUAGES_ENV``
(this process and every process started from it: the stages' worker processes resolve the
language by name too). See docs/languages.md.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from factory.languages.base import (
    Analysis,
    CoreTypes,
    Language,
    NodeKinds,
    Signature,
    StatementLine,
    TierSyntax,
)

__all__ = [
    "LANGUAGES_ENV",
    "Analysis",
    "CoreTypes",
    "Language",
    "NodeKinds",
    "Signature",
    "StatementLine",
    "TierSyntax",
    "UnknownLanguage",
    "grammar_language",
    "known_languages",
    "language",
    "language_of_file",
    "register",
    "unregister",
]

# Built-in languages, imported on first use ("module:attribute" of the Language instance).
_BUILTIN = {
    "python": "factory.languages.python:PYTHON",
    "javascript": "factory.languages.javascript:JAVASCRIPT",
}
#: Languages importable by every process: ``name=module:attribute`` entries, comma-separated
#: (``EXECVERIFY_LANGUAGES=javascript=mylangs.js:JS``), imported on first use like the built-ins.
LANGUAGES_ENV = "EXECVERIFY_LANGUAGES"
_LOADED: dict[str, Language] = {}


class UnknownLanguage(LookupError):
    """No language of that name is built in or registered."""


def _importable() -> dict[str, str]:
    """The built-in languages and those of ``LANGUAGES_ENV``: name -> "module:attribute"."""
    targets = {}
    for entry in filter(None, (e.strip() for e in os.environ.get(LANGUAGES_ENV, "").split(","))):
        name, sep, target = entry.partition("=")
        if not sep or ":" not in target:
            raise ValueError(f"{LANGUAGES_ENV}: {entry!r} is not name=module:attribute")
        targets[name.strip()] = target.strip()
    return {**targets, **_BUILTIN}


def known_languages() -> list[str]:
    """The names ``language`` accepts, sorted."""
    return sorted(set(_importable()) | set(_LOADED))


def language(name: str) -> Language:
    """The language a grammar folder names; UnknownLanguage when there is none."""
    found = _LOADED.get(name)
    if found is None:
        target = _importable().get(name)
        if target is None:
            raise UnknownLanguage(f"unknown language {name!r} (known: {', '.join(known_languages())})")
        module, _, attribute = target.partition(":")
        found = _LOADED[name] = getattr(importlib.import_module(module), attribute)
    return found


def register(lang: Language) -> None:
    """Make ``lang`` available under ``lang.name`` in this process; ValueError when the name is
    taken. (Worker processes do not see it: name it in ``LANGUAGES_ENV`` for stages that build
    items in workers.)"""
    if lang.name in _BUILTIN or lang.name in _LOADED:
        raise ValueError(f"language {lang.name!r} is already registered")
    _LOADED[lang.name] = lang


def unregister(name: str) -> None:
    """Forget a language ``register`` added, or one of ``LANGUAGES_ENV`` loaded (test fixtures
    clean up with it)."""
    if name in _BUILTIN:
        raise ValueError(f"language {name!r} is built in")
    _LOADED.pop(name, None)


def grammar_language(folder: str | Path) -> str:
    """The name of the language a grammar folder is written in (its statements file's
    ``statements:`` key); the loader's GrammarError (``file:line: message``) for a bad folder.
    It loads the whole grammar (0.3 s), the one reader of the key."""
    from factory.grammar.loader import load_grammar  # the loader imports this package

    return load_grammar(folder).language


def language_of_file(path: str | Path) -> Language:
    """The language whose ``file_suffixes`` hold the file's ending (``prog.js``: JavaScript);
    UnknownLanguage naming the ending when no language claims it. The built-in languages are
    asked first: one registered later (a variant of Python) does not take ``.py`` from Python."""
    suffix = Path(path).suffix
    for name in [*_BUILTIN, *known_languages()]:
        lang = language(name)
        if suffix and suffix in lang.file_suffixes:
            return lang
    shown = f"extension {suffix!r}" if suffix else "no extension"
    raise UnknownLanguage(
        f"{Path(path).name}: {shown} names no language (known: {', '.join(known_languages())})"
    )
