"""The configs of a release, as a table: which input each reads and which of its rows it keeps.

The tasks input gives ``phase1`` and one config per family. A config over another input folder is
one entry of ``EXTRA_CONFIGS``, keyed by the input's name; the folder comes with
``execverify stage assemble --extra-input NAME=DIR``. ``phase2`` (code generation, docs/design.md §9) is the
entry ``"phase2"``, read from the phase2 stage's items: ``--extra-input phase2=data/phase2``
(rows need ``task_id``, ``family``, ``source``; any other columns, e.g. ``tests`` and ``entry``,
are published as they are). ``sft`` is the sft stage's chat examples: ``--extra-input sft=data/sft``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from factory.errors import UserError

FAMILY_DESCRIPTIONS = {
    "white_box": "the output question, then next-line and state questions about one run",
    "output": "fill `assert f(args) == ??` (CRUXEval-O style)",
    "input": "fill `assert f(??) == output` (CRUXEval-I style); judged by running f",
    "coverage": "does line L execute? (YES/NO, several per item)",
    "codegen": "write the function; judged by unit tests in the sandbox",
}


#: The inputs whose configs also come per language when a release holds several.
PER_LANGUAGE_SOURCES = ("tasks", "phase2")


@dataclass(frozen=True)
class ConfigSpec:
    """One config: rows of input ``source`` whose family is in ``families`` (and, when given, whose
    ``language`` is ``language``), mixed by ``shares``."""

    name: str
    source: str
    families: tuple[str, ...]
    shares: Mapping[str, float] = field(default_factory=dict)
    description: str = ""
    default: bool = False
    counted: bool = True  # its rows are items of the card's tier/family table (not, e.g., sft examples)
    language: str | None = None  # None: every language of the input

    def wants(self, family: str) -> bool:
        return family in self.families


#: Configs over extra input folders, by input name.
EXTRA_CONFIGS: dict[str, ConfigSpec] = {
    # The phase2 stage's code-generation items (data/phase2), docs/design.md §9.
    "phase2": ConfigSpec(
        "phase2",
        "phase2",
        ("codegen",),
        description="phase-2 RL items: " + FAMILY_DESCRIPTIONS["codegen"],
    ),
    # The optional sft stage's examples (data/sft): chat `messages`; empty (so left out) by default.
    "sft": ConfigSpec(
        "sft",
        "sft",
        ("output", "input"),
        description="SFT warm-up: a teacher's right answers to output / input items, as chat `messages`",
        counted=False,
    ),
}


def release_configs(
    phase1_shares: Mapping[str, float],
    families: Iterable[str],
    extra_inputs: Iterable[str] = (),
    languages: Sequence[str] = (),
) -> list[ConfigSpec]:
    """``phase1`` (the RL mix) first, one config per family present in the tasks input, then the
    configs of the extra inputs. With more than one of ``languages`` (the tasks' languages), each
    of the tasks' and phase2's configs also comes per language, ``<config>-<language>``, after
    the others (``load_dataset(folder, "phase1-javascript")``)."""
    mix = ", ".join(f"{f} {s:.0%}" for f, s in phase1_shares.items())
    configs = [
        ConfigSpec(
            "phase1",
            "tasks",
            tuple(phase1_shares),
            dict(phase1_shares),
            f"phase-1 RL mix ({mix}); order by `tier` for a curriculum",
            default=True,
        )
    ]
    for family in sorted(families):
        configs.append(
            ConfigSpec(family, "tasks", (family,), description=FAMILY_DESCRIPTIONS.get(family, ""))
        )
    for name in extra_inputs:
        if name not in EXTRA_CONFIGS:
            known = ", ".join(sorted(EXTRA_CONFIGS)) or "none"
            raise UserError(f"--extra-input {name}: no config reads an input of that name (known: {known})")
        configs.append(EXTRA_CONFIGS[name])
    if len(languages) > 1:
        split = [c for c in configs if c.source in PER_LANGUAGE_SOURCES]
        configs += [
            replace(
                c,
                name=f"{c.name}-{language}",
                description=f"{c.description} ({language} only)",
                default=False,
                language=language,
            )
            for language in languages
            for c in split
        ]
    return configs
