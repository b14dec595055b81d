"""The fixture language's module (fixtures/toy_language.py) is imported by name, as the sandbox's
worker processes import it: its folder goes on the path of this test process."""

from __future__ import annotations

import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))
