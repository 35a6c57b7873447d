"""The declared schemas of every request and file, and their one validator (docs/schemas.md).

The shape of what comes in from outside (an engine request, an HTTP body, a saved game or match, a shipped
data file) is declared once, as JSON Schema (draft 2020-12) files in ``tapa_ai/schemas/``: types, ranges,
string lengths and known keys. Other frontends generate their clients from the same files. What a schema
cannot say (a stack that breaks the rules, a result that contradicts the board, a move that is not legal) is
checked after it by the code that reads the value.

Validation is the `jsonschema <https://python-jsonschema.readthedocs.io>`_ library's, the reference
implementation of the standard; this module builds one validator per schema (cached: compiling takes
milliseconds, a request's check about 0.1 ms, ``scripts/bench_schema.py``) and turns its first error into
one line for a person: where (``tavli.length``), what was wanted, the bad value quoted bounded
(:func:`tapa_ai.quoting.quoted`), and for an unknown key the known ones with "did you mean".

Two things differ from plain JSON Schema, both stricter, as a Python reader needs: an ``integer`` is an int
(``5.0`` is not one) and never a bool; a ``number`` is never a bool.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Optional

from .errors import TapaError
from .quoting import nearest, quoted

__all__ = ["SCHEMA_DIR", "SchemaError", "NonFinite", "check", "is_valid", "loads", "schema_names", "load_schema", "describe_expected",
           "unknown_key_message", "ref"]

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
"""Where the schema files are (package data)."""

_QUOTE = 40
"""Characters of a bad value an error quotes."""
_SIZES = ("maxItems", "maxLength", "maxProperties")
"""Errors that end the check at once (what follows them could be a walk through a huge value)."""
_MORE_ERRORS = 8
"""Errors looked at after the first before the best of them is reported."""
_FIRST = {"type": 0, "maxItems": 1, "maxLength": 1, "maxProperties": 1, "minItems": 2, "minLength": 2,
          "required": 3, "additionalProperties": 4}
"""Keywords checked before the others (the rest keep their order)."""


class SchemaError(TapaError, ValueError):
    """A value that does not have the declared shape: one line, where and what."""


def schema_names() -> list[str]:
    """The schema files' names (``protocol``, ``levels``, ...), without ``.json``."""
    return sorted(path.stem for path in SCHEMA_DIR.glob("*.json"))


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict[str, Any]:
    """The parsed schema file ``tapa_ai/schemas/<name>.json``."""
    path = SCHEMA_DIR / f"{name}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SchemaError(f"no schema {quoted(name)}; schemas: {', '.join(schema_names())}") from None


def ref(name: str, definition: Optional[str] = None) -> str:
    """The schema's URI, or one of its ``$defs`` (``ref("protocol", "position")``)."""
    uri = load_schema(name)["$id"]
    return uri if definition is None else f"{uri}#/$defs/{definition}"


@lru_cache(maxsize=None)
def _registry():
    from referencing import Registry, Resource

    resources = []
    for name in schema_names():
        document = load_schema(name)
        resources.append((document["$id"], Resource.from_contents(document)))
    return Registry().with_resources(resources)


