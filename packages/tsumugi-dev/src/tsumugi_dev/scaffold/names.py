"""The names a scaffold derives or accepts: the project's, the performers package's, a performer's."""

from __future__ import annotations

import keyword
import re
from typing import Final

from tsumugi_core.ids import BINDING_NAME_RE
from tsumugi_dev.scaffold.errors import ScaffoldError

__all__ = [
    "RESERVED_PERFORMER_NAMES",
    "module_name",
    "package_name",
    "project_name",
    "validate_performer_name",
]

_WORKER_NAME_MAX: Final = 63
_SUFFIX: Final = "-performers"  # the longest suffix a Worker name gets
_NOT_NAME: Final = re.compile(r"[^a-z0-9]+")
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

RESERVED_PERFORMER_NAMES: Final = frozenset(
    {
        # The performers Worker's own entry module names (the Worker's default handler and its imports).
        "Default",
        "Response",
        "WorkerEntrypoint",
        "performer_entrypoint",
        # The scheduler's own bindings: a Service Binding of the same name would shadow them in env.
        "JOB_SHARD",
        "SCHEDULER",
        "RUN",
        "TSUMUGI_DB",
        "TSUMUGI_QUEUE",
        "TSUMUGI_METRICS",
        "TSUMUGI_TOKEN",
        "TSUMUGI_METRICS_DATASET",
    }
)
"""Names a performer may not take, with the reason in `validate_performer_name`'s message."""


def project_name(raw: str) -> str:
    """A Worker-name prefix from a folder name: lower case, runs of other characters become one ``-``.

    Worker names are lower-case letters, digits and dashes (at most 63); ``<name>-performers`` must fit.

    >>> project_name("My App_2")
    'my-app-2'
    """
    name = _NOT_NAME.sub("-", raw.lower()).strip("-")
    if not name or not name[0].isalpha():
        raise ScaffoldError(
            f"project name {raw!r} must start with a letter (it prefixes the Worker names); "
            "pass --name NAME or choose another folder"
        )
    if len(name) + len(_SUFFIX) > _WORKER_NAME_MAX:
        raise ScaffoldError(
            f"project name {name!r} is too long: Worker names such as {name}{_SUFFIX} must be at most "
            f"{_WORKER_NAME_MAX} characters; pass --name NAME"
        )
    return name


def package_name(project: str) -> str:
    """The performers' import package: ``<project>_performers`` with ``_`` for ``-``.

    >>> package_name("my-app")
    'my_app_performers'
    """
    return project.replace("-", "_") + "_performers"


def validate_performer_name(name: str) -> str:
    """Check a performer's name, which is its class name, entrypoint name and binding name at once.

    Rules: a binding name (``BINDING_NAME_RE``: letters, digits, ``_``, not starting with a digit), not
    starting with ``_`` (workerd exports no module name that does), neither it nor its module name
    (`module_name`) a Python keyword, not a name the Workers already use (`RESERVED_PERFORMER_NAMES`).

    Raises:
        ScaffoldError: The name breaks a rule; the message names it.
    """
    if not BINDING_NAME_RE.fullmatch(name):
        raise ScaffoldError(
            f"performer name {name!r} is not a binding name: letters, digits and _ only, not starting with "
            "a digit (it is the class, entrypoint and binding name), e.g. Resize"
        )
    if name.startswith("_"):
        raise ScaffoldError(
            f"performer name {name!r} must not start with _: the Workers runtime exports no such name"
        )
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        raise ScaffoldError(f"performer name {name!r} is a Python keyword; choose another, e.g. Resize")
    if keyword.iskeyword(module_name(name)):
        raise ScaffoldError(
            f"performer name {name!r} would live in module {module_name(name)}.py, a Python keyword; "
            "choose another"
        )
    if name in RESERVED_PERFORMER_NAMES:
        raise ScaffoldError(
            f"performer name {name!r} is taken by the Workers themselves "
            f"({', '.join(sorted(RESERVED_PERFORMER_NAMES))}); choose another"
        )
    return name


def module_name(performer: str) -> str:
    """The module a performer class lives in: its name in snake case.

    >>> module_name("SendMail"), module_name("HTTPFetch"), module_name("resize")
    ('send_mail', 'http_fetch', 'resize')
    """
    return _CAMEL.sub("_", performer).lower()
