"""The imitation's signatures match the real SDK's (``workers-runtime-sdk``, pinned; ADR-0041).

For each function and for each method of the classes Worker code uses, the parameters (kind, name and
default, in order), ``async`` and ``property``/``staticmethod`` must equal the SDK's, both read with ``ast``
from source. A ``**other_options: Unpack[FetchKwargs]`` in the SDK matches keyword-only parameters named after
``FetchKwargs`` keys here. Members the SDK defines that the imitation lacks are listed in
``NOT_EMULATED_MEMBERS``, deliberate differences in ``DIFFERENCES``; both with the reason, and both checked
for staleness.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

import pytest
import sdk_wheel
import workers
from workers import asgi, http, rpc

FUNCTIONS: dict[str, tuple[Callable[..., Any], str]] = {
    "fetch": (workers.fetch, "workers/fetch.py"),
    "handler": (workers.handler, "workers/entrypoints.py"),
    "import_from_javascript": (workers.import_from_javascript, "workers/utils.py"),
    "python_from_rpc": (workers.python_from_rpc, "workers/rpc.py"),
    "python_to_rpc": (workers.python_to_rpc, "workers/rpc.py"),
    "asgi.fetch": (asgi.fetch, "workers/asgi.py"),
}

CLASSES: dict[str, tuple[type, str]] = {
    "WorkerEntrypoint": (workers.WorkerEntrypoint, "workers/entrypoints.py"),
    "DurableObject": (workers.DurableObject, "workers/entrypoints.py"),
    "WorkflowEntrypoint": (workers.WorkflowEntrypoint, "workers/entrypoints.py"),
    "Request": (workers.Request, "workers/request.py"),
    "Response": (workers.Response, "workers/response.py"),
    "FetchResponse": (workers.FetchResponse, "workers/response.py"),
    "JsDict": (rpc.JsDict, "workers/rpc.py"),
}

WATCHED_DUNDERS = frozenset(
    {
        "__init__",
        "__getattr__",
        "__setattr__",
        "__delattr__",
        "__getitem__",
        "__iter__",
        "__len__",
        "__call__",
    }
)
"""Special methods compared both ways (defined on one side only is a difference); other dunders are ignored."""

_NO_JS_BODY = "Bodies here are bytes, not JS streams: the Blob and FormData types are not emulated."
_NO_FETCH_INIT = "A Fetch API init field with no local meaning (no browser cache, CORS, referrer or subresource integrity)."
NOT_EMULATED_MEMBERS: dict[str, str] = {
    "Request.blob": _NO_JS_BODY,
    "Request.form_data": _NO_JS_BODY,
    "Request.cache": _NO_FETCH_INIT,
    "Request.credentials": _NO_FETCH_INIT,
    "Request.destination": _NO_FETCH_INIT,
    "Request.integrity": _NO_FETCH_INIT,
    "Request.is_history_navigation": _NO_FETCH_INIT,
    "Request.keepalive": _NO_FETCH_INIT,
    "Request.mode": _NO_FETCH_INIT,
    "Request.redirect": _NO_FETCH_INIT,
    "Request.referrer": _NO_FETCH_INIT,
    "Request.referrer_policy": _NO_FETCH_INIT,
    "Response.blob": _NO_JS_BODY,
    "Response.formData": _NO_JS_BODY,
    "Response.form_data": _NO_JS_BODY,
    "Response.replace_body": "Builds a js.Response from the old one; no Worker here rewrites bodies.",
    "FetchResponse.blob": _NO_JS_BODY,
    "FetchResponse.formData": _NO_JS_BODY,
    "FetchResponse.form_data": _NO_JS_BODY,
    "FetchResponse.replace_body": "Builds a js.Response from the old one; no Worker here rewrites bodies.",
}

DIFFERENCES: dict[str, str] = {}


def our_node(obj: Any) -> sdk_wheel.FunctionNode:
    """Our definition of ``obj`` (a function, staticmethod or property), parsed from its source."""
    if isinstance(obj, property):
        assert obj.fget is not None
        obj = obj.fget
    if isinstance(obj, staticmethod):
        obj = obj.__func__
    node = ast.parse(textwrap.dedent(inspect.getsource(obj))).body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef), obj
    return node


def _our_member(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if klass in (object, dict):
            return None
        if name in vars(klass):
            return vars(klass)[name]
    return None


def comparable(real: sdk_wheel.Shape, ours: sdk_wheel.Shape) -> tuple[sdk_wheel.Shape, sdk_wheel.Shape]:
    """Both shapes with our keyword-only ``FetchKwargs`` parameters folded into ``**kwargs``."""
    if real.unpacked != "FetchKwargs":
        return real, ours
    keys = sdk_wheel.fetch_kwargs()
    folded = [p for p in ours.params if not (p[0] == "KEYWORD_ONLY" and p[1] in keys and p[2] == "None")]
    return (
        sdk_wheel.Shape(real.params, real.is_async, real.decorators),
        sdk_wheel.Shape(tuple(folded), ours.is_async, ours.decorators),
    )


def _members_to_compare() -> list[str]:
    labels: list[str] = []
    for label, (_cls, path) in CLASSES.items():
        for name in sdk_wheel.class_members(path, label):
            if not name.startswith("_") or name in WATCHED_DUNDERS:
                labels.append(f"{label}.{name}")
    return labels


def _check(label: str, real_node: sdk_wheel.FunctionNode, ours: Any) -> None:
    real_shape, our_shape = comparable(sdk_wheel.shape(real_node), sdk_wheel.shape(our_node(ours)))
    if label in DIFFERENCES:
        assert real_shape != our_shape, f"{label} now matches the SDK: remove it from DIFFERENCES"
        return
    assert our_shape == real_shape, f"{label}: ours {our_shape} != the SDK's {real_shape}"


@pytest.mark.parametrize("label", list(FUNCTIONS))
def test_function_signature_matches_the_sdk(label: str) -> None:
    ours, path = FUNCTIONS[label]
    _check(label, sdk_wheel.function(path, label.rpartition(".")[2]), ours)


@pytest.mark.parametrize("label", _members_to_compare())
def test_member_signature_matches_the_sdk(label: str) -> None:
    class_name, _, name = label.partition(".")
    cls, path = CLASSES[class_name]
    ours = _our_member(cls, name)
    if label in NOT_EMULATED_MEMBERS:
        assert ours is None, f"{label} is provided now: remove it from NOT_EMULATED_MEMBERS"
        return
    assert ours is not None, f"{label} is defined by the SDK but neither imitated nor in NOT_EMULATED_MEMBERS"
    _check(label, sdk_wheel.class_members(path, class_name)[name], ours)


@pytest.mark.parametrize("class_name", list(CLASSES))
def test_no_special_method_of_our_own(class_name: str) -> None:
    """A watched special method only we define changes behaviour the SDK does not have (``del d.key``)."""
    cls, path = CLASSES[class_name]
    sdk = set(sdk_wheel.class_members(path, class_name))
    ours = {name for name in WATCHED_DUNDERS if _our_member(cls, name) is not None}
    assert sorted(ours - sdk - {"__init__"}) == [], f"{class_name}: special methods the SDK's does not define"


def test_the_tables_hold_no_stale_entries() -> None:
    members = set(_members_to_compare())
    assert sorted(set(NOT_EMULATED_MEMBERS) - members) == [], "NOT_EMULATED_MEMBERS names unknown members"
    assert sorted(set(DIFFERENCES) - members - set(FUNCTIONS)) == [], "DIFFERENCES names unknown members"


HEADERS_FORMS = {
    "dict[str, str]": "Mapping[str, str]",
    "list[tuple[str, str]]": "Iterable[tuple[str, str]]",
    "js.Headers": "HeadersMessage",
}
"""Each form of the SDK's ``Headers`` alias and the form of ours that accepts it (a JS Headers object is
``http.client.HTTPMessage`` here, the type the SDK hands Python code for ``request.headers``)."""


def test_headers_accept_every_form_the_sdks_accept() -> None:
    sdk_forms = {form.strip() for form in sdk_wheel.alias_text("workers/types.py", "Headers").split("|")}
    assert sdk_forms == set(HEADERS_FORMS), f"the SDK's Headers alias changed: {sorted(sdk_forms)}"
    assert isinstance(http.Headers, str)
    our_forms = {form.strip() for form in http.Headers.split("|")}
    missing = sorted(set(HEADERS_FORMS.values()) - our_forms)
    assert not missing, f"workers.Headers no longer accepts {missing}"
