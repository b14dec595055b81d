"""``execverify grammar``: inspect and validate grammar folders."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factory.cli import app

grammar_app = typer.Typer(help="Inspect and validate grammar folders.", no_args_is_help=True)
app.add_typer(grammar_app, name="grammar")


@grammar_app.command("check")
def grammar_check(
    folder: Annotated[Path, typer.Argument(help="A language folder.")] = Path("grammars/python"),
) -> None:
    """Validate a grammar folder; problems are reported as file:line: message (exit 2)."""
    from factory.grammar.loader import load_grammar

    grammar = load_grammar(folder)
    types = len(grammar.types)
    print(
        f"{folder}: ok — {types} types, {len(grammar.targets())} operations "
        f"({len(grammar.operations)} variants), {len(grammar.predicates)} predicates, "
        f"hash {grammar.grammar_hash}"
    )
