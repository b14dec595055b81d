"""The configs of a release, as a table: which input each reads and which of its rows it keeps.

To add a config, add a row. ``phase2`` (code generation, DESIGN §9) is one row over an extra input
folder of ``codegen`` items: pass ``inputs={"tasks": ..., "codegen": DIR}`` to the stage and add
``ConfigSpec("phase2", "codegen", ("codegen",), description=...)`` in ``release_configs``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

FAMILY_DESCRIPTIONS = {
    "white_box": "the output question, then next-line and state questions about one run",
    "output": "fill `assert f(args) == ??` (CRUXEval-O style)",
    "input": "fill `assert f(??) == output` (CRUXEval-I style); judged by running f",
    "coverage": "does line L execute? (YES/NO, several per item)",
    "codegen": "write the function; judged by unit tests in the sandbox",
}


@dataclass(frozen=True)
class ConfigSpec:
    """One config: rows of input ``source`` whose family is in ``families``, mixed by ``shares``."""

    name: str
    source: str
    families: tuple[str, ...]
    shares: Mapping[str, float] = field(default_factory=dict)
    description: str = ""
    default: bool = False

    def wants(self, family: str) -> bool:
        return family in self.families


def release_configs(phase1_shares: Mapping[str, float], families: Iterable[str]) -> list[ConfigSpec]:
    """``phase1`` (the RL mix) first, then one config per family present in the tasks input."""
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
    return configs
