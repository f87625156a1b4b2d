"""workerd's SQLite restrictions (limits and authorizer) on a stdlib ``sqlite3`` connection.

Every SQLite database in workerd (a Durable Object's ``ctx.storage.sql``, and so D1, which Cloudflare runs on
the same code) is opened with ``SqliteDatabase::setupSecurity`` (src/workerd/util/sqlite.c++): lowered
``sqlite3_limit`` values, defensive mode, and an authorizer that allows only listed functions and pragmas,
refuses ATTACH/DETACH, temporary objects, virtual tables other than FTS5 and R*Tree, transaction statements,
and any name starting ``_cf_`` (``SqlStorageRegulator::isAllowedName``, src/workerd/api/sql.c++).
``SqliteGuard`` applies the same to a connection (``LIMITS``: workerd's, or Cloudflare's documented figure
where that is lower), so the local runtime refuses what the platform refuses, with SQLite's own messages;
``describe`` turns a driver error into workerd's ``<message>: <SQLITE_CODE>`` text.

The runtime's own statements (savepoints of ``transactionSync``, the size pragmas, D1's batch transaction)
are what workerd runs as its ``TRUSTED`` regulator: run them inside ``SqliteGuard.trusted()``.
"""

from __future__ import annotations

import re
import sqlite3
import sys
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from typing import Final

__all__ = [
    "LIMITS",
    "MAX_SQL_BYTES",
    "MAX_STRING_BYTES",
    "TRANSACTION_REFUSED",
    "SqliteGuard",
    "describe",
]

MAX_SQL_BYTES: Final = 100_000
"""Longest SQL text (UTF-8 bytes) one call may pass (``SQLITE_LIMIT_SQL_LENGTH``)."""

MAX_STRING_BYTES: Final = 2_000_000
"""Largest string, BLOB or row (``SQLITE_LIMIT_LENGTH``): the documented 2 MB, below workerd's own 4 MiB."""

LIMITS: Final[Mapping[int, int]] = {
    sqlite3.SQLITE_LIMIT_LENGTH: MAX_STRING_BYTES,
    sqlite3.SQLITE_LIMIT_SQL_LENGTH: MAX_SQL_BYTES,
    sqlite3.SQLITE_LIMIT_COLUMN: 100,
    sqlite3.SQLITE_LIMIT_EXPR_DEPTH: 100,
    sqlite3.SQLITE_LIMIT_COMPOUND_SELECT: 5,
    sqlite3.SQLITE_LIMIT_VDBE_OP: 25_000,
    sqlite3.SQLITE_LIMIT_FUNCTION_ARG: 32,
    sqlite3.SQLITE_LIMIT_ATTACHED: 0,
    sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH: 50,
    sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER: 100,
    sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH: 10,
    sqlite3.SQLITE_LIMIT_WORKER_THREADS: 0,
}
"""The lower of workerd's ``SqliteDatabase::setupSecurity`` limits and Cloudflare's documented ones.

workerd sets 4 MiB strings and 127 function arguments; the Durable Object and D1 limits pages promise only
2 MB and 32 (developers.cloudflare.com/durable-objects/platform/limits/, /d1/platform/limits/), so those hold
here. Every other figure is workerd's, the same for Durable Object SQL and D1 (D1 runs on that code).
"""

TRANSACTION_REFUSED: Final = (
    "To execute a transaction, please use the state.storage.transaction() or state.storage.transactionSync() "
    "APIs instead of the SQL BEGIN TRANSACTION or SAVEPOINT statements. The JavaScript API is safer because it "
    "will automatically roll back on exceptions, and because it interacts correctly with Durable Objects' "
    "automatic atomic write coalescing."
)
"""What workerd throws for BEGIN/COMMIT/ROLLBACK/SAVEPOINT/RELEASE in ``exec`` (``allowTransactions``)."""

_FUNCTION_GROUPS: Final = (
    # core (sqlite_version, sqlite_source_id, sqlite_offset and sqlite_compileoption_* are left out on purpose)
    "abs changes char coalesce concat concat_ws format glob hex ifnull iif instr last_insert_rowid length like "
    "likelihood likely load_extension lower ltrim max_scalar min_scalar nullif octet_length printf quote random "
    "randomblob replace round rtrim sign soundex substr substring total_changes trim typeof unhex unicode "
    "unlikely upper zeroblob",
    "date time datetime julianday unixepoch strftime timediff current_date current_time current_timestamp",
    "avg count group_concat max min string_agg sum total row_number rank dense_rank percent_rank cume_dist "
    "ntile lag lead first_value last_value nth_value",
    "acos acosh asin asinh atan atan2 atanh ceil cos cosh degrees exp floor ln log log2 mod pi pow radians sin "
    "sinh sqrt tan tanh trunc",
    "json jsonb json_array jsonb_array json_array_length json_extract jsonb_extract -> ->> json_insert "
    "jsonb_insert json_object jsonb_object json_patch jsonb_patch json_remove jsonb_remove json_replace "
    "jsonb_replace json_set jsonb_set json_type json_valid json_quote json_group_array jsonb_group_array "
    "json_group_object jsonb_group_object json_each json_tree",
    # FTS5, R*Tree, and the helpers ALTER TABLE calls
    "match highlight bm25 snippet rtreecheck sqlite_rename_column sqlite_rename_table sqlite_rename_test "
    "sqlite_drop_column sqlite_rename_quotefix",
)
_FUNCTIONS: Final = frozenset(name for group in _FUNCTION_GROUPS for name in group.split())
"""``ALLOWED_SQLITE_FUNCTIONS`` in src/workerd/util/sqlite.c++."""

