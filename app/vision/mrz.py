"""Reading the machine-readable zone of a passport, visa or ID card from a photo: find the MRZ lines, deskew,
crop, binarize, read them with tesseract (Debian's tesseract-ocr, the `eng` LSTM model, a whitelist of the MRZ
alphabet), then repair what OCR typically gets wrong (runs of fillers, O/0, I/1, B/8 ...) guided by the fixed
layout of each format and its check digits. Every check digit of the answer is verified again from the text.

    read_mrz(image_bytes) -> MrzResult | None
"""
from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field

import cv2
import numpy as np

from app.vision import icao, ocrb
from app.vision.images import ImageError, decode, encode_png

WHITELIST = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789<"
_TO_DIGIT = {"O": "0", "Q": "0", "D": "0", "U": "0", "I": "1", "L": "1", "T": "1", "Z": "2", "S": "5", "B": "8",
             "G": "6", "A": "4", "E": "8", "<": "0"}
_TO_ALPHA = {"0": "O", "1": "I", "2": "Z", "5": "S", "8": "B", "6": "G", "4": "A"}
_SWAPS = {"0": "OD", "O": "0DQ", "D": "0O", "Q": "O0", "1": "I", "I": "1", "2": "Z", "Z": "2", "5": "S", "S": "5",
          "8": "B", "B": "8", "6": "G", "G": "6", "4": "A", "A": "4"}


class VisionUnavailable(RuntimeError):
    """A system dependency (tesseract) is missing: `make system-deps` installs it."""


@dataclass
class MrzResult:
    format: str                       # TD3 (passport) | MRVA | MRVB (visas) | TD2 | TD1 (ID card)
    lines: list[str]                  # the MRZ as read (after repair), one string a line
    raw_lines: list[str]              # what tesseract returned, before repair
    document_type: str
    issuing_country: str
    surname: str
    given_names: str
    document_number: str
    nationality: str
    birth_date: str | None            # ISO 8601
    sex: str
    expiry_date: str | None
    optional_data: str
    optional_data_2: str
    valid: bool                       # every check digit verified and both dates exist
    checks: dict[str, bool] = field(default_factory=dict)
    failed_checks: list[str] = field(default_factory=list)
    confidence: float = 0.0           # 0..1: 1 when every check digit held on the first reading
    duration_ms: float = 0.0
    corrections: int = 0              # characters changed by the repair step
    method: str = "tesseract"         # which reader produced the lines: ocr-b | tesseract

    def fields(self) -> dict:
        """The parsed fields as a plain dict (for the IDPass document's OCR fields)."""
        return {k: getattr(self, k) for k in ("document_type", "issuing_country", "surname", "given_names",
                                              "document_number", "nationality", "birth_date", "sex",
                                              "expiry_date", "optional_data")}


# ---------------------------------------------------------------------------------------------------------------
# tesseract


def _tesseract() -> str:
    path = shutil.which("tesseract")
    if not path:
        raise VisionUnavailable("tesseract is not installed (Debian tesseract-ocr; make system-deps)")
    return path


def ocr_lines(image: np.ndarray, *, psm: int = 6) -> list[str]:
    """Tesseract on one prepared image, restricted to the MRZ alphabet; the non-empty lines, spaces removed."""
    cmd = [_tesseract(), "stdin", "stdout", "--oem", "1", "--psm", str(psm), "-l", "eng",
           "-c", f"tessedit_char_whitelist={WHITELIST}", "-c", "load_system_dawg=0", "-c", "load_freq_dawg=0"]
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    proc = subprocess.run(cmd, input=encode_png(image), capture_output=True, timeout=20, env=env, check=False)
    text = proc.stdout.decode("ascii", "ignore")
    return [re.sub(r"[^A-Z0-9<]", "", line.upper()) for line in text.splitlines() if line.strip()]


# ---------------------------------------------------------------------------------------------------------------
# finding the zone


@dataclass
class _Line:
    rect: tuple            # cv2.minAreaRect: (centre, (w, h), angle)
    length: float
    thickness: float
    angle: float           # degrees, the long side's slope
    centre: np.ndarray


