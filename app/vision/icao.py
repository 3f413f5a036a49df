"""ICAO Doc 9303 machine-readable zones as text: check digits, composing the lines of a document (for the synthetic
documents of the tests and the benchmark) and parsing them back with every check digit verified.

Written here rather than taken from the `mrz` package: that package is GPL-3.0, and the rules are short (Doc 9303
part 3 §4.9 for the check digit, parts 4-6 for the layouts). The tests check this module against the specimen
MRZs printed in Doc 9303 itself.

Formats: TD3 (passport, 2 x 44), MRV-A (visa, 2 x 44), MRV-B (visa, 2 x 36), TD2 (2 x 36), TD1 (ID card, 3 x 30).
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

FILLER = "<"
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789<"
_WEIGHTS = (7, 3, 1)
_LINES = {"TD1": (3, 30), "TD2": (2, 36), "TD3": (2, 44), "MRVA": (2, 44), "MRVB": (2, 36)}


def char_value(ch: str) -> int:
    if ch.isdigit():
        return int(ch)
    if "A" <= ch <= "Z":
        return ord(ch) - 55
    if ch == FILLER:
        return 0
    raise ValueError(f"not an MRZ character: {ch!r}")


def check_digit(text: str) -> str:
    """Doc 9303 part 3 §4.9: weights 7, 3, 1 repeated, sum modulo 10."""
    return str(sum(char_value(c) * _WEIGHTS[i % 3] for i, c in enumerate(text)) % 10)


def _check_ok(data: str, digit: str, *, may_be_filler: bool = False) -> bool:
    if may_be_filler and digit == FILLER and set(data) <= {FILLER}:
        return True
    return digit.isdigit() and check_digit(data) == digit


# ---------------------------------------------------------------------------------------------------------------
# composing


def mrz_text(value: str, length: int | None = None) -> str:
    """Upper-case A-Z/0-9 with fillers for spaces, hyphens and apostrophes (Doc 9303 part 3 §6 transliteration
    is the caller's job; anything else is dropped), padded or cut to `length`."""
    out = []
    for ch in value.upper():
        if ch in ALPHABET:
            out.append(ch)
        elif ch in " -,":
            out.append(FILLER)
        # apostrophes and other marks are omitted
    text = "".join(out)
    if length is None:
        return text
    return text[:length].ljust(length, FILLER)


def name_field(surname: str, given_names: str, length: int) -> str:
    name = mrz_text(surname).strip(FILLER)
    if given_names.strip():
        name += FILLER + FILLER + re.sub("<+", FILLER, mrz_text(given_names).strip(FILLER))
    return name[:length].ljust(length, FILLER)


def _yymmdd(value: dt.date | str) -> str:
    if isinstance(value, str):
        value = dt.date.fromisoformat(value)
    return value.strftime("%y%m%d")


def compose(kind: str, *, country: str, surname: str, given_names: str, number: str, nationality: str,
            birth_date: dt.date | str, sex: str, expiry_date: dt.date | str, optional: str = "",
            optional2: str = "", document_code: str | None = None) -> list[str]:
    """The MRZ lines of a document of `kind` (TD1, TD2, TD3, MRVA, MRVB) with correct check digits."""
    kind = kind.upper().replace("-", "")
    code = document_code or {"TD3": "P", "MRVA": "V", "MRVB": "V", "TD2": "I", "TD1": "I"}[kind]
    code = mrz_text(code, 2)
    country, nationality = mrz_text(country, 3), mrz_text(nationality, 3)
    number9 = mrz_text(number, 9)
    birth, expiry = _yymmdd(birth_date), _yymmdd(expiry_date)
    sex = mrz_text(sex, 1)
    if kind in ("TD3", "MRVA", "MRVB", "TD2"):
        width = _LINES[kind][1]
        line1 = code + country + name_field(surname, given_names, width - 5)
        head = number9 + check_digit(number9) + nationality + birth + check_digit(birth) + sex + expiry \
            + check_digit(expiry)
        if kind == "TD3":
            opt = mrz_text(optional, 14)
            opt_check = FILLER if set(opt) == {FILLER} else check_digit(opt)
            body = head + opt + opt_check
            composite = body[0:10] + body[13:20] + body[21:43]
            line2 = body + check_digit(composite)
        elif kind == "TD2":
            body = head + mrz_text(optional, 7)
            composite = body[0:10] + body[13:20] + body[21:35]
            line2 = body + check_digit(composite)
        else:  # visas carry no composite check digit
            line2 = head + mrz_text(optional, width - len(head))
        return [line1, line2]
    if kind == "TD1":
        line1 = code + country + number9 + check_digit(number9) + mrz_text(optional, 15)
        body2 = birth + check_digit(birth) + sex + expiry + check_digit(expiry) + nationality + mrz_text(optional2, 11)
        composite = line1[5:30] + body2[0:7] + body2[8:15] + body2[18:29]
        line2 = body2 + check_digit(composite)
        line3 = name_field(surname, given_names, 30)
        return [line1, line2, line3]
    raise ValueError(f"unknown MRZ format {kind!r}")


# ---------------------------------------------------------------------------------------------------------------
# parsing


@dataclass
class ParsedMrz:
    format: str                      # TD1 | TD2 | TD3 | MRVA | MRVB
    lines: list[str]
    document_type: str               # the document code without fillers: P, PN, V, I, ID, AC, ...
    issuing_country: str
    surname: str
    given_names: str
    document_number: str
    nationality: str
    birth_date: str | None           # ISO date, None when the six digits are not a date
    sex: str                         # M | F | X (filler printed as X)
    expiry_date: str | None
    optional_data: str
    optional_data_2: str = ""
    checks: dict[str, bool] = field(default_factory=dict)   # name of each check digit -> verified

    @property
    def valid(self) -> bool:
        return all(self.checks.values()) and self.birth_date is not None and self.expiry_date is not None

    @property
    def failed_checks(self) -> list[str]:
        failed = [name for name, ok in self.checks.items() if not ok]
        if self.birth_date is None:
            failed.append("birth_date_format")
        if self.expiry_date is None:
            failed.append("expiry_date_format")
        return failed


def _date(yymmdd: str, *, past: bool, today: dt.date | None = None) -> str | None:
    if not re.fullmatch(r"\d{6}", yymmdd):
        return None
    today = today or dt.date.today()
    yy, mm, dd = int(yymmdd[:2]), int(yymmdd[2:4]), int(yymmdd[4:])
    if past:  # birth dates lie in the past: 26 -> 2026 only if not after this year
        year = 2000 + yy if 2000 + yy <= today.year else 1900 + yy
    else:     # expiry dates: this century unless implausibly far ahead
        year = 2000 + yy if 2000 + yy <= today.year + 50 else 1900 + yy
    try:
        return dt.date(year, mm, dd).isoformat()
    except ValueError:
        return None


def _names(field_text: str) -> tuple[str, str]:
    text = field_text.rstrip(FILLER)
    surname, _, given = text.partition("<<")
    return surname.replace(FILLER, " ").strip(), given.replace(FILLER, " ").strip()


def _clean(text: str) -> str:
    return text.replace(FILLER, "")


def detect_format(lines: list[str]) -> str | None:
    shape = (len(lines), len(lines[0]) if lines else 0)
    if any(len(line) != shape[1] for line in lines):
        return None
    if shape == (3, 30):
        return "TD1"
    if shape == (2, 44):
        return "MRVA" if lines[0].startswith("V") else "TD3"
    if shape == (2, 36):
        return "MRVB" if lines[0].startswith("V") else "TD2"
    return None


def parse(lines: list[str], *, today: dt.date | None = None) -> ParsedMrz | None:
    """The fields of an MRZ given as its lines (already the right lengths), each check digit verified. None when
    the lines have no known shape or hold characters outside the MRZ alphabet."""
    lines = [line.strip().upper() for line in lines]
    kind = detect_format(lines)
    if kind is None or any(set(line) - set(ALPHABET) for line in lines):
        return None
    if kind == "TD1":
        l1, l2, l3 = lines
        number, opt1 = l1[5:14], l1[15:30]
        birth, sex, expiry, nationality, opt2 = l2[0:6], l2[7], l2[8:14], l2[15:18], l2[18:29]
        checks = {
            "document_number": _check_ok(number, l1[14]),
            "birth_date": _check_ok(birth, l2[6]),
            "expiry_date": _check_ok(expiry, l2[14]),
            "composite": _check_ok(l1[5:30] + l2[0:7] + l2[8:15] + l2[18:29], l2[29]),
        }
        surname, given = _names(l3)
        return ParsedMrz(kind, lines, _clean(l1[0:2]), _clean(l1[2:5]), surname, given, _clean(number),
                         _clean(nationality), _date(birth, past=True, today=today), sex if sex != FILLER else "X",
                         _date(expiry, past=False, today=today), _clean(opt1), _clean(opt2), checks)
    l1, l2 = lines
    number, nationality, birth, sex, expiry = l2[0:9], l2[10:13], l2[13:19], l2[20], l2[21:27]
    checks = {
        "document_number": _check_ok(number, l2[9]),
        "birth_date": _check_ok(birth, l2[19]),
        "expiry_date": _check_ok(expiry, l2[27]),
    }
    if kind == "TD3":
        optional = l2[28:42]
        checks["optional_data"] = _check_ok(optional, l2[42], may_be_filler=True) or \
            (set(optional) <= {FILLER} and l2[42] == "0")
        checks["composite"] = _check_ok(l2[0:10] + l2[13:20] + l2[21:43], l2[43])
    elif kind == "TD2":
        optional = l2[28:35]
        checks["composite"] = _check_ok(l2[0:10] + l2[13:20] + l2[21:35], l2[35])
    else:
        optional = l2[28:]
    surname, given = _names(l1[5:])
    return ParsedMrz(kind, lines, _clean(l1[0:2]), _clean(l1[2:5]), surname, given, _clean(number),
                     _clean(nationality), _date(birth, past=True, today=today), sex if sex != FILLER else "X",
                     _date(expiry, past=False, today=today), _clean(optional), "", checks)