_NO_ARG, _BOOLEAN, _NAME, _OPTIONAL_NAME, _NUMBER, _NUMBER_OR_NAME = range(6)
_PRAGMAS: Final = {
    "data_version": _NO_ARG,
    "page_size": _NO_ARG,
    "case_sensitive_like": _BOOLEAN,
    "foreign_keys": _BOOLEAN,
    "defer_foreign_keys": _BOOLEAN,
    "ignore_check_constraints": _BOOLEAN,
    "legacy_alter_table": _BOOLEAN,
    "recursive_triggers": _BOOLEAN,
    "reverse_unordered_selects": _BOOLEAN,
    "foreign_key_check": _OPTIONAL_NAME,
    "foreign_key_list": _NAME,
    "index_info": _NAME,
    "index_list": _NAME,
    "index_xinfo": _NAME,
    "quick_check": _NUMBER_OR_NAME,
    "optimize": _NUMBER,
}
"""``ALLOWED_PRAGMAS`` (with their argument rules); ``table_list``, ``table_info`` and ``table_xinfo`` too."""

_INTEGER: Final = re.compile(r"-?[0-9]+")
_BOOLEAN_WORDS: Final = ("true", "false", "yes", "no", "on", "off", "1", "0")
_VTABLE_MODULES: Final = frozenset({"fts5", "fts5vocab", "rtree", "rtree_i32"})

_OK, _DENY = sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY
_ALWAYS: Final = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_RECURSIVE, sqlite3.SQLITE_ANALYZE})
_FIRST_NAME: Final = frozenset(
    {
        sqlite3.SQLITE_CREATE_TABLE,
        sqlite3.SQLITE_DELETE,
        sqlite3.SQLITE_DROP_TABLE,
        sqlite3.SQLITE_INSERT,
        sqlite3.SQLITE_CREATE_VIEW,
        sqlite3.SQLITE_DROP_VIEW,
        sqlite3.SQLITE_REINDEX,
        sqlite3.SQLITE_READ,
        sqlite3.SQLITE_UPDATE,
    }
)
_BOTH_NAMES: Final = frozenset(
    {
        sqlite3.SQLITE_CREATE_INDEX,
        sqlite3.SQLITE_DROP_INDEX,
        sqlite3.SQLITE_CREATE_TRIGGER,
        sqlite3.SQLITE_DROP_TRIGGER,
    }
)


def _allowed_name(name: str | None) -> bool:
    return name is None or name[:4].lower() != "_cf_"


def _boolean(value: str) -> bool:
    if len(value) >= 2 and value[0] in "'\"" and value[-1] == value[0]:
        value = value[1:-1]
    return value.lower().startswith(_BOOLEAN_WORDS)  # workerd compares prefixes (strncasecmp)


def _int32(value: str) -> bool:
    return _INTEGER.fullmatch(value) is not None and -(2**31) <= int(value) < 2**31


def _pragma_allowed(pragma: str, value: str | None) -> bool:
    if pragma == "table_list":
        return True
    if pragma in ("table_info", "table_xinfo"):
        return value is not None and _allowed_name(value)
    rule = _PRAGMAS.get(pragma)
    if rule is None:
        return False
    if value is None:
        return rule != _NAME
    if rule == _NO_ARG:
        return False
    if rule == _BOOLEAN:
        return _boolean(value)
    if rule == _NUMBER:
        return _int32(value)
    if rule == _NUMBER_OR_NAME:
        return (value.isascii() and value.isdigit()) or _allowed_name(value)
    return _allowed_name(value)  # _NAME, _OPTIONAL_NAME


