"""The client's typed enqueue type-checks as documented (pyright on client_cases.py): a payload of the wrong
type for a performer is reported, the right one is accepted, and handles carry the performer's result type."""

from __future__ import annotations

from test_performer_types import REPO_ROOT, check_cases

CASES = REPO_ROOT / "tests" / "typing" / "client_cases.py"


def test_typed_enqueue_reveals_and_errors_match_the_annotations() -> None:
    check_cases(CASES)
