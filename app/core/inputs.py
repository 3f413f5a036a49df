"""Guards every request input passes before a service sees it (issue 7 §5, issue 24 §1): one rule for the API's
JSON bodies and query strings, the CSV import's cells, and the portal's (and hosted pages') form fields.

Text is normalised to NFC, then refused (400, naming the field and each character as `U+2028 LINE SEPARATOR`)
when it holds a character that has no place in it. Two kinds of field (docs/decisions.md, "Input text"):

- **Single-line** (names, labels, references, e-mail addresses, search boxes: every field but the free texts):
  refused are all control characters (C0 including tab and line feed, DEL, C1 including U+0085 NEXT LINE),
  U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR, lone surrogates and noncharacters, and every invisible
  format character (category Cf: bidi marks, embeddings, overrides and isolates, zero-width space, word joiner,
  soft hyphen, byte order mark, tags, ...) except U+200C ZERO WIDTH NON-JOINER and U+200D ZERO WIDTH JOINER,
  which Persian, Urdu, the Indic scripts, Sinhala and emoji sequences need, and which are kept only between two
  visible characters (at an edge, next to a space or doubled they carry nothing).
- **Free text** (`MULTILINE_FIELDS`: note texts, event notes): tab, line feed and carriage return are kept;
  U+2028, U+2029 and U+0085 are line breaks by intent (a paste from a word processor), so they become a line
  feed; the typographic format characters that a writer of mixed scripts types (ZWNJ, ZWJ, zero-width space,
  word joiner, soft hyphen, the bidi marks LRM, RLM, ALM and the Mongolian vowel separator) are kept; other
  controls and format characters (bidi embeddings, overrides and isolates, which reorder all that follows them,
  the byte order mark, tags, ...) are refused.

JSON: at most MAX_DEPTH levels of nesting (our bodies use three); deeper bodies, and any body that makes the
parser recurse, answer 400 instead of exhausting the stack."""
from __future__ import annotations

import json
import re
import unicodedata
from typing import Any, Iterable, Mapping

from app.core.errors import Invalid

MAX_DEPTH = 32
MULTILINE_FIELDS = frozenset({"note_text", "note", "body"})
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CONTROL_SINGLE_LINE = re.compile(r"[\x00-\x1f\x7f]")
ZWNJ, ZWJ = "\u200c", "\u200d"
NAME_FORMAT_CHARACTERS = frozenset({ZWNJ, ZWJ})
FREE_TEXT_FORMAT_CHARACTERS = frozenset({ZWNJ, ZWJ, "\u200b", "\u2060", "\u00ad", "\u200e", "\u200f", "\u061c",
                                         "\u180e"})
_LINE_BREAKS_TO_LF = str.maketrans({"\u2028": "\n", "\u2029": "\n", "\x85": "\n"})
# A joiner that joins nothing: at the start or end, next to a space, or beside another joiner.
_LOOSE_JOINER = re.compile(r"(?:^|(?<=[\s\u200c\u200d]))[\u200c\u200d]|[\u200c\u200d](?=[\s\u200c\u200d]|$)")
# unicodedata has no names for the control characters: their names from the Unicode standard's aliases.
_CONTROL_NAMES = {
    0x00: "NULL", 0x07: "BELL", 0x08: "BACKSPACE", 0x09: "CHARACTER TABULATION", 0x0A: "LINE FEED",
    0x0B: "LINE TABULATION", 0x0C: "FORM FEED", 0x0D: "CARRIAGE RETURN", 0x1B: "ESCAPE", 0x1C: "FILE SEPARATOR",
    0x1D: "GROUP SEPARATOR", 0x1E: "RECORD SEPARATOR", 0x1F: "UNIT SEPARATOR", 0x7F: "DELETE",
    0x85: "NEXT LINE (NEL)", 0x9B: "CONTROL SEQUENCE INTRODUCER"}
SINGLE_LINE_RULE = ("single-line fields take no line breaks, control characters or invisible formatting "
                    "characters")
FREE_TEXT_RULE = "text may hold line breaks and tabs, but no other control or invisible formatting characters"


