"""The imitation's public names follow the real SDK's (``workers-runtime-sdk``, pinned; ADR-0041).

Every name ``from workers import ...`` offers on Cloudflare is either provided by the imitation in
``packages/tsumugi-dev/src/workers/`` or listed in ``NOT_EMULATED`` with the reason; the imitation offers no
name the SDK lacks (code that imports it would run here and fail there). A new SDK release that adds or drops
a name fails here until someone decides which side it goes on.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil

import sdk_wheel
import workers

NOT_EMULATED: dict[str, str] = {
    "Blob": "JS Blob bodies: no Worker here sends or receives a Blob, and a real one wraps js.Blob.",
    "BlobEnding": "An option of Blob (not emulated).",
    "BlobValue": "The parts Blob accepts (not emulated).",
    "File": "A Blob with a name (not emulated).",
    "FormData": "Form bodies: the Workers here speak JSON; a real one wraps js.FormData.",
    "FormDataValue": "The values FormData holds (not emulated).",
    "Body": "A type alias naming JS body types; bodies here are str or bytes (workers.http.Body).",
    "JSBody": "A type alias of JS body objects; there is no JS here.",
    "Context": "A typing Protocol for ctx.waitUntil; the runtime's ctx is tsumugi_dev.worker.ExecutionContext.",
    "FetchKwargs": "A TypedDict of fetch/Request options; Request and fetch take those keys as keyword-only "
    "parameters here (test_sdk_signatures checks they are FetchKwargs keys).",
    "RequestInitCfProperties": "Cloudflare's cf request options: there is no Cloudflare edge locally.",
    "patch_env": "Overrides cloudflare:workers' module-level env; the runtime resolves workers.env per handler.",
    "waitUntil": "cloudflare:workers' module-level waitUntil; Workers here use self.ctx.waitUntil.",
    "wait_until": "cloudflare:workers' module-level waitUntil; Workers here use self.ctx.waitUntil.",
}

LOCAL_ONLY_NAMES: dict[str, str] = {}
"""Names the imitation exports that the SDK does not (none: a Worker importing one would fail on Cloudflare)."""

NOT_EMULATED_MODULES: dict[str, str] = {
    "blob": "Blob and File (not emulated).",
    "fetch": "fetch lives in workers.http here (import it from workers).",
    "formdata": "FormData (not emulated).",
    "gateway": "Options shared by the ASGI and WSGI adapters; the ASGI adapter here takes none.",
    "request": "Request lives in workers.http here (import it from workers).",
    "response": "Response lives in workers.http here (import it from workers).",
    "types": "Type aliases over JS types.",
    "utils": "JS glue (headers, bodies, JS imports).",
    "workflows": "Workflows are not emulated by the local runtime.",
    "wsgi": "No Worker here serves a WSGI app.",
}

LOCAL_ONLY_MODULES: dict[str, str] = {
    "http": "Request, Response and fetch on plain CPython (the SDK splits them over request/response/fetch); "
    "Worker code imports them from workers.",
}


def _sdk_modules() -> set[str]:
    return {
        name.removeprefix("workers/").removesuffix(".py").removesuffix("/__init__").split("/")[0]
        for name in sdk_wheel.sources()
        if name.startswith("workers/") and name != "workers/__init__.py"
    }


def _our_modules() -> set[str]:
    return {info.name for info in pkgutil.iter_modules(workers.__path__)}


def test_every_sdk_name_is_provided_or_listed() -> None:
    sdk = set(sdk_wheel.exported_names())
    missing = sorted(sdk - set(workers.__all__) - set(NOT_EMULATED))
    assert not missing, f"SDK names neither provided by the imitation nor listed in NOT_EMULATED: {missing}"


def test_the_imitation_adds_no_name_of_its_own() -> None:
    extra = sorted(set(workers.__all__) - set(sdk_wheel.exported_names()) - set(LOCAL_ONLY_NAMES))
    assert not extra, f"the imitation exports names the SDK does not have: {extra}"


def test_the_tables_hold_no_stale_entries() -> None:
    sdk = set(sdk_wheel.exported_names())
    assert sorted(set(NOT_EMULATED) - sdk) == [], "NOT_EMULATED lists names the SDK no longer has"
    assert sorted(set(NOT_EMULATED) & set(workers.__all__)) == [], "NOT_EMULATED lists names we provide"
    assert sorted(set(LOCAL_ONLY_NAMES) & sdk) == [], "LOCAL_ONLY_NAMES lists names the SDK has"


def test_every_exported_name_resolves() -> None:
    for name in workers.__all__:
        if name != "env":  # resolved per handler call; outside one it raises AttributeError, as documented
            assert getattr(workers, name) is not None, name


def test_modules_match_or_are_listed() -> None:
    sdk, ours = _sdk_modules(), _our_modules()
    assert sorted(sdk - ours - set(NOT_EMULATED_MODULES)) == [], "SDK modules neither imitated nor listed"
    assert sorted(ours - sdk - set(LOCAL_ONLY_MODULES)) == [], "imitation modules the SDK does not have"
    assert sorted(set(NOT_EMULATED_MODULES) - sdk) == [], "NOT_EMULATED_MODULES lists modules the SDK lacks"
    assert sorted(set(NOT_EMULATED_MODULES) & ours) == [], "NOT_EMULATED_MODULES lists modules we have"


def _defined_public_names(path: str) -> set[str]:
    return {
        node.name
        for node in sdk_wheel.module_ast(path).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and not node.name.startswith("_")
    }


def test_shared_modules_offer_only_sdk_names() -> None:
    """In a module both have (``workers.rpc``, ``workers.asgi``), what the SDK defines publicly that we also
    define must be there, and the public names Worker code may use from ours exist in the SDK's."""
    worker_facing = {
        "rpc": {"JsDict", "python_from_rpc", "python_to_rpc"},
        "asgi": {"fetch", "request_to_scope"},
    }
    for module, names in worker_facing.items():
        ours = importlib.import_module(f"workers.{module}")
        sdk = _defined_public_names(f"workers/{module}.py")
        assert sorted(names - sdk) == [], f"workers.{module}: not in the SDK's module"
        assert sorted(names - set(vars(ours))) == [], f"workers.{module}: missing here"
