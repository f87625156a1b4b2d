"""Log lines that stay one line each: control characters in a message are escaped (issue 15 item 6).

A message built from request or job data (a mail subject, an error text) could otherwise carry a newline and
print what looks like a second, forged event in the ``tsumugi dev`` console. C1 controls (U+0080 to U+009F)
are escaped too: a terminal reads U+009B as CSI and U+0085 as a new line (issue 25 item 7). A traceback
attached to a record (``exc_info``) is formatted after the message as usual: it is the runtime's own text.

The escapes come from a table built at import: escaping needs no codec lookup (a lazy import that opens a file)
and so still works when the process has no file descriptor left, which is when the server logs most.

Example:
    >>> import logging
    >>> record = logging.LogRecord("t", logging.INFO, "", 0, "mail sink: %s", ("hi\\n12:00 forged",), None)
    >>> OneLineFormatter("%(message)s").format(record)
    'mail sink: hi\\\\n12:00 forged'
"""

from __future__ import annotations

import logging
from typing import Final

__all__ = ["OneLineFormatter", "one_line"]

_SHORT: Final = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_ESCAPES: Final = {
    code: _SHORT.get(chr(code), f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    for code in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)
}
"""C0, DEL, C1 and the two Unicode line separators, each to the escape Python's ``unicode_escape`` writes."""


def one_line(text: str) -> str:
    """``text`` with every control character (newline included) written as an escape."""
    return text.translate(_ESCAPES)


class OneLineFormatter(logging.Formatter):
    """A formatter whose message part is always one line."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        """Format with the message's control characters escaped."""
        record.message = one_line(record.message)
        return super().formatMessage(record)
