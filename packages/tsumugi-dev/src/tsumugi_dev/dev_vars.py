"""Local secrets: the ``.dev.vars`` file next to a wrangler config, read as ``wrangler dev`` reads it.

Each line is ``KEY=VALUE`` (an ``export`` prefix is allowed); blank lines and ``#`` comments are skipped. A
value may be wrapped in single quotes (taken literally) or double quotes (``\\n``, ``\\t``, ``\\"`` and ``\\\\``
are unescaped); an unquoted value is trimmed and ends at `` #``. The secrets become env values of the Worker
and win over ``vars`` of the same name, as under ``wrangler dev``.

Example::

    # services/scheduler/.dev.vars
    TSUMUGI_TOKEN=s3cret
    GREETING="hello\\nworld"
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

__all__ = ["DEV_VARS_FILE", "DevVarsError", "parse_dev_vars", "read_dev_vars"]

DEV_VARS_FILE: Final = ".dev.vars"
"""The secrets file wrangler reads next to the config."""

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


class DevVarsError(ValueError):
    """A ``.dev.vars`` line that cannot be read; the message names the file, the line and the rule."""


def _unescape(text: str, where: str) -> str:
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char != "\\":
            out.append(char)
            continue
        escaped = next(chars, "")
        if escaped not in _ESCAPES:
            raise DevVarsError(f"{where}: unknown escape \\{escaped} in a double-quoted value")
        out.append(_ESCAPES[escaped])
    return "".join(out)


def _closing(raw: str, quote: str) -> int:
    """The index of the quote closing ``raw[0]``, or -1; inside double quotes a backslash escapes."""
    i = 1
    while i < len(raw):
        if raw[i] == "\\" and quote == '"':
            i += 2
        elif raw[i] == quote:
            return i
        else:
            i += 1
    return -1


def _value(raw: str, where: str) -> str:
    raw = raw.strip()
    if raw[:1] in ("'", '"'):
        quote = raw[0]
        end = _closing(raw, quote)
        if end < 0:
            raise DevVarsError(
                f"{where}: the value opens a {quote} quote that does not close on the same line"
            )
        rest = raw[end + 1 :].strip()
        if rest and not rest.startswith("#"):
            raise DevVarsError(f"{where}: only a # comment may follow a quoted value (got {rest!r})")
        inner = raw[1:end]
        return inner if quote == "'" else _unescape(inner, where)
    comment = re.search(r"\s#", raw)
    return (raw[: comment.start()] if comment else raw).strip()


def parse_dev_vars(text: str, source: str = DEV_VARS_FILE) -> dict[str, str]:
    """The ``KEY=VALUE`` pairs of a ``.dev.vars`` text (a repeated key keeps its last value).

    Raises:
        DevVarsError: a line is not ``KEY=VALUE``, a key is not an identifier, or a quote does not close.

    >>> parse_dev_vars("# local\\nexport TOKEN = 'a b' \\nURL=http://x/#frag # note\\n")
    {'TOKEN': 'a b', 'URL': 'http://x/#frag'}
    """
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        where = f"{source}:{number}"
        if stripped.startswith("export "):
            stripped = stripped[len("export ") :].lstrip()
        key, equals, raw = stripped.partition("=")
        key = key.strip()
        if not equals:
            raise DevVarsError(f"{where}: expected KEY=VALUE (no '=' in {stripped!r})")
        if not _KEY.fullmatch(key):
            raise DevVarsError(
                f"{where}: the key {key!r} must be letters, digits and underscores, not starting with a digit"
            )
        values[key] = _value(raw, where)
    return values


def read_dev_vars(config_dir: Path) -> Mapping[str, str]:
    """The secrets of ``config_dir / .dev.vars``, or an empty mapping when the file does not exist.

    Raises:
        DevVarsError: the file exists but cannot be read or parsed.
    """
    path = config_dir / DEV_VARS_FILE
    if not path.is_file():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DevVarsError(f"{path}: cannot read the file ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise DevVarsError(f"{path}: must be UTF-8 text (invalid byte at offset {exc.start})") from None
    return parse_dev_vars(text, str(path))
