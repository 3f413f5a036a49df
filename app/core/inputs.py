"""Guards every request input passes before a service sees it (issue 7 §5).

Text: NUL can never be stored in PostgreSQL text, and the other C0 control characters and DEL are noise at
best and terminal-escape injection at worst. Every JSON string, query parameter, CSV cell and portal form
value is refused (400, naming the field) when it holds one; tab, line feed and carriage return are allowed
only in multi-line fields (note texts, event notes).

JSON: at most MAX_DEPTH levels of nesting (our bodies use three); deeper bodies, and any body that makes the
parser recurse, answer 400 instead of exhausting the stack."""
from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping

from app.core.errors import Invalid

MAX_DEPTH = 32
MULTILINE_FIELDS = frozenset({"note_text", "note", "body"})
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CONTROL_SINGLE_LINE = re.compile(r"[\x00-\x1f\x7f]")
CONTROL_MESSAGE = ("Must not contain control characters (NUL, escape, bell, ...); "
                   "tabs and line breaks are allowed only in note texts.")


def bad_text(value: str, *, multiline: bool = False) -> bool:
    return bool((_CONTROL if multiline else _CONTROL_SINGLE_LINE).search(value))


def check_text_fields(items: Iterable[tuple[str, str]], *, multiline: Iterable[str] = ()) -> None:
    """400 naming every field whose value holds a refused control character."""
    allowed = set(multiline)
    errors = {name: [CONTROL_MESSAGE] for name, value in items
              if isinstance(value, str) and bad_text(value, multiline=name in allowed)}
    if errors:
        raise Invalid("The request contains control characters.", errors=errors)


def parse_json(raw: bytes | str) -> Any:
    """Parse a JSON body; 400 for invalid JSON, too deep a nesting, or refused control characters."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Invalid("The request body must be UTF-8 encoded JSON.", errors={"body": ["Must be UTF-8."]}) \
                from None
    depth = _max_depth(raw)
    if depth > MAX_DEPTH:
        raise Invalid(f"The JSON body is nested {depth} levels deep; at most {MAX_DEPTH} are accepted.",
                      errors={"body": [f"Nested too deeply (at most {MAX_DEPTH} levels)."]})
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise Invalid("The request body must be valid JSON.", errors={"body": ["Must be valid JSON."]}) from None
    errors: dict[str, list[str]] = {}
    _walk(data, "", errors)
    if errors:
        raise Invalid("The request contains control characters.", errors=errors)
    return data


def _max_depth(text: str) -> int:
    """The deepest nesting of [ and { outside strings, without recursion (O(n), stops early)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def _walk(value: Any, path: str, errors: dict[str, list[str]]) -> None:
    if isinstance(value, str):
        field = path.rsplit(".", 1)[-1]
        if bad_text(value, multiline=field in MULTILINE_FIELDS):
            errors.setdefault(path or "body", []).append(CONTROL_MESSAGE)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            if bad_text(str(key)):
                errors.setdefault(path or "body", []).append("A field name contains control characters.")
                continue
            _walk(item, child, errors)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _walk(item, f"{path}.{i}" if path else str(i), errors)


def escape_like(text: str) -> str:
    """`%`, `_` and the escape character itself match literally in a LIKE pattern (use escape="\\\\")."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
