"""Which files of a Python Worker's module root wrangler uploads, and as what: its module rules, read as wrangler 4 does.

For a ``.py`` main, wrangler does not bundle: it walks the module root (the folder of ``main``, or
``base_dir``) and uploads each file that a rule's glob matches, the first match naming the module type. The
rules are the config's ``rules``, then ``{PythonModule: **/*.py}`` (added when no PythonModule rule is given),
then wrangler's defaults; a rule without ``fallthrough: true`` removes the later rules of its type. A file
that several globs match is uploaded once, and wrangler warns "Ignoring duplicate module" for each further
match; a file no glob matches is silently left out. Sources (cloudflare/workers-sdk at wrangler@4.86.0):
``packages/wrangler/src/deployment-bundle/rules.ts`` (``DEFAULT_MODULE_RULES``, ``parseRules``),
``find-additional-modules.ts`` (``matchFiles``), ``packages/workers-utils/src/config/validation.ts``
(``applyPythonConfig``). Globs follow the ``glob-to-regexp`` package with ``globstar``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import msgspec

__all__ = [
    "DEFAULT_RULES",
    "PYTHON_RULE",
    "ModuleMatch",
    "Rule",
    "effective_rules",
    "glob_regex",
    "match_modules",
    "rules_from_config",
]


class Rule(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of a wrangler config's ``rules``."""

    type: str
    globs: tuple[str, ...]
    fallthrough: bool | None = None


DEFAULT_RULES: Final = (
    Rule(type="Text", globs=("**/*.txt", "**/*.html", "**/*.sql")),
    Rule(type="Data", globs=("**/*.bin",)),
    Rule(type="CompiledWasm", globs=("**/*.wasm", "**/*.wasm?module")),
)
PYTHON_RULE: Final = Rule(type="PythonModule", globs=("**/*.py",))


class ModuleMatch(msgspec.Struct, frozen=True, kw_only=True):
    """What the rules make of the files: the uploaded modules, and the repeated and unmatched files."""

    modules: dict[str, str]
    """module name (path relative to the module root, with ``/``) -> rule type"""
    duplicates: tuple[str, ...]
    """files wrangler would warn "Ignoring duplicate module" about (once per extra match)"""
    unmatched: tuple[str, ...]
    """files no rule uploads"""


def rules_from_config(raw: Mapping[str, Any]) -> tuple[Rule, ...]:
    """The ``rules`` of a parsed wrangler config."""
    return msgspec.convert(raw.get("rules", []), tuple[Rule, ...])


def effective_rules(user_rules: Sequence[Rule]) -> tuple[Rule, ...]:
    """The rules wrangler applies to a Python Worker, in order, shadowed ones removed."""
    rules = list(user_rules)
    if not any(rule.type == "PythonModule" for rule in rules):
        rules.append(PYTHON_RULE)
    completed: set[str] = set()
    kept: list[Rule] = []
    for rule in (*rules, *DEFAULT_RULES):
        if rule.type in completed:
            continue
        kept.append(rule)
        if rule.fallthrough is not True:
            completed.add(rule.type)
    return tuple(kept)


def glob_regex(glob: str) -> re.Pattern[str]:
    """``glob`` as ``glob-to-regexp`` compiles it with ``globstar: true`` (``**`` spans folders, ``*`` does not)."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if char != "*":
            out.append(re.escape(char))
            i += 1
            continue
        start = i
        while i < len(glob) and glob[i] == "*":
            i += 1
        before = glob[start - 1] if start > 0 else "/"
        after = glob[i] if i < len(glob) else "/"
        if i - start > 1 and before == "/" and after == "/":
            out.append(r"(?:[^/]*(?:/|$))*")
            i += 1  # the "/" after "**" is part of the pattern above
        else:
            out.append(r"[^/]*")
    return re.compile("".join(out))


def match_modules(files: Iterable[str], rules: Sequence[Rule]) -> ModuleMatch:
    """Apply ``effective_rules(...)`` output to module-root-relative ``files`` as wrangler's ``matchFiles`` does."""
    compiled = [(rule.type, [glob_regex(glob) for glob in rule.globs]) for rule in rules]
    modules: dict[str, str] = {}
    duplicates: list[str] = []
    unmatched: list[str] = []
    for name in files:
        for rule_type, patterns in compiled:
            for pattern in patterns:
                if not pattern.fullmatch(name):
                    continue
                if name in modules:
                    duplicates.append(name)
                else:
                    modules[name] = rule_type
        if name not in modules:
            unmatched.append(name)
    return ModuleMatch(modules=modules, duplicates=tuple(duplicates), unmatched=tuple(unmatched))
