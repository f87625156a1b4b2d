"""The test suite. A package so that its helpers import by their full names from the repository root
(pyproject's pytest ``pythonpath``): ``tests.support.clock``, ``tests.api.api_world``. The test modules
themselves are still collected by pytest's default ``prepend`` import mode, their folders being namespace
packages (ADR-0163)."""
