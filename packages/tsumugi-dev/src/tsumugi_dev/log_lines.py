"""Log lines that stay one line each: control characters in a message are escaped (issue 15 item 6).

A message built from request or job data (a mail subject, an error text) could otherwise carry a newline and
print what looks like a second, forged event in the ``tsumugi dev`` console. A traceback attached to a record
(``exc_info``) is formatted after the message as usual: it is the runtime's own text.

Example:
    >>> import logging
    >>> record = logging.LogRecord("t", logging.INFO, "", 0, "mail sink: %s", ("hi\\n12:00 forged",), None)
    >>> OneLineFormatter("%(message)s").format(record)
    'mail sink: hi\\\\n12:00 forged'
"""

from __future__ import annotations

import logging
import re
from typing import Final

__all__ = ["OneLineFormatter", "one_line"]

_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def one_line(text: str) -> str:
    """``text`` with every control character (newline included) written as an escape."""
    return _CONTROL.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), text)


class OneLineFormatter(logging.Formatter):
    """A formatter whose message part is always one line."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        """Format with the message's control characters escaped."""
        record.message = one_line(record.message)
        return super().formatMessage(record)