def character_name(ch: str) -> str:
    """`U+2028 LINE SEPARATOR`, `U+0085 NEXT LINE (NEL)`, `U+0000 NULL`: how an error names a character."""
    code = ord(ch)
    name = _CONTROL_NAMES.get(code) or unicodedata.name(ch, "")
    if not name:
        category = unicodedata.category(ch)
        name = {"Cc": "CONTROL CHARACTER", "Cs": "SURROGATE", "Cn": "NONCHARACTER"}.get(category, "CHARACTER")
    return f"U+{code:04X} {name}"


# Every character the rule may act on (controls, separators, format characters, surrogates, noncharacters): a text
# with none of them needs no closer look. The format characters (Cf) are listed by range; a test checks that the
# lists cover every Cf character of the running Python's Unicode version. Astral ones are looked for only in a text
# that has an astral character at all (one regular expression with astral ranges is ten times slower).
_SUSPECT_BMP = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_SUSPECT_ASTRAL = re.compile(
    "[\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001-\U000e007f" + "".join(chr((plane << 16) | 0xFFFE) + chr((plane << 16) | 0xFFFF)
                                       for plane in range(1, 17)) + "]")


def _suspect(value: str) -> bool:
    return bool(_SUSPECT_BMP.search(value) or (_ASTRAL.search(value) and _SUSPECT_ASTRAL.search(value)))


def _is_noncharacter(code: int) -> bool:
    return 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE


def _refused(ch: str, multiline: bool) -> bool:
    category = unicodedata.category(ch)
    if category == "Cc":
        return not (multiline and ch in "\t\n\r")
    if category == "Cf":
        return ch not in (FREE_TEXT_FORMAT_CHARACTERS if multiline else NAME_FORMAT_CHARACTERS)
    if category in ("Zl", "Zp", "Cs"):
        return True
    return category == "Cn" and _is_noncharacter(ord(ch))


def clean_text(value: str, *, multiline: bool = False) -> tuple[str, list[str]]:
    """(the text in NFC, with a free text's Unicode line breaks as line feeds; the refused characters named).
    Plain ASCII, nearly every value, costs one regular-expression scan."""
    if value.isascii():
        control = _CONTROL if multiline else _CONTROL_SINGLE_LINE
        if not control.search(value):
            return value, []
        return value, sorted({character_name(ch) for ch in control.findall(value)})
    if multiline:
        value = value.translate(_LINE_BREAKS_TO_LF)
    if not unicodedata.is_normalized("NFC", value):
        value = unicodedata.normalize("NFC", value)
    if not _suspect(value):
        return value, []
    refused = {ch for ch in set(value) if _refused(ch, multiline)}
    if not multiline and (ZWNJ in value or ZWJ in value):
        refused.update(m.group(0) for m in _LOOSE_JOINER.finditer(value))
    return value, [character_name(ch) for ch in sorted(refused)]


_SPACES = re.compile(r"\s+")


def single_line(text: str) -> str:
    """Text made safe for one line (an e-mail header, a log line), whatever it holds, even when it was stored
    before the inputs rule: line breaks of every kind (U+2028, U+0085, ...) and other control characters become
    spaces, other invisible format characters (bidi overrides, ...) are removed, spaces are collapsed. Never
    raises."""
    if text.isascii() and not _CONTROL_SINGLE_LINE.search(text):
        return text
    out = []
    for ch in text:
        category = unicodedata.category(ch)
        if category in ("Cc", "Zl", "Zp") or ch.isspace():
            out.append(" ")
        elif category == "Cs" or (category == "Cf" and ch not in NAME_FORMAT_CHARACTERS):
            continue
        else:
            out.append(ch)
    return _SPACES.sub(" ", "".join(out)).strip()


def free_text(text: str) -> str:
    """Multi-line text made safe for a plain-text e-mail body: Unicode line breaks become line feeds, other
    control characters (but tab) spaces, lone surrogates and refused format characters are removed."""
    text = text.translate(_LINE_BREAKS_TO_LF).replace("\r\n", "\n")
    if text.isascii() and not _CONTROL.search(text):
        return text
    out = []
    for ch in text:
        category = unicodedata.category(ch)
        if category == "Cc" and ch not in "\t\n":
            out.append(" ")
        elif category == "Cs" or (category == "Cf" and ch not in FREE_TEXT_FORMAT_CHARACTERS):
            continue
        else:
            out.append(ch)
    return "".join(out)


