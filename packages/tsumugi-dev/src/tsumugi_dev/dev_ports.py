"""Which port ``tsumugi dev`` serves each Worker on, and vars that follow the ports (issue 15 item 6).

Worker ``i`` of the run (in the order given, the scheduler first) gets ``--port + i``, or a free port each with
``--port 0``; a Worker without a ``fetch`` handler keeps its number unused. A config written for the default
plan names local URLs by those default ports: the example performers' ``MAIL_API_URL`` is
``http://127.0.0.1:8788/mail``, the performers Worker itself. When the run's ports differ, a var holding
``http://127.0.0.1:<8787 + i>...`` or ``http://localhost:<8787 + i>...`` is rewritten to Worker ``i``'s actual
port, so SendMail never posts to whatever other process owns 8788 (ADR-0067).

Example:
    >>> planned = plan_ports(["scheduler", "performers"], 9000, lambda: 0)
    >>> planned
    {'scheduler': 9000, 'performers': 9001}
    >>> follow_ports_in("http://127.0.0.1:8788/mail", planned)
    'http://127.0.0.1:9001/mail'
    >>> follow_ports_in("https://mail.example.com/send", planned)
    'https://mail.example.com/send'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Final

import msgspec

from tsumugi_dev.config import WorkerConfig

__all__ = ["DEFAULT_FIRST_PORT", "follow_ports", "follow_ports_in", "plan_ports"]

DEFAULT_FIRST_PORT: Final = 8787
"""``tsumugi dev``'s first port, as ``wrangler dev``'s."""
_LOCAL_URL: Final = re.compile(r"^(https?://(?:127\.0\.0\.1|localhost)):(\d{1,5})(?=/|$)")


def plan_ports(names: Sequence[str], first_port: int, free_port: Callable[[], int]) -> dict[str, int]:
    """Each Worker's port: ``first_port + i``, or ``free_port()`` each when ``first_port`` is 0."""
    return {name: free_port() if first_port == 0 else first_port + index for index, name in enumerate(names)}


def follow_ports_in(value: str, planned: Mapping[str, int]) -> str:
    """``value`` with a local URL at a default-plan port moved to the same Worker's planned port."""
    moved = {DEFAULT_FIRST_PORT + index: port for index, port in enumerate(planned.values())}

    def move(match: re.Match[str]) -> str:
        port = int(match[2])
        return f"{match[1]}:{moved.get(port, port)}"

    return _LOCAL_URL.sub(move, value)


def follow_ports(config: WorkerConfig, planned: Mapping[str, int]) -> WorkerConfig:
    """``config`` with every string var passed through `follow_ports_in`."""
    changed = {
        key: follow_ports_in(value, planned)
        for key, value in config.vars.items()
        if isinstance(value, str) and follow_ports_in(value, planned) != value
    }
    return msgspec.structs.replace(config, vars={**config.vars, **changed}) if changed else config
