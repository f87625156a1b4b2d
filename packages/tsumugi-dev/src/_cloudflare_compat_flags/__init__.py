# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""workerd's compatibility flags as Python sees them (``import _cloudflare_compat_flags``).

The local runtime's Workers use compatibility date 2026-07-01 with ``python_workers``; the flags the Workers SDK
reads are on from earlier dates (workerd ``src/workerd/io/compatibility-date.capnp``:
``python_request_headers_preserve_commas`` from 2026-02-17, ``python_workflows_implicit_dependencies`` implied
by ``python_workers`` after 2026-02-25). Any other flag reads False.
"""

python_workers = True
python_request_headers_preserve_commas = True
python_workflows_implicit_dependencies = True
queues_json_messages = True


def __getattr__(name: str) -> bool:
    if name.startswith("__"):
        raise AttributeError(name)
    return False
