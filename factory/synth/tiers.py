"""Curriculum tiers: what each level promises (the generator builds it, the check verifies it)."""

from __future__ import annotations

from dataclasses import dataclass

ENTRY = "f"
HELPER = "g"


@dataclass(frozen=True)
class Tier:
    """A curriculum level: control-flow nesting depth, other operations, helper function."""

    level: int
    depth: int
    other_ops: bool
    helper: bool


TIERS = {
    1: Tier(1, depth=0, other_ops=False, helper=False),
    2: Tier(2, depth=0, other_ops=True, helper=False),
    3: Tier(3, depth=1, other_ops=True, helper=False),
    4: Tier(4, depth=2, other_ops=True, helper=False),
    5: Tier(5, depth=3, other_ops=True, helper=False),
    6: Tier(6, depth=3, other_ops=True, helper=True),
}
