"""The ``execverify`` command line: one command per pipeline stage plus per-program debugging tools.

Every command module registers itself on ``app``; ``main`` turns a UserError into one line on
stderr and exit code 2 (never a traceback).
"""

from __future__ import annotations

import sys

import click
import typer

from factory.errors import UserError

app = typer.Typer(
    name="execverify",
    help="Execution-reasoning dataset factory: synthesize, run, trace and question Python programs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_commands() -> None:
    # Imported for their @app.command side effects; each module owns its commands.
    import importlib

    for name in ("run", "stages", "score", "trace", "release", "solvers", "phase2"):
        try:
            importlib.import_module(f"factory.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"factory.cli.{name}":
                raise


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``execverify`` console script."""
    _register_commands()
    try:
        rc = app(args=argv, standalone_mode=False)
    except UserError as exc:
        print(f"execverify: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except click.exceptions.Abort:
        print("execverify: aborted", file=sys.stderr)
        sys.exit(130)
    except click.ClickException as exc:
        print(f"execverify: error: {exc.format_message()}", file=sys.stderr)
        sys.exit(2)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    if isinstance(rc, int) and rc:
        sys.exit(rc)
