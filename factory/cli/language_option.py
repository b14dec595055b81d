"""The ``--language`` option of the one-program commands, and the language a program file is in."""

from __future__ import annotations

from pathlib import Path

import typer

from factory.errors import UserError
from factory.languages import Language, UnknownLanguage, language, language_of_file

LANGUAGE_OPT = typer.Option(
    "--language",
    help="The program's language (python, javascript); default: FILE's extension (.py, .js), "
    "python for --batch.",
)
#: The language of a batch without ``--language`` (its lines name no file).
BATCH_DEFAULT = "python"


def program_language(file: Path | None, name: str | None) -> Language:
    """``--language NAME`` when given, else the language of FILE's extension (``BATCH_DEFAULT``
    without FILE); UserError for an unknown name or an extension no language claims."""
    try:
        if name is not None:
            return language(name)
        if file is None:
            return language(BATCH_DEFAULT)
        return language_of_file(file)
    except UnknownLanguage as exc:
        hint = "" if name is not None else " (or give --language NAME)"
        raise UserError(f"{exc}{hint}") from None
