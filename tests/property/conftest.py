"""Make the repository root importable so ``tests.unit.core.reference_model`` and ``strategies`` resolve.

pytest's default ``prepend`` import mode only puts this folder on ``sys.path``; the reference model and the
strategies live under ``tests/unit/core`` and are shared with the unit tests.
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