class SqliteGuard:
    """workerd's limits and authorizer, installed on one connection.

    ``enforcing`` says whether statements prepared now are the application's (checked) or the runtime's own
    (not checked, as workerd's ``TRUSTED`` regulator); ``trusted()`` lifts it for a block.
    ``transaction_message`` is the refusal a transaction statement reads as (workerd's Durable Object throws
    ``TRANSACTION_REFUSED``; D1 answers a plain ``not authorized``).
    """

    __slots__ = ("_refusal", "_transaction_message", "enforcing")

    def __init__(
        self,
        conn: sqlite3.Connection,
        limits: Mapping[int, int],
        *,
        enforcing: bool = True,
        transaction_message: str | None = None,
    ) -> None:
        for category, value in limits.items():
            conn.setlimit(category, value)
        if sys.version_info >= (3, 12):  # 3.11's sqlite3 cannot set it; see ADR 0091
            conn.setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)
        self.enforcing = enforcing
        self._refusal: str | None = None
        self._transaction_message = transaction_message
        # Installing an authorizer expires every statement prepared so far, so the runtime's setup pragmas
        # (already in the driver's statement cache) are checked again if the application sends the same text.
        conn.set_authorizer(self._authorize)

    @contextmanager
    def trusted(self) -> Generator[None]:
        """Run the runtime's own statements in the block unchecked (workerd's ``TRUSTED`` regulator)."""
        before = self.enforcing
        self.enforcing = False
        try:
            yield
        finally:
            self.enforcing = before

    def refusal(self, exc: BaseException) -> str:
        """workerd's text for ``exc``: a tailored refusal (transactions) when the authorizer left one."""
        tailored, self._refusal = self._refusal, None
        if tailored is not None and getattr(exc, "sqlite_errorname", None) == "SQLITE_AUTH":
            return tailored
        return describe(exc)

    def _authorize(
        self, action: int, arg1: str | None, arg2: str | None, db_name: str | None, trigger: str | None
    ) -> int:
        if not self.enforcing:
            return _OK
        return _OK if self._allowed(action, arg1, arg2, db_name) else _DENY

    def _allowed(self, action: int, arg1: str | None, arg2: str | None, db_name: str | None) -> bool:
        if action in (sqlite3.SQLITE_ALTER_TABLE, sqlite3.SQLITE_DETACH):  # SQLite passes (db, table) here
            arg1, db_name = arg2, arg1
            arg2 = None
        if db_name == "temp":
            return action in (sqlite3.SQLITE_READ, sqlite3.SQLITE_UPDATE) and _allowed_name(arg1)
        if db_name is not None and db_name != "main":
            return False
        if action in _FIRST_NAME or action == sqlite3.SQLITE_ALTER_TABLE:
            return _allowed_name(arg1)
        if action == sqlite3.SQLITE_FUNCTION:
            return arg2 in _FUNCTIONS
        if action in _ALWAYS:
            return True
        if action in _BOTH_NAMES:
            return _allowed_name(arg1) and _allowed_name(arg2)
        if action == sqlite3.SQLITE_PRAGMA:
            return arg1 is not None and _pragma_allowed(arg1, arg2)  # names compare exactly, as in workerd
        if action in (sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT):
            self._refusal = self._transaction_message
            return False
        if action in (sqlite3.SQLITE_CREATE_VTABLE, sqlite3.SQLITE_DROP_VTABLE):
            return (arg2 or "").lower() in _VTABLE_MODULES and _allowed_name(arg1)
        # ATTACH, DETACH, temporary tables/indexes/triggers/views, COPY and anything unknown.
        return False


def describe(exc: BaseException) -> str:
    """workerd's ``<sqlite3_errmsg>: <SQLITE_CODE>`` for a driver error (``dbErrorMessage``).

    An error the driver raises before SQLite sees the statement has no code: it reads ``SQLITE_ERROR``.
    """
    if isinstance(exc, sqlite3.DataError) and str(exc) == "query string is too large":
        return "statement too long: SQLITE_TOOBIG"  # the driver checks the SQL length itself, before SQLite
    if isinstance(exc, MemoryError):  # the driver's SQLITE_NOMEM: SQLITE_LIMIT_VDBE_OP, when prepared
        return "out of memory: SQLITE_NOMEM"
    if isinstance(exc, sqlite3.ProgrammingError) and str(exc).startswith("Incorrect number of bindings"):
        return "Wrong number of parameter bindings for SQL query."  # workerd counts them itself, no code
    name = getattr(exc, "sqlite_errorname", None)
    code = getattr(exc, "sqlite_errorcode", None)
    if not name or not isinstance(code, int):
        return f"{exc}: SQLITE_ERROR"
    primary = _PRIMARY_CODES.get(code & 0xFF, name)
    # workerd names the primary code, then the extended one when it differs (sqlite.c++ dbErrorMessage).
    return f"{exc}: {primary}" if primary == name else f"{exc}: {primary} (extended: {name})"


_PRIMARY_WORDS: Final = (
    "ERROR",
    "INTERNAL",
    "PERM",
    "ABORT",
    "BUSY",
    "LOCKED",
    "NOMEM",
    "READONLY",
    "INTERRUPT",
    "IOERR",
    "CORRUPT",
    "NOTFOUND",
    "FULL",
    "CANTOPEN",
    "PROTOCOL",
    "EMPTY",
    "SCHEMA",
    "TOOBIG",
    "CONSTRAINT",
    "MISMATCH",
    "MISUSE",
    "NOLFS",
    "AUTH",
    "FORMAT",
    "RANGE",
    "NOTADB",
)
_PRIMARY_CODES: Final = {code: f"SQLITE_{word}" for code, word in enumerate(_PRIMARY_WORDS, start=1)}
"""SQLite's primary result codes by number (an extended code's low byte is its primary code)."""
