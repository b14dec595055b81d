"""The ``execverify`` command line: one command per pipeline stage plus per-program debugging tools.

Every command module registers itself on ``app``; ``main`` turns a UserError, or a usage mistake
(an unknown command or option, a bad or missing value), into one line on stderr and exit code 2
(never a traceback).
"""

from __future__ import annotations

import sys
from types import ModuleType

import typer
import typer.core
import typer.main

from factory.errors import UserError

PROG = "execverify"
MAX_USAGE_LINE = 300  # characters of a usage error's message (it may echo what was typed)

app = typer.Typer(
    name=PROG,
    help="Execution-reasoning dataset factory: synthesize, run, trace and question programs"
    " (Python, JavaScript).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def register_commands() -> None:
    """Import every command module (each adds its commands to ``app``)."""
    # Imported for their @app.command side effects; each module owns its commands.
    import importlib

    for name in ("stages", "run", "trace", "score", "solvers", "release", "phase2", "grammar"):
        try:
            importlib.import_module(f"factory.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"factory.cli.{name}":
                raise


def _click_modules() -> list[ModuleType]:
    """The click(s) whose exceptions the parser may raise: the one typer itself uses (recent
    typers bundle theirs as ``typer._click``; older ones use the real ``click``), and the real
    ``click`` when it is installed (a callback may raise its exceptions)."""
    modules = [getattr(typer.core, "_click", None)]
    try:
        import click
    except ImportError:  # recent typers do not need it
        pass
    else:
        modules.append(click)
    unique: list[ModuleType] = []
    for module in modules:
        if module is not None and module not in unique:
            unique.append(module)
    return unique


def _classes(name: str, *extra: type[BaseException]) -> tuple[type[BaseException], ...]:
    """The exception class ``name`` of every click in use (``exceptions.name``, else ``name``)."""
    found: list[type[BaseException]] = list(extra)
    for module in _click_modules():
        cls = getattr(getattr(module, "exceptions", None), name, None) or getattr(module, name, None)
        if isinstance(cls, type) and issubclass(cls, BaseException) and cls not in found:
            found.append(cls)
    return tuple(found)


_CLICK_ERRORS = _classes("ClickException")
_USAGE_ERRORS = _classes("UsageError")
_NO_ARGS = _classes("NoArgsIsHelpError")
_ABORT = _classes("Abort", typer.Abort)
_EXIT = _classes("Exit", typer.Exit)


def _command_path(argv: list[str]) -> str:
    """``execverify grammar check``: the (sub)commands named in ``argv``, for a usage error that
    carries no context (click raises "Option '--x' requires an argument." without one)."""
    command = typer.main.get_command(app)
    path = [PROG]
    for token in argv:
        commands = getattr(command, "commands", None)
        if not isinstance(commands, dict) or token not in commands:
            break
        command = commands[token]
        path.append(token)
    return " ".join(path)


def usage_line(exc: BaseException, argv: list[str] | None = None) -> str:
    """One line for a click/typer error: its message and, for a usage mistake, where help is."""
    try:
        message = exc.format_message()  # type: ignore[attr-defined]
    except Exception:
        message = str(exc)
    message = " ".join(str(message).split()) or type(exc).__name__
    if len(message) > MAX_USAGE_LINE:
        message = message[: MAX_USAGE_LINE - 1] + "…"
    ctx = getattr(exc, "ctx", None) if isinstance(exc, _USAGE_ERRORS) else None
    if ctx is not None:
        try:
            names = ctx.help_option_names
            if names and ctx.command.get_help_option(ctx) is not None:
                message += f" — see '{ctx.command_path} {names[0]}'"
        except Exception:
            pass
    elif isinstance(exc, _USAGE_ERRORS):
        argv = sys.argv[1:] if argv is None else argv
        message += f" — see '{_command_path(argv)} --help'"
    return message


#: Stage commands of 0.2 (top level then), and where 0.3 put them: a script that still calls the
#: old name gets one line saying the new one.
MOVED = {
    ("synthesize",): "stage synthesize",
    ("inputs",): "stage inputs",
    ("execute",): "stage execute",
    ("traces",): "stage trace",
    ("tasks",): "stage tasks",
    ("phase2", "build"): "stage phase2",
    ("difficulty",): "stage difficulty",
    ("sft",): "stage sft",
    ("assemble",): "stage assemble",
}


def _moved(argv: list[str]) -> str | None:
    for old, new in MOVED.items():
        if tuple(argv[: len(old)]) == old:
            return f"'{PROG} {' '.join(old)}' is now '{PROG} {new}' (the stages are under '{PROG} stage')"
    return None


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``execverify`` console script."""
    register_commands()
    moved = _moved(sys.argv[1:] if argv is None else argv)
    if moved is not None:
        print(f"{PROG}: error: {moved}", file=sys.stderr)
        sys.exit(2)
    try:
        rc = app(args=argv, prog_name=PROG, standalone_mode=False)
    except UserError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except _NO_ARGS as exc:
        # A group called without a command: its help (typer's rich help is already printed).
        text = getattr(exc, "message", "") or ""
        if text.strip():
            print(text)
        sys.exit(0)
    except _ABORT:
        print(f"{PROG}: aborted", file=sys.stderr)
        sys.exit(130)
    except _CLICK_ERRORS as exc:
        print(f"{PROG}: error: {usage_line(exc, argv)}", file=sys.stderr)
        sys.exit(2)
    except _EXIT as exc:
        sys.exit(getattr(exc, "exit_code", 0))
    if isinstance(rc, int) and rc:
        sys.exit(rc)