@lru_cache(maxsize=None)
def _validator_class():
    from jsonschema import Draft202012Validator, validators

    base = Draft202012Validator.TYPE_CHECKER

    def is_integer(checker, value) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    def is_number(checker, value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    checker = base.redefine_many({"integer": is_integer, "number": is_number})
    return validators.extend(Draft202012Validator, type_checker=checker)


@lru_cache(maxsize=None)
def _validator(schema_ref: str):
    """One compiled validator per schema or ``$defs`` entry, its references inlined once (a third faster per
    request than resolving them on every check; the schemas have no recursive references)."""
    cls = _validator_class()
    return cls(_inlined({"$ref": schema_ref}, schema_ref.split("#")[0]), registry=_registry())


def _inlined(schema: Any, base: str, depth: int = 0) -> Any:
    """``schema`` with every ``$ref`` replaced by what it names (the referring schema's own keywords kept)."""
    if depth > 32:
        raise SchemaError("the schemas' references nest deeper than 32: a recursive reference?")
    if isinstance(schema, list):
        return [_inlined(item, base, depth + 1) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        target = schema["$ref"]
        uri = base + target if target.startswith("#") else target
        named = _registry().resolver().lookup(uri).contents
        rest = {key: value for key, value in schema.items() if key != "$ref"}
        return _inlined({**named, **rest}, uri.split("#")[0], depth + 1) if not rest else \
            {**_inlined(named, uri.split("#")[0], depth + 1), **_inlined(rest, base, depth + 1)}
    # The type and the size bounds first: jsonschema checks a schema's keywords in order, and a list of 30,000
    # items is refused by its maxItems before any item is looked at.
    ordered = sorted(schema.items(), key=lambda item: _FIRST.get(item[0], len(_FIRST)))
    return {key: _inlined(value, base, depth + 1) for key, value in ordered}


class NonFinite:
    """JSON's ``NaN``, ``Infinity`` or ``-Infinity`` as :func:`loads` reads it: no number at all, so a schema
    refuses it by name (``must be a number 0..2, got NaN``) instead of a NaN reaching a bot or a table."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def loads(text: str) -> Any:
    """JSON text parsed for a schema check: as :func:`json.loads`, but ``NaN`` and the infinities are
    :class:`NonFinite`, not floats (a data file's schema then refuses them)."""
    return json.loads(text, parse_constant=NonFinite)


def is_valid(data: Any, schema: str, definition: Optional[str] = None) -> bool:
    """Whether ``data`` has the shape of ``schema`` (its ``$defs`` entry ``definition``)."""
    return _validator(ref(schema, definition)).is_valid(data)


def check(data: Any, schema: str, definition: Optional[str] = None, where: str = "",
          error: type[Exception] = SchemaError) -> Any:
    """``data`` if it has the shape of ``schema`` (its ``$defs`` entry ``definition``), else ``error`` (one
    line, prefixed by ``where`` and the path inside ``data``)."""
    validator = _validator(ref(schema, definition))
    first = None
    for count, found in enumerate(validator.iter_errors(data)):
        if first is None or _rank(found) < _rank(first):
            first = found
        if found.validator in _SIZES or count >= _MORE_ERRORS:
            break  # bounded work on hostile input: no walk through 30,000 items once the list is too long
    if first is None:
        return data
    raise error(describe_error(first, where))


def _rank(found) -> tuple:
    """Report the shallowest error first, and an unknown or missing key before a value's type."""
    order = {"additionalProperties": 0, "required": 1, "type": 2}.get(found.validator, 3)
    return (len(found.absolute_path), order)


def _path(where: str, parts: Iterable[Any]) -> str:
    text = where
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def describe_error(found, where: str = "") -> str:
    """One line for a :class:`jsonschema.ValidationError`."""
    kind, schema, value = found.validator, found.schema, found.instance
    path = _path(where, found.absolute_path)
    prefix = f"{path}: " if path else ""
    if kind == "additionalProperties":
        known = sorted(schema.get("properties", {}))
        unknown = sorted(key for key in value if key not in schema.get("properties", {}))
        return prefix + unknown_key_message(unknown[0] if unknown else "?", known)
    if kind == "required":
        missing = [key for key in found.validator_value if key not in value]
        name = missing[0] if missing else "?"
        wanted = schema.get("properties", {}).get(name, {})
        return f"{prefix}missing {quoted(name, _QUOTE)}" + _what(wanted, ": ")
    if kind in ("anyOf", "oneOf") and found.context:
        # The alternatives of the value's own type say most (a Tavli context with an unknown key, a plies of 3,
        # not "must be null"): their first error, else the whole choice.
        typed = [e for e in found.context
                 if not (e.validator in ("type", "enum", "const") and len(e.absolute_path) == len(found.absolute_path))]
        if typed:
            return describe_error(min(typed, key=_rank), where)
    text = f"{prefix}must be {describe_expected(schema)}, got {quoted(value, _QUOTE)}"
    close = nearest(value, found.validator_value) if kind == "enum" else None
    return text + (f"; did you mean {close!r}?" if close else "")


def _what(schema: dict, lead: str) -> str:
    text = describe_expected(schema)
    return f"{lead}{text}" if text != "a valid value" else ""


def describe_expected(schema: Any) -> str:
    """What a schema wants, in words: ``an integer 1..25``, ``one of 'X', 'O'``, ``a string of at most 40
    characters`` (a schema of a validator: its references inlined)."""
    if not isinstance(schema, dict):
        return "a valid value"
    if "title" in schema:
        return schema["title"]
    options = schema.get("anyOf") or schema.get("oneOf")
    if options and "type" not in schema:
        return " or ".join(describe_expected(option) for option in options)
    if "description" in schema and "type" not in schema and "enum" not in schema and "const" not in schema:
        return schema["description"].rstrip(".")
    if "const" in schema:
        return quoted(schema["const"], _QUOTE)
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind in ("integer", "number"):
        noun = "an integer" if kind == "integer" else "a number"
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is not None and high is not None:
            return f"{noun} {low}..{high}"
        if low is not None:
            return f"{noun} >= {low}"
        return noun
    if kind == "string":
        text = "a string"
        if "pattern" in schema:
            text += f" matching {schema['pattern']}"
        if "maxLength" in schema:
            text += f" of at most {schema['maxLength']} characters"
        return text
    if kind == "array":
        low, high = schema.get("minItems"), schema.get("maxItems")
        count = f"{low}" if low == high and low is not None else f"at most {high}" if high is not None else ""
        return f"a list of {count} items".replace("of  items", "").replace("  ", " ") if count else "a list"
    if kind == "boolean":
        return "true or false"
    if kind == "object":
        known = sorted(schema.get("properties", {}))
        return "an object" + (f" with keys {', '.join(known)}" if known else "")
    if kind == "null":
        return "null"
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return " or ".join(describe_expected(option) for option in options)
    return "a valid value"


def unknown_key_message(key: Any, known: Iterable[str], noun: str = "key", listed: str = "known") -> str:
    """``unknown key 'levle'; did you mean 'level'? (known: ...)`` (``noun`` and ``listed``: ``unknown cmd ...
    (commands: ...)``)."""
    known = list(known)
    close = nearest(key, known)
    hint = f"; did you mean {close!r}?" if close else ""
    return f"unknown {noun} {quoted(key, _QUOTE)}{hint} ({listed}: {', '.join(known)})"