def problem_message(names: list[str], *, multiline: bool = False) -> str:
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"Contains {shown}: {FREE_TEXT_RULE if multiline else SINGLE_LINE_RULE}."


def bad_text(value: str, *, multiline: bool = False) -> bool:
    return bool(clean_text(value, multiline=multiline)[1])


def clean_value(value: str, field: str, errors: dict[str, list[str]], *, multiline: bool = False) -> str:
    """The value cleaned; its refused characters recorded in `errors` under `field`."""
    value, problems = clean_text(value, multiline=multiline)
    if problems:
        errors.setdefault(field, []).append(problem_message(problems, multiline=multiline))
    return value


def refused_characters_error(errors: dict[str, list[str]]) -> Invalid:
    fields = ", ".join(sorted(errors))
    return Invalid(f"Some fields contain characters that are not allowed ({fields}).", errors=errors)


def clean_fields(items: Iterable[tuple[str, str]], *, multiline: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The (name, value) pairs cleaned; 400 naming every field (and character) that holds a refused character."""
    allowed = set(multiline)
    errors: dict[str, list[str]] = {}
    cleaned = [(name, clean_value(value, name, errors, multiline=name in allowed) if isinstance(value, str)
                else value) for name, value in items]
    if errors:
        raise refused_characters_error(errors)
    return cleaned


def check_text_fields(items: Iterable[tuple[str, str]], *, multiline: Iterable[str] = ()) -> None:
    """400 naming every field whose value holds a refused character (query strings: checked, not rewritten)."""
    clean_fields(items, multiline=multiline)


def _is_secret(name: str) -> bool:
    return "password" in name


def clean_form(req, *, multiline: Iterable[str] = ()) -> None:
    """Clean a posted form's fields in place, so that the view (and its Flask-WTF form) reads the cleaned values;
    Invalid when a field holds a refused character. Passwords are opaque: never rewritten (a password set before
    would no longer match), only refused with a control character in them, as before."""
    from werkzeug.datastructures import ImmutableMultiDict
    items = list(req.form.items(multi=True))
    secret = [(name, value) for name, value in items if _is_secret(name)]
    errors: dict[str, list[str]] = {}
    for name, value in secret:
        found = sorted({character_name(ch) for ch in _CONTROL_SINGLE_LINE.findall(value)})
        if found:
            errors.setdefault(name, []).append(problem_message(found))
    try:
        cleaned = clean_fields([(n, v) for n, v in items if not _is_secret(n)], multiline=multiline)
    except Invalid as exc:
        errors.update(exc.errors or {})
    if errors:
        raise refused_characters_error(errors)
    cleaned_values = iter(cleaned)
    merged = [(name, value) if _is_secret(name) else next(cleaned_values) for name, value in items]
    if merged != items:
        req.form = ImmutableMultiDict(merged)
        req.__dict__.pop("values", None)  # werkzeug caches args + form together


def parse_json(raw: bytes | str) -> Any:
    """Parse a JSON body, its strings cleaned (`clean_text`, free text by the field's name: MULTILINE_FIELDS);
    400 for invalid JSON, too deep a nesting, or refused characters."""
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
    data = _walk(data, "", errors)
    if errors:
        raise refused_characters_error(errors)
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


def _walk(value: Any, path: str, errors: dict[str, list[str]], field: str = "") -> Any:
    """The value with its strings cleaned. A string's kind is its field's (a list's items are its field's)."""
    if isinstance(value, str):
        return clean_value(value, path or "body", errors, multiline=field in MULTILINE_FIELDS)
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            if bad_text(str(key)):
                errors.setdefault(path or "body", []).append(
                    "A field name contains characters that are not allowed.")
                continue
            out[key] = _walk(item, child, errors, str(key))
        return out
    if isinstance(value, list):
        return [_walk(item, f"{path}.{i}" if path else str(i), errors, field) for i, item in enumerate(value)]
    return value


def escape_like(text: str) -> str:
    """`%`, `_` and the escape character itself match literally in a LIKE pattern (use escape="\\\\")."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