def _line_from_rect(rect) -> _Line:
    (cx, cy), (w, h), angle = rect
    if w < h:
        w, h, angle = h, w, angle - 90
    while angle <= -45:
        angle += 180
    while angle > 135:
        angle -= 180
    if angle > 45:
        angle -= 180 if angle > 90 else 0
    return _Line(rect, w, h, angle, np.array([cx, cy]))


def _text_lines(grey: np.ndarray) -> list[_Line]:
    """Candidate long text lines: dark glyphs on a lighter ground, merged along the line."""
    h, w = grey.shape
    unit = max(3, round(w / 120))                      # about a third of an MRZ character's pitch
    rect_k = cv2.getStructuringElement(cv2.MORPH_RECT, (unit * 3, max(1, unit // 4)))
    blackhat = cv2.morphologyEx(grey, cv2.MORPH_BLACKHAT, cv2.getStructuringElement(cv2.MORPH_RECT, (unit * 5,
                                                                                                     unit * 5)))
    _, binary = cv2.threshold(blackhat, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    binary = cv2.morphologyEx(binary, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    merged = cv2.morphologyEx(binary, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (unit * 4, 1)))
    merged = cv2.morphologyEx(merged, cv2.MORPH_CLOSE, rect_k)
    merged = cv2.morphologyEx(merged, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (unit * 6, 1)))
    contours, _ = cv2.findContours(merged, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    lines = []
    for c in contours:
        line = _line_from_rect(cv2.minAreaRect(c))
        if line.length >= 0.35 * w and line.thickness > 0 and line.length / line.thickness >= 12 \
                and line.thickness <= 0.08 * h:
            lines.append(line)
    return lines


def _mrz_groups(lines: list[_Line]) -> list[list[_Line]]:
    """Groups of 2-3 parallel lines of similar length stacked closely: MRZ candidates, bottom-most first."""
    groups = []
    lines = sorted(lines, key=lambda ln: ln.centre[1])
    for i, first in enumerate(lines):
        group = [first]
        for other in lines[i + 1:]:
            last = group[-1]
            gap = float(np.linalg.norm(other.centre - last.centre))
            if abs(other.angle - first.angle) < 4 and gap < 4.0 * max(last.thickness, other.thickness) \
                    and 0.6 < other.length / first.length < 1.6:
                group.append(other)
        if len(group) >= 2 or first.length / first.thickness < 30:   # 2-3 lines, or one blob of merged lines
            groups.append(group[:3])
    groups.sort(key=lambda g: (-len(g), -g[-1].centre[1]))
    return groups


def _crop_group(grey: np.ndarray, group: list[_Line]) -> np.ndarray:
    """The zone of a group of lines, rotated level and cropped with a margin."""
    angle = float(np.median([ln.angle for ln in group]))
    pts = np.concatenate([cv2.boxPoints(ln.rect) for ln in group])
    centre = pts.mean(axis=0)
    rot = cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), angle, 1.0)
    h, w = grey.shape
    level = cv2.warpAffine(grey, rot, (w, h), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE)
    moved = cv2.transform(pts[None], rot)[0]
    x0, y0 = moved.min(axis=0)
    x1, y1 = moved.max(axis=0)
    thick = float(np.median([ln.thickness for ln in group]))
    pad_x, pad_y = thick * 1.2, thick * 0.9
    x0, x1 = int(max(0, x0 - pad_x)), int(min(w, x1 + pad_x))
    y0, y1 = int(max(0, y0 - pad_y)), int(min(h, y1 + pad_y))
    return level[y0:y1, x0:x1]


def _prepare(crop: np.ndarray, n_lines: int, variant: int) -> np.ndarray:
    """Scale the zone so a character is ~28 px wide, then clean it: 0 = contrast-stretched grey, 1 = Otsu
    binarization after background flattening, 2 = adaptive threshold."""
    scale = 1300 / max(1, crop.shape[1])
    img = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    # flatten uneven light: divide by a heavily blurred background
    background = cv2.morphologyEx(img, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (31, 31)))
    flat = cv2.divide(img, background, scale=255)
    if variant == 0:
        flat = cv2.GaussianBlur(flat, (3, 3), 0)
        return cv2.normalize(flat, None, 0, 255, cv2.NORM_MINMAX)
    if variant == 1:
        smooth = cv2.GaussianBlur(flat, (3, 3), 0)
        _, binary = cv2.threshold(smooth, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
        return binary
    smooth = cv2.medianBlur(flat, 3)
    return cv2.adaptiveThreshold(smooth, 255, cv2.ADAPTIVE_THRESH_GAUSSIAN_C, cv2.THRESH_BINARY, 31, 15)


# ---------------------------------------------------------------------------------------------------------------
# repairing the text


def _fix_length(line: str, width: int) -> str:
    """Bring a line read with too many or too few fillers to `width`: trailing filler runs absorb the difference."""
    if len(line) == width:
        return line
    if len(line) > width:
        excess = len(line) - width
        # remove fillers from the longest runs first (OCR often sees one '<' too many in a run)
        chars = list(line)
        while excess and "<<" in "".join(chars):
            s = "".join(chars)
            runs = [(m.end() - m.start(), m.start(), m.end()) for m in re.finditer("<{2,}", s)]
            _, start, end = max(runs)
            del chars[end - 1]
            excess -= 1
        return "".join(chars)[:width]
    missing = width - len(line)
    m = list(re.finditer("<{2,}", line))
    if m:
        run = max(m, key=lambda r: r.end() - r.start())
        return line[:run.end()] + "<" * missing + line[run.end():]
    return line + "<" * missing


def _as_digits(text: str) -> str:
    return "".join(_TO_DIGIT.get(c, c) for c in text)


def _as_alpha(text: str) -> str:
    return "".join(_TO_ALPHA.get(c, c) for c in text)


def _normalise_td_line2(line: str) -> str:
    """TD3/MRV/TD2 line 2: digits where only digits may stand, letters where only letters may."""
    chars = list(line)

    def put(start: int, end: int, fn) -> None:
        chars[start:end] = list(fn("".join(chars[start:end])))

    put(9, 10, _as_digits)
    put(10, 13, _as_alpha)
    put(13, 20, _as_digits)
    sex = chars[20]
    chars[20] = {"H": "M", "N": "M", "P": "F", "E": "F"}.get(sex, sex)
    put(21, 28, _as_digits)
    if len(line) == 44:
        if chars[42] != "<":
            put(42, 44, _as_digits)
        else:
            put(43, 44, _as_digits)
    return "".join(chars)


_NAMES = re.compile(r"[A-Z]*(?:<[A-Z]+)*(?:<<[A-Z]+(?:<[A-Z]+)*)?")


def clean_names(field: str) -> str:
    """A name field as Doc 9303 writes it: the primary identifier (components split by one filler), `<<` and
    the secondary identifier (the same), then fillers to the end. So the first run of two fillers that does not
    separate the two identifiers ends the names, and a letter after it is a misread filler."""
    names = _NAMES.match(field).group()
    return names + "<" * (len(field) - len(names))


def _normalise_td_line1(line: str) -> str:
    chars = list(line)
    chars[0:5] = list(_as_alpha("".join(chars[0:5])))
    rest = _as_alpha("".join(chars[5:]))
    rest = re.sub(r"(?<=<)[KC](?=<)", "<", rest)  # a filler read as K or C between fillers
    rest = re.sub(r"<[KC]+$", lambda m: "<" * len(m.group()), rest)
    return "".join(chars[:5]) + clean_names(rest)


def _normalise_td1(lines: list[str]) -> list[str]:
    l1, l2, l3 = (list(x) for x in lines)
    l1[0:5] = list(_as_alpha("".join(l1[0:5])))
    l1[14:15] = list(_as_digits(l1[14]))
    s2 = "".join(l2)
    s2 = _as_digits(s2[0:7]) + s2[7] + _as_digits(s2[8:15]) + _as_alpha(s2[15:18]) + s2[18:29] + _as_digits(s2[29])
    return ["".join(l1), s2, clean_names(_as_alpha("".join(l3)))]


def _repair_number(line: str, start: int, end: int, check_pos: int) -> str:
    """Try the usual confusions on an alphanumeric field until its check digit holds (at most 3 changes)."""
    field_text, digit = line[start:end], line[check_pos]
    if icao.check_digit(field_text) == digit or (set(field_text) == {"<"}):
        return line
    positions = [i for i, c in enumerate(field_text) if c in _SWAPS]
    for n in (1, 2, 3):
        for combo in itertools.combinations(positions, n):
            for repl in itertools.product(*(_SWAPS[field_text[i]] for i in combo)):
                cand = list(field_text)
                for i, r in zip(combo, repl):
                    cand[i] = r
                cand_s = "".join(cand)
                if icao.check_digit(cand_s) == digit:
                    return line[:start] + cand_s + line[end:]
    return line


def _candidate_lines(raw: list[str]) -> list[list[str]]:
    """From OCR lines, the MRZ line groups worth parsing (longest plausible lines, in order)."""
    long_lines = [ln for ln in raw if len(ln) >= 24]
    if len(long_lines) < 2:
        return []
    out = []
    if len(long_lines) >= 3 and all(26 <= len(ln) <= 34 for ln in long_lines[-3:]):
        out.append(long_lines[-3:])
    out.append(long_lines[-2:])
    return out


_FILLER_LOOKALIKES = set("KCEXZ")


def _fillers(line: str, *, digits_end: bool = False) -> str:
    """Fillers that tesseract read as K (or C, E, X, Z): such a letter between fillers or look-alikes, with a
    filler on at least one side, is a filler (a one-letter name part between fillers is given up for it)."""
    chars = list(line)
    end = len(chars)
    if digits_end:
        while end > 0 and chars[end - 1].isdigit():
            end -= 1
    changed = True
    while changed:
        changed = False
        for i in range(end):
            if chars[i] not in _FILLER_LOOKALIKES:
                continue
            left = chars[i - 1] if i > 0 else None
            right = chars[i + 1] if i + 1 < end else None
            ok_left = left is None or left == "<" or left in _FILLER_LOOKALIKES
            ok_right = right is None or right == "<" or right in _FILLER_LOOKALIKES
            if ok_left and ok_right and "<" in (left, right) and (left is not None or right is not None):
                chars[i] = "<"
                changed = True
    return "".join(chars)


def _repair(raw: list[str]) -> tuple[list[str], int] | None:
    lines = list(raw)
    if len(lines) == 2:
        lines = [lines[0][:5] + _fillers(lines[0][5:]), _fillers(lines[1], digits_end=True)]
    else:
        lines = [lines[0][:5] + _fillers(lines[0][5:], digits_end=True), _fillers(lines[1], digits_end=True),
                 _fillers(lines[2])]
    n = len(lines)
    if n == 3:
        width = 30
        fixed = [_fix_length(ln, width) for ln in lines]
        fixed = _normalise_td1(fixed)
        fixed[0] = _repair_number(fixed[0], 5, 14, 14)
    else:
        first = lines[0]
        avg = (len(lines[0]) + len(lines[1])) / 2
        width = 44 if avg >= 40 else 36
        fixed = [_fix_length(ln, width) for ln in lines]
        if first[:1] in ("V",) or fixed[0][:1] == "V":
            pass
        fixed = [_normalise_td_line1(fixed[0]), _normalise_td_line2(fixed[1])]
        fixed[1] = _repair_number(fixed[1], 0, 9, 9)
        if width == 44 and fixed[0][0] == "P" and fixed[1][42] != "<":
            fixed[1] = _repair_number(fixed[1], 28, 42, 42)
    changes = sum(a != b for x, y in zip(lines, fixed) for a, b in zip(x, y)) + \
        sum(abs(len(x) - len(y)) for x, y in zip(lines, fixed))
    return fixed, changes


# ---------------------------------------------------------------------------------------------------------------
# the API


def _result(parsed: icao.ParsedMrz, raw: list[str], corrections: int, attempt: int, started: float) -> MrzResult:
    confidence = 1.0 if parsed.valid else 0.3 * sum(parsed.checks.values()) / max(1, len(parsed.checks))
    if parsed.valid:
        confidence -= min(0.3, 0.02 * corrections) + 0.05 * attempt
    return MrzResult(
        format=parsed.format, lines=parsed.lines, raw_lines=raw, document_type=parsed.document_type,
        issuing_country=parsed.issuing_country, surname=parsed.surname, given_names=parsed.given_names,
        document_number=parsed.document_number, nationality=parsed.nationality, birth_date=parsed.birth_date,
        sex=parsed.sex, expiry_date=parsed.expiry_date, optional_data=parsed.optional_data,
        optional_data_2=parsed.optional_data_2, valid=parsed.valid, checks=dict(parsed.checks),
        failed_checks=parsed.failed_checks, confidence=round(max(0.0, confidence), 3),
        duration_ms=round((time.perf_counter() - started) * 1000, 1), corrections=corrections)


def parse_text(raw: list[str]) -> tuple[icao.ParsedMrz, int] | None:
    """The best parse of OCR lines (repaired), or None."""
    best = None
    for group in _candidate_lines(raw):
        repaired = _repair(group)
        if repaired is None:
            continue
        lines, changes = repaired
        parsed = icao.parse(lines)
        if parsed is None:
            continue
        score = (parsed.valid, sum(parsed.checks.values()), -changes)
        if best is None or score > best[0]:
            best = (score, parsed, changes)
    return (best[1], best[2]) if best else None


def _zones(grey: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """Candidate MRZ crops (image, number of lines), most likely first; the bottom of the picture last."""
    zones = []
    for group in _mrz_groups(_text_lines(grey))[:3]:
        zones.append((_crop_group(grey, group), len(group)))
    h = grey.shape[0]
    zones.append((grey[int(h * 0.55):, :], 2))
    return zones


def read_mrz(image_bytes: bytes, *, use_tesseract: bool = True) -> MrzResult | None:
    """The MRZ of the document in the photo, or None when no MRZ is found. A result with `valid=False` names
    the check digits that failed (a misread or a forged zone: the caller asks for a better photo or a review).

    Each candidate zone is read first by the OCR-B cell reader (app/vision/ocrb.py); when no reading holds all
    its check digits, tesseract reads the zone prepared three ways, and its fields replace those of the OCR-B
    reading whose check digits fail (merge_readings); the best reading wins."""
    started = time.perf_counter()
    try:
        img = decode(image_bytes, grey=True)
    except ImageError:
        return None
    h, w = img.shape
    scale = 1400 / max(h, w)
    grey = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)
    best: MrzResult | None = None

    def consider(result: MrzResult) -> bool:
        nonlocal best
        if best is None or (result.valid, sum(result.checks.values()), result.confidence) > \
                (best.valid, sum(best.checks.values()), best.confidence):
            best = result
        return result.valid

    zones = [z for z in _zones(grey) if z[0].size]
    readings: list[tuple[float, list[str]]] = []       # the OCR-B reader's lines, for a field-wise second opinion
    for crop, _n_lines in zones:
        for n_chars, cells in ocrb.read_zone(crop):
            text = text_from_cells(n_chars, cells)
            if text is None:
                continue
            lines, score = text
            parsed = icao.parse(lines)
            if parsed is None:
                continue
            readings.append((score, lines))
            result = _result(parsed, lines, 0, 0, started)
            result.method = "ocr-b"
            result.confidence = round(max(0.0, min(1.0, score)) if parsed.valid else result.confidence, 3)
            if consider(result) and score > 0.5:
                best.duration_ms = round((time.perf_counter() - started) * 1000, 1)
                return best
    if use_tesseract:
        for crop, n_lines in zones[:2]:
            for variant in (0, 1, 2):
                raw = ocr_lines(_prepare(crop, n_lines, variant))
                parsed = parse_text(raw)
                if parsed is None:
                    continue
                result = _result(parsed[0], raw, parsed[1], variant, started)
                result.method = "tesseract"
                for _, lines in sorted(readings, key=lambda r: -r[0]):
                    merged = merge_readings(lines, parsed[0].lines)
                    merged_parse = icao.parse(merged) if merged else None
                    if merged_parse is not None and merged_parse.valid:
                        result = _result(merged_parse, raw, parsed[1], variant, started)
                        result.method = "ocr-b+tesseract"
                        break
                if consider(result):
                    break
            if best is not None and best.valid:
                break
    if best is not None:
        best.duration_ms = round((time.perf_counter() - started) * 1000, 1)
    return best


# ---------------------------------------------------------------------------------------------------------------
# the OCR-B cell reader's text: constrained per position, repaired with the check digits

_DIGITS = "0123456789"
REPAIR_MARGIN = 0.08     # how much worse (in match score) a substituted glyph may be than the one read
ZERO_PRIOR = 0.02        # how much worse a 0 may match than an O (Q, D) where both may stand, and win ...
ZERO_STEP = 0.06         # ... unless the zone's own zeros say otherwise (see zero_threshold)
_ALPHA = "ABCDEFGHIJKLMNOPQRSTUVWXYZ<"
_ALNUM = _ALPHA + _DIGITS


def _layout(kind: str) -> tuple[list[list[str]], list[tuple[int, int, int, int]]]:
    """Allowed characters per position of each line, and the check-digit fields (line, start, end, check pos)."""
    if kind == "TD1":
        l1 = [_ALPHA[:-1]] + [_ALPHA] * 4 + [_ALNUM] * 9 + [_DIGITS + "<"] + [_ALNUM] * 15
        l2 = [_DIGITS] * 7 + ["MFX<"] + [_DIGITS] * 7 + [_ALPHA] * 3 + [_ALNUM] * 11 + [_DIGITS]
        l3 = [_ALPHA] * 30
        return [l1, l2, l3], [(0, 5, 14, 14), (1, 0, 6, 6), (1, 8, 14, 14)]
    width = 44 if kind in ("TD3", "MRVA") else 36
    l1 = [_ALPHA[:-1]] + [_ALPHA] * (width - 1)
    l2 = [_ALNUM] * 9 + [_DIGITS] + [_ALPHA] * 3 + [_DIGITS] * 7 + ["MFX<"] + [_DIGITS] * 7
    l2 += [_ALNUM] * (width - len(l2))
    fields = [(1, 0, 9, 9), (1, 13, 19, 19), (1, 21, 27, 27)]
    if kind == "TD3":
        l2[42] = _DIGITS + "<"
        l2[43] = _DIGITS
        fields.append((1, 28, 42, 42))
    elif kind == "TD2":
        l2[35] = _DIGITS
    return [l1, l2], fields


def _composite(kind: str) -> tuple[int, list[tuple[int, int, int]], tuple[int, int]] | None:
    if kind == "TD3":
        return 1, [(1, 0, 10), (1, 13, 20), (1, 21, 43)], (1, 43)
    if kind == "TD2":
        return 1, [(1, 0, 10), (1, 13, 20), (1, 21, 35)], (1, 35)
    if kind == "TD1":
        return 1, [(0, 5, 30), (1, 0, 7), (1, 8, 15), (1, 18, 29)], (1, 29)
    return None


def _field_ok(text: str, digit: str) -> bool:
    if digit == "<":
        return set(text) <= {"<"}
    return digit.isdigit() and icao.check_digit(text) == digit


def _alternatives(cell, allowed: str, current: str) -> list[tuple[str, float]]:
    best = cell.best(allowed)[1]
    return [(ch, best - sc) for ch, sc in cell.ranked if ch in allowed and ch != current][:3]


def _repair_field(chars: list[list[str]], cells, allowed, line: int, positions: list[int], ok) -> bool:
    """Substitute next-best candidates (fewest, closest first) at `positions` until `ok(chars)` holds."""
    if ok(chars):
        return True
    options = []
    for pos in positions:
        for ch, margin in _alternatives(cells[line][pos], allowed[line][pos], chars[line][pos]):
            # only where the glyph was genuinely ambiguous: a clearly printed wrong check digit stays wrong
            if margin <= REPAIR_MARGIN:
                options.append((margin, pos, ch))
    options.sort()
    options = options[:12]
    for n in (1, 2):
        for combo in itertools.combinations(options, n):
            if len({pos for _, pos, _ in combo}) < n:
                continue
            saved = [(pos, chars[line][pos]) for _, pos, _ in combo]
            for _, pos, ch in combo:
                chars[line][pos] = ch
            if ok(chars):
                return True
            for pos, ch in saved:
                chars[line][pos] = ch
    return False


def merge_readings(first: list[str], second: list[str]) -> list[str] | None:
    """The first reader's lines, each field whose check digit fails there (with its check digit) taken from the
    second reader when it holds there: a second opinion per field rather than for the whole zone, so that the
    second reader's weaknesses (tesseract's fillers read as K, S or E in the names) stay out. The composite
    check digit is for the caller to verify. None when the two readings do not have the same shape."""
    kind = icao.detect_format(first)
    if kind is None or icao.detect_format(second) != kind:
        return None
    _, fields = _layout(kind)
    chars = [list(line) for line in first]
    for line, start, end, check in fields:
        if not _field_ok(first[line][start:end], first[line][check]) \
                and _field_ok(second[line][start:end], second[line][check]):
            chars[line][start:end] = list(second[line][start:end])
            chars[line][check] = second[line][check]
    return ["".join(line) for line in chars]


def zero_threshold(cells: list[list], allowed: list[list[str]]) -> float:
    """By how much an O must match better than a 0 to be read as O where both may stand (document numbers,
    optional data). A photo's blur, scale and printer shift that margin for every round glyph alike, so it is
    measured on the zone itself: midway between the margins of the zeros in digit-only places (the dates, the
    check digits) and of the Os in letter-only places (the names), or a fixed step above the zeros' margin
    when the names have no O. Without zeros, ZERO_PRIOR: issuers avoid the letter O in document numbers."""
    zeros, ohs = [], []
    for li, line in enumerate(cells):
        for pi, cell in enumerate(line):
            ok = allowed[li][pi]
            best = cell.best(ok)[0]
            scores = dict(cell.ranked)
            if "O" not in scores or "0" not in scores:
                continue
            if ok == _DIGITS and best == "0":
                zeros.append(scores["O"] - scores["0"])
            elif "0" not in ok and best == "O":
                ohs.append(scores["O"] - scores["0"])
    if zeros and ohs:
        return float(np.median(zeros) + np.median(ohs)) / 2
    if zeros:
        return float(np.median(zeros)) + ZERO_STEP
    return ZERO_PRIOR


def text_from_cells(n_chars: int, cells: list[list]) -> tuple[list[str], float] | None:
    """MRZ lines from ranked cells: each position restricted to what its field allows, then each field whose check
    digit fails repaired with the next-best candidates. Also the mean match score."""
    if n_chars == 30:
        kind = "TD1"
    else:
        first = cells[0][0].best(_ALPHA[:-1])[0]
        kind = ("MRVA" if n_chars == 44 else "MRVB") if first == "V" else ("TD3" if n_chars == 44 else "TD2")
    allowed, fields = _layout(kind)
    chars = [[cells[li][pi].best(allowed[li][pi])[0] for pi in range(len(cells[li]))] for li in range(len(cells))]
    # a round glyph where letters and digits may both stand: O or 0 by this zone's own zeros and Os
    threshold = zero_threshold(cells, allowed)
    for li in range(len(cells)):
        for pi, ok in enumerate(allowed[li]):
            if ok == _ALNUM and chars[li][pi] in "OQD":
                scores = dict(cells[li][pi].ranked)
                if scores[chars[li][pi]] - scores.get("0", -1) <= threshold:
                    chars[li][pi] = "0"
    for line, start, end, check in fields:
        positions = list(range(start, end)) + [check]
        _repair_field(chars, cells, allowed, line, positions,
                      lambda c, l=line, s=start, e=end, k=check: _field_ok("".join(c[l][s:e]), c[l][k]))
    name_line, name_start = (2, 0) if kind == "TD1" else (0, 5)
    chars[name_line][name_start:] = list(clean_names("".join(chars[name_line][name_start:])))
    comp = _composite(kind)
    if comp:
        _, parts, (cl, cp) = comp

        def composite_ok(c) -> bool:
            text = "".join("".join(c[l][s:e]) for l, s, e in parts)
            checks_hold = all(_field_ok("".join(c[fl][fs:fe]), c[fl][fk]) for fl, fs, fe, fk in fields)
            return checks_hold and _field_ok(text, c[cl][cp])
        positions = sorted({p for l, s, e in parts if l == cl for p in range(s, e)} | {cp})
        _repair_field(chars, cells, allowed, cl, positions, composite_ok)
    score = float(np.mean([cells[li][pi].best(allowed[li][pi])[1] for li in range(len(cells))
                           for pi in range(len(cells[li]))]))
    return ["".join(line) for line in chars], score
