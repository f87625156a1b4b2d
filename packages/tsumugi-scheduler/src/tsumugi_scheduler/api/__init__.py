"""The scheduler's REST API under ``/api``.

Source: docs/reference/original.md §4, docs/reference/additions.md A6, A9-A11, C4.

Example:
    >>> from tsumugi_scheduler.definition import define_tsumugi
    >>> app = create_app(define_tsumugi(performers=["Hello"]))
    >>> sorted(build_document(OPERATIONS)["paths"])[:2]
    ['/api/bindings', '/api/bindings/{binding}/policy']
"""

from tsumugi_scheduler.api.app import ApiGate, create_app
from tsumugi_scheduler.api.auth import DEFAULT_AUTH, BearerAuth
from tsumugi_scheduler.api.openapi import build_document
from tsumugi_scheduler.api.operations import OPENAPI_PATH, OPERATIONS, Operation
from tsumugi_scheduler.api.schema_gate import SchemaGate

__all__ = [
    "DEFAULT_AUTH",
    "OPENAPI_PATH",
    "OPERATIONS",
    "ApiGate",
    "BearerAuth",
    "Operation",
    "SchemaGate",
    "build_document",
    "create_app",
]
