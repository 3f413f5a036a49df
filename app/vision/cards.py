"""Reading licences and cards from a photo: an Australian driver licence (any state), a Medicare card, a New Zealand
driver licence. Plain Python (no Flask): bytes in, a `CardReading` out, never an exception for a bad photo.

How: find the card in the photo (its four edges against the table) and straighten it to 856 x 540 (ID-1 at 10 px a
millimetre), so that positions are fractions of the card whatever the phone's resolution or angle; read its text
with RapidOCR (PP-OCR's detection and recognition models, ONNX, bundled in the `rapidocr` wheel: nothing is
downloaded at run time); group the text into rows; then find each field by its label (wording varies per state:
"Licence No.", "LICENCE NO.", "Licence Number") and take the value beside or below the label that has the field's
shape (a date, a number). What has no label on the card is found by its place and shape: the name below the
header, the Medicare card's 10-digit number and its numbered people, the NZ licence's numbered fields (1 surname,
2 given names, 3 birth date, 4b expiry, 5a licence number, 5b version).

Each field comes with a confidence (the recogniser's score, lowered where the value needed a repair or was found by
its shape without its label); a field not read says why (`unread`), and the photo's problems (`problems`: no card
edges, no text, too blurry, too dark) are said once. Nothing is invented: a Medicare number whose check digit fails
is returned as read, with a low confidence."""
from __future__ import annotations

import datetime as dt
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from app.vision.images import ImageError, decode, fit, sharpness

CARD_SIZE = (856, 540)              # ID-1, 85.6 x 54 mm at 10 px/mm
KINDS = ("licence", "medicare", "nz_licence")
# The fields each kind returns (names of the ID type's data, `app.providers.id_data`, plus the card's expiry).
FIELDS = {
    "licence": ("first_name", "middle_name", "last_name", "birth_date", "state", "licence_number", "card_number",
                "expiry_date"),
    "medicare": ("first_name", "middle_name", "last_name", "card_number", "individual_reference_number", "card_type",
                 "card_expiry"),
    "nz_licence": ("first_name", "middle_name", "last_name", "birth_date", "licence_number", "version_number",
                   "expiry_date"),
}
OPTIONAL = {"middle_name"}          # absent from many cards: not read is not a problem
REASONS = {
    "NO_TEXT": "no text found", "TOO_BLURRY": "too blurry", "TOO_DARK": "too dark", "CARD_NOT_FOUND":
    "the card's edges were not found (the whole photo was read)", "NOT_AN_IMAGE": "not a readable image",
    "OCR_UNAVAILABLE": "the text reader is not installed", "NOT_FOUND": "not found on the card",
    "UNREADABLE": "found but not readable", "NOT_PRINTED": "not found on the front; this state prints it on the back",
    "CHECK_FAILED": "read, but its check digit does not match",
}
AU_STATES = {"NEW SOUTH WALES": "NSW", "VICTORIA": "VIC", "QUEENSLAND": "QLD", "SOUTH AUSTRALIA": "SA",
             "WESTERN AUSTRALIA": "WA", "TASMANIA": "TAS", "AUSTRALIAN CAPITAL TERRITORY": "ACT",
             "NORTHERN TERRITORY": "NT"}
# Licence numbers of these states are digits only (`id_data.LICENCE_NUMBER`): letters read there are repaired.
DIGIT_LICENCES = {"ACT", "NT", "QLD", "VIC", "WA"}
DIGIT_CARDS = {"NSW", "NT"}
LABELS = {  # longest first within a field; compared upper-case without punctuation
    "licence_number": ("LICENCE NUMBER", "LICENSE NUMBER", "LICENCE NO", "LICENSE NO", "LIC NO", "DL NO",
                       "LICENCE"),
    "card_number": ("CARD NUMBER", "CARD NO", "CARD NUM"),
    "birth_date": ("DATE OF BIRTH", "BIRTH DATE", "DOB", "BORN"),
    "expiry_date": ("LICENCE EXPIRY", "LICENSE EXPIRY", "EXPIRY DATE", "VALID UNTIL", "VALID TO", "EXPIRES",
                    "EXPIRY", "EXP"),
}
NOT_NAMES = {"DRIVER", "DRIVERS", "LICENCE", "LICENSE", "AUSTRALIA", "AUSTRALIAN", "CLASS", "CONDITIONS",
             "SIGNATURE", "ADDRESS", "LEARNER", "PROBATIONARY", "PROVISIONAL", "NEW", "ZEALAND", "TRANSPORT",
             "AGENCY", "MEDICARE", "VALID", "RECIPROCAL", "INTERIM", "HEALTH", "CARD", "TERRITORY", "OF",
             *(w for s in AU_STATES for w in s.split())}
PARTICLES = {"VAN", "DER", "DEN", "DE", "DA", "DI", "DEL", "LA", "LE", "VON", "BIN", "BINTI", "AL", "EL", "ST"}
MONTHS = {m: i + 1 for i, m in enumerate(("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT",
                                          "NOV", "DEC"))}
TO_DIGIT = str.maketrans({"O": "0", "D": "0", "Q": "0", "U": "0", "I": "1", "L": "1", "|": "1", "!": "1", "J": "1",
                          "Z": "2", "S": "5", "B": "8", "G": "6", "T": "7", "A": "4"})
TO_LETTER = str.maketrans({"0": "O", "1": "I", "5": "S", "8": "B", "6": "G", "2": "Z", "4": "A"})
BLURRY = 50.0                       # variance of the Laplacian of the straightened card below which it is blurred
DARK = 45                           # median grey level below which it is too dark


@dataclass
class FieldRead:
    value: str
    confidence: float               # 0..1
    source: str                     # the text it was read from


@dataclass
class CardReading:
    kind: str
    fields: dict[str, FieldRead] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)      # field -> reason code (REASONS)
    problems: list[str] = field(default_factory=list)         # the photo's: NO_TEXT, TOO_BLURRY, ...
    others: list[dict] = field(default_factory=list)          # a Medicare card's other people
    card_found: bool = False
    sharpness: float = 0.0
    elapsed_ms: int = 0
    lines: list[str] = field(default_factory=list)           # the text rows read (for analysts and debugging)

    def values(self, min_confidence: float = 0.0) -> dict[str, str]:
        return {k: f.value for k, f in self.fields.items() if f.confidence >= min_confidence}

    def confidences(self) -> dict[str, float]:
        return {k: round(f.confidence, 3) for k, f in self.fields.items()}

    def why(self, name: str) -> str | None:
        code = self.unread.get(name)
        return REASONS.get(code, code) if code else None

    def summary(self) -> dict:
        """Plain values for a JSON record: what was read (values included), confidences, what was not and why."""
        return {"kind": self.kind, "fields": self.values(), "confidence": self.confidences(),
                "unread": dict(self.unread), "problems": list(self.problems), "card_found": self.card_found,
                "others": len(self.others), "elapsed_ms": self.elapsed_ms}


@dataclass
class _Box:
    text: str
    score: float
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def h(self) -> float:
        return self.y1 - self.y0

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2


# ---------------------------------------------------------------- the OCR engine (one per process)

_engine = None
_engine_lock = threading.Lock()
_run_lock = threading.Lock()


class OcrUnavailable(RuntimeError):
    """rapidocr or onnxruntime is not installed (`pip install -e .` installs both)."""


def engine():
    """RapidOCR with the models of its wheel, named by path (so that no configuration can make it download one):
    detection and recognition only (the card is straightened first, so the angle classifier is not needed)."""
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                try:
                    import rapidocr
                    from rapidocr import RapidOCR
                except ImportError as exc:  # pragma: no cover - a broken installation
                    raise OcrUnavailable(str(exc)) from None
                models = Path(rapidocr.__file__).parent / "models"
                det, rec = models / "PP-OCRv6_det_small.onnx", models / "PP-OCRv6_rec_small.onnx"
                if not (det.exists() and rec.exists()):
                    raise OcrUnavailable(f"rapidocr's bundled models are missing in {models}")
                _engine = RapidOCR(params={
                    "Global.log_level": "error", "Global.use_cls": False, "Global.text_score": 0.3,
                    "Det.model_path": str(det), "Rec.model_path": str(rec),
                    "Det.limit_type": "max", "Det.limit_side_len": 640,
                    "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                    "EngineConfig.onnxruntime.inter_op_num_threads": 1})
    return _engine


def warm_up() -> None:
    """Load the models in the background (a second or so), so that the first photo does not wait for them."""
    if _engine is None:
        threading.Thread(target=_quiet_engine, name="cards-warm-up", daemon=True).start()


def _quiet_engine() -> None:
    try:
        engine()
    except Exception:  # noqa: BLE001 - reported when a photo is read
        pass


def _ocr(img: np.ndarray) -> list[_Box]:
    """The text of the image, one box per phrase: a detected line is cut where its words are far apart (more than
    a line's height), as on a card whose two columns the detector joined ("Licence No.   Expiry Date")."""
    with _run_lock:   # one reading at a time per process: two would only share the same cores
        out = engine()(img, use_det=True, use_cls=False, use_rec=True, return_word_box=True)  # (calls set these)
    boxes = []
    words_of = out.word_results if out.word_results else ()
    for i, (quad, text, score) in enumerate(zip(out.boxes if out.boxes is not None else [], out.txts or (),
                                                out.scores or ())):
        q = np.asarray(quad, np.float32)
        line = _Box(str(text).strip(), float(score), float(q[:, 0].min()), float(q[:, 1].min()),
                    float(q[:, 0].max()), float(q[:, 1].max()))
        boxes.extend(_segments(line, words_of[i] if i < len(words_of) else ()))
    return [b for b in boxes if b.text]


def _reread(img: np.ndarray, box: _Box, *, right: float = 0.0) -> tuple[str, float] | None:
    """The recogniser alone on a box's region, widened to the right by `right` x its height (a last character the
    detector left out, as a Medicare number's lone issue digit)."""
    h, w = img.shape[:2]
    pad = 0.12 * box.h
    x0, y0 = max(0, int(box.x0 - pad)), max(0, int(box.y0 - pad))
    x1, y1 = min(w, int(box.x1 + right * box.h)), min(h, int(box.y1 + pad))
    if x1 - x0 < 4 or y1 - y0 < 4:
        return None
    with _run_lock:
        out = engine()(img[y0:y1, x0:x1], use_det=False, use_cls=False, use_rec=True, return_word_box=False)
    texts, scores = tuple(out.txts or ()), tuple(out.scores or ())
    return (str(texts[0]).strip(), float(scores[0])) if texts else None


def _segments(line: _Box, words) -> list[_Box]:
    """`line` cut at its wide gaps, using the recogniser's word boxes for the positions and the line's own text
    (whose spaces the word boxes do not always keep) for the characters."""
    words = [(str(t), np.asarray(q, np.float32)) for t, _s, q in words if str(t).strip()]
    chars = line.text.replace(" ", "")
    if len(words) < 2 or "".join(t.replace(" ", "") for t, _ in words) != chars:
        return [line]
    cuts, start = [], 0
    for k in range(1, len(words)):
        gap = float(words[k][1][:, 0].min() - words[k - 1][1][:, 0].max())
        if gap > 0.9 * line.h:
            cuts.append((start, k))
            start = k
    cuts.append((start, len(words)))
    if len(cuts) == 1:
        return [line]
    out, pos = [], 0          # character offsets in `line.text`, spaces included
    for a, b in cuts:
        n = sum(len(t.replace(" ", "")) for t, _ in words[a:b])
        begin = pos
        while begin < len(line.text) and line.text[begin] == " ":
            begin += 1
        end, seen = begin, 0
        while end < len(line.text) and seen < n:
            seen += line.text[end] != " "
            end += 1
        pos = end
        xs = np.concatenate([q[:, 0] for _, q in words[a:b]])
        out.append(_Box(line.text[begin:end].strip(), line.score, float(xs.min()), line.y0, float(xs.max()),
                        line.y1))
    return out


# ---------------------------------------------------------------- finding and straightening the card

def _order(pts: np.ndarray) -> np.ndarray:
    s, d = pts.sum(1), np.diff(pts, axis=1).ravel()
    return np.float32([pts[np.argmin(s)], pts[np.argmin(d)], pts[np.argmax(s)], pts[np.argmax(d)]])


def find_card(img: np.ndarray) -> np.ndarray | None:
    """The card's corners (top-left, top-right, bottom-right, bottom-left) in `img`, or None when no quadrilateral
    of a card's proportions covers a fair part of the photo."""
    h, w = img.shape[:2]
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) if img.ndim == 3 else img
    grey = cv2.GaussianBlur(grey, (5, 5), 0)
    candidates = []
    edges = cv2.dilate(cv2.Canny(grey, 30, 90), np.ones((3, 3), np.uint8))
    _, otsu = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    border = np.concatenate([img[:8].reshape(-1, 3), img[-8:].reshape(-1, 3), img[:, :8].reshape(-1, 3),
                             img[:, -8:].reshape(-1, 3)]).astype(np.float32) if img.ndim == 3 else None
    masks = [edges, otsu]
    if border is not None:   # what differs from the table's colour (seen at the photo's border)
        lab = cv2.cvtColor(cv2.GaussianBlur(img, (5, 5), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
        table = cv2.cvtColor(np.median(border, 0).astype(np.uint8)[None, None], cv2.COLOR_BGR2LAB)
        distance = np.linalg.norm(lab - table.astype(np.float32)[0, 0], axis=2)
        masks.append(cv2.morphologyEx((distance > 25).astype(np.uint8) * 255, cv2.MORPH_CLOSE,
                                      np.ones((9, 9), np.uint8)))
    for mask in masks:
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        for c in sorted(contours, key=cv2.contourArea, reverse=True)[:3]:
            area = cv2.contourArea(c)
            if area < 0.12 * h * w or area > 0.98 * h * w:
                continue
            hull = cv2.convexHull(c)
            quad = cv2.approxPolyDP(hull, 0.02 * cv2.arcLength(hull, True), True)
            pts = quad.reshape(-1, 2).astype(np.float32) if len(quad) == 4 else \
                cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32)
            pts = _order(pts)
            top, left = np.linalg.norm(pts[1] - pts[0]), np.linalg.norm(pts[3] - pts[0])
            ratio = max(top, left) / max(1.0, min(top, left))
            if 1.42 <= ratio <= 1.78:   # ID-1 is 1.585; a phone held a little askew
                candidates.append((len(quad) == 4, area, pts))
    if not candidates:
        return None
    return max(candidates, key=lambda c: (c[0], c[1]))[2]


def straighten(img: np.ndarray, corners: np.ndarray | None) -> np.ndarray:
    """The card seen flat at CARD_SIZE (landscape); the whole photo scaled to fit when no corners were found."""
    cw, ch = CARD_SIZE
    if corners is None:
        return fit(img, 1100)[0]
    top = np.linalg.norm(corners[1] - corners[0])
    left = np.linalg.norm(corners[3] - corners[0])
    if left > top:   # a portrait-held card: its long side is vertical; turn it landscape
        corners = np.roll(corners, -1, axis=0)
    matrix = cv2.getPerspectiveTransform(corners, np.float32([[0, 0], [cw, 0], [cw, ch], [0, ch]]))
    return cv2.warpPerspective(img, matrix, (cw, ch), flags=cv2.INTER_AREA)


# ---------------------------------------------------------------- rows, labels, values

def _rows(boxes: list[_Box]) -> list[list[_Box]]:
    """Boxes grouped into rows (vertical centres within half a line of each other), left to right."""
    rows: list[list[_Box]] = []
    for b in sorted(boxes, key=lambda b: b.cy):
        for row in rows:
            ref = row[0]
            if abs(b.cy - ref.cy) < 0.5 * min(b.h, ref.h):
                row.append(b)
                break
        else:
            rows.append([b])
    return [sorted(r, key=lambda b: b.x0) for r in rows]


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^A-Z0-9 ]", " ", text.upper())).strip()


def _similar(a: str, b: str) -> float:
    from rapidfuzz.fuzz import ratio
    return ratio(a, b) / 100.0


def _split_label(text: str, labels: dict[str, tuple[str, ...]]) -> tuple[str, str, float] | None:
    """(field, the rest of the text after the label, similarity) when `text` starts with one of `labels`."""
    norm = _norm(text)
    best = None
    for name, words in labels.items():
        for label in words:
            for cut in {len(label) - 1, len(label), len(label) + 1}:
                head = norm[:cut].strip()
                sim = _similar(head, label)
                if sim >= 0.84 and (best is None or sim > best[2] + 1e-9 or
                                    (abs(sim - best[2]) < 1e-9 and len(label) > best[3])):
                    rest = _after(text, cut)
                    best = (name, rest, sim, len(label))
    return best[:3] if best else None


def _after(text: str, n_norm: int) -> str:
    """The original text after its first `n_norm` normalised characters (labels end with ':' or '.' at times)."""
    count, i = 0, 0
    norm_chars = re.sub(r"[^A-Z0-9 ]", " ", text.upper())
    squeezed = []
    for i, ch in enumerate(norm_chars):
        if ch == " " and (not squeezed or squeezed[-1] == " "):
            continue
        squeezed.append(ch)
        count += 1
        if count >= n_norm:
            break
    return text[i + 1:].lstrip(" .:;,-")


# ---------------------------------------------------------------- values: dates and numbers

def _year(yy: int, kind: str, today: dt.date) -> int:
    if kind == "expiry":
        return 2000 + yy
    return 1900 + yy if yy > today.year % 100 else 2000 + yy


def parse_date(text: str, kind: str = "birth", *, today: dt.date | None = None) -> tuple[str, float] | None:
    """An ISO date and a certainty from what a card prints: `01 JAN 1990`, `01 Jan 1990`, `01JAN1990`,
    `01/01/1990`, `01-01-1990`, `01.01.90`, `1990-01-01`; day before month (Australia, New Zealand). Two-digit
    years: a birth date is in the past, an expiry in this century. Letters read in place of digits (O for 0) are
    repaired at a lower certainty. None when there is no date."""
    today = today or dt.date.today()
    up = text.upper().replace(",", " ")
    found = None
    m = re.search(r"(?<![0-9A-Z])([0-9OISB]{1,2})\s*[ ./-]?\s*([A-Z0-9]{3})[A-Z]*\s*[ ./-]?\s*"
                  r"([0-9OISB]{2,4})(?![0-9])", up)
    if m and m.group(2).translate(TO_LETTER) in MONTHS:
        day, mon, year = m.group(1), MONTHS[m.group(2).translate(TO_LETTER)], m.group(3)
        found = (day, mon, year, m.group(0) if m.group(2).isalpha() else "repaired")
    if found is None:
        m = re.search(r"(?<![0-9])([0-9]{4})-([0-9]{2})-([0-9]{2})(?![0-9])", up)
        if m:
            found = (m.group(3), int(m.group(2)), m.group(1), m.group(0))
    if found is None:
        m = re.search(r"(?<![0-9A-Z])([0-9OIlSB]{1,2})\s?[./-]\s?([0-9OIlSB]{1,2})\s?[./-]\s?([0-9OIlSB]{2,4})"
                      r"(?![0-9])", up)
        if m:
            found = (m.group(1), m.group(2), m.group(3), m.group(0))
    if found is None:
        return None
    day_t, mon_t, year_t, raw = found
    certainty = 1.0
    clean = [str(x).translate(TO_DIGIT) for x in (day_t, mon_t, year_t)]
    if clean != [str(x) for x in (day_t, mon_t, year_t)] or raw == "repaired":
        certainty = 0.8
    try:
        day, mon, year = int(clean[0]), int(clean[1]), int(clean[2])
    except ValueError:
        return None
    if len(clean[2]) == 2:
        year = _year(year, kind, today)
    elif len(clean[2]) == 3:
        return None
    try:
        value = dt.date(year, mon, day)
    except ValueError:
        return None
    if kind == "birth" and not (dt.date(1900, 1, 1) <= value <= today):
        return None
    return value.isoformat(), certainty


def parse_month(text: str) -> tuple[str, float] | None:
    """A month as YYYY-MM from `11/2026`, `11/26`, `11-2026` (a green Medicare card's 'valid to'); not from the end of
    a whole date (`31/02/2026`, which parse_date refused, is not February)."""
    m = re.search(r"(?<![0-9])(?<![0-9][./-])([0-9OIlSB]{1,2})\s?[./-]\s?([0-9OIlSB]{4}|[0-9OIlSB]{2})(?![0-9/.-])",
                  text.upper())
    if not m:
        return None
    mon_t, year_t = m.group(1).translate(TO_DIGIT), m.group(2).translate(TO_DIGIT)
    certainty = 1.0 if (mon_t, year_t) == (m.group(1), m.group(2)) else 0.8
    mon, year = int(mon_t), int(year_t)
    year = 2000 + year if year < 100 else year
    if not 1 <= mon <= 12 or not 2000 <= year <= 2100:
        return None
    return f"{year:04d}-{mon:02d}", certainty


def _compact(text: str) -> str:
    return re.sub(r"[\s.\-:]+", "", text.upper())


def _number(text: str, *, digits_only: bool = False, min_len: int = 4, max_len: int = 12) -> tuple[str, float] | None:
    """A document number from a value's text: upper case, spaces removed; letters read in a digits-only number
    repaired (lower certainty)."""
    if parse_date(text, "expiry"):
        return None
    token = _compact(text)
    token = re.sub(r"[^A-Z0-9|!]", "", token)
    if not min_len <= len(token) <= max_len:
        return None
    certainty = 1.0
    if digits_only and not token.isdigit():
        repaired = token.translate(TO_DIGIT)
        if not repaired.isdigit():
            return None
        token, certainty = repaired, 0.75
    if not any(c.isdigit() for c in token):
        return None
    return token, certainty


def medicare_check_digit(first8: str) -> str:
    """A Medicare number's ninth digit: its first eight weighted 1, 3, 7, 9, 1, 3, 7, 9, summed, modulo 10."""
    return str(sum(int(d) * w for d, w in zip(first8, (1, 3, 7, 9, 1, 3, 7, 9))) % 10)


def medicare_check(number: str) -> bool:
    """A 10-digit Medicare number (the tenth the issue number) starting 2-6 whose check digit holds."""
    return bool(re.fullmatch(r"[2-6]\d{9}", number)) and medicare_check_digit(number[:8]) == number[8]


# ---------------------------------------------------------------- names

def _name_text(text: str) -> bool:
    """Text that can be a name: letters, spaces, apostrophes, hyphens, a comma; no card vocabulary."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z ,.'\-]*", text.strip()):
        return False
    words = _norm(text).split()
    return bool(words) and not all(w in NOT_NAMES for w in words) and not any(
        w in {"LICENCE", "LICENSE", "DRIVER", "DRIVERS", "MEDICARE"} for w in words)


def _split_person(given_words: list[str], surname_words: list[str]) -> dict[str, str]:
    given = [w.title() for w in given_words if w.strip(".,")]
    return {"first_name": given[0] if given else "", "middle_name": " ".join(given[1:]),
            "last_name": " ".join(w.title() for w in surname_words if w)}


def split_name(lines: list[str]) -> dict[str, str] | None:
    """first_name, middle_name, last_name from a card's name lines, in the orders cards print them:
    `SURNAME, Given Names`; `Given Names SURNAME` (surname the upper-case words at the end); `GIVEN NAMES SURNAME`
    (all upper case: the last word, with its particles: VAN DER BERG); `SURNAME` over `Given Names`."""
    lines = [re.sub(r"\s+", " ", ln.strip(" .,")) for ln in lines if ln.strip(" .,")]
    if not lines:
        return None
    if len(lines) == 1 and "," in lines[0]:
        surname, given = lines[0].split(",", 1)
        return _split_person(given.split(), surname.split())
    if len(lines) >= 2:
        return _split_person(lines[1].split(), lines[0].split())
    words = lines[0].split()
    if len(words) < 2:
        return None
    if any(c.islower() for c in lines[0]):
        n = 0
        while n < len(words) - 1 and words[-1 - n].isupper() and len(words[-1 - n]) > 1:
            n += 1
        n = max(n, 1)
        return _split_person(words[:-n], words[-n:])
    n = 1
    while n < len(words) - 1 and words[-1 - n].upper() in PARTICLES:
        n += 1
    return _split_person(words[:-n], words[-n:])


# ---------------------------------------------------------------- reading

class _Reader:
    def __init__(self, kind: str, boxes: list[_Box], today: dt.date, person: dict | None = None,
                 image: np.ndarray | None = None):
        self.kind, self.boxes, self.today, self.person, self.image = kind, boxes, today, person, image
        self.rows = _rows(boxes)
        self.fields: dict[str, FieldRead] = {}
        self.unread: dict[str, str] = {}
        self.used: set[int] = set()

    def put(self, name: str, value: str, confidence: float, source: str) -> None:
        if value and (name not in self.fields or confidence > self.fields[name].confidence):
            self.fields[name] = FieldRead(value, round(max(0.0, min(1.0, confidence)), 3), source)

    def row_text(self, row: list[_Box]) -> str:
        return " ".join(b.text for b in row)

    # -- labelled fields: the value in the label's own box, else beside it, else below it
    def labelled(self, labels: dict[str, tuple[str, ...]], parse) -> dict[str, tuple[_Box, float]]:
        found: dict[str, tuple[_Box, float]] = {}
        for b in self.boxes:
            hit = _split_label(b.text, labels)
            if hit is None:
                continue
            name, rest, sim = hit
            if name in found and found[name][1] >= sim:
                continue
            found[name] = (b, sim)
            value = parse(name, rest) if rest else None
            if value is not None:
                self.put(name, value[0], b.score * value[1] * sim, b.text)
                self.used.add(id(b))
                continue
            for cand in self._near(b):
                value = parse(name, cand.text)
                if value is not None:
                    self.put(name, value[0], cand.score * value[1] * min(1.0, sim + 0.05), cand.text)
                    self.used.update({id(b), id(cand)})
                    break
            else:
                self.unread.setdefault(name, "UNREADABLE")
        return found

    def _near(self, label: _Box) -> list[_Box]:
        """Boxes that may hold a label's value: on its row to its right (nearest first), then below it."""
        right = [c for c in self.boxes if c is not label and c.x0 > (label.x0 + label.x1) / 2 and c.x1 > label.x1
                 and abs(c.cy - label.cy) < 0.4 * max(label.h, c.h) and c.x0 - label.x1 < 12 * label.h]
        below = [c for c in self.boxes if c is not label and c not in right and c.cy > label.y1
                 and c.y0 - label.y1 < 2.2 * label.h and c.x0 < label.x1 and c.x1 > label.x0 - 0.5 * label.h]
        return sorted(right, key=lambda c: c.x0) + sorted(below, key=lambda c: (round(c.y0 / label.h),
                                                                                abs(c.x0 - label.x0)))


def _parse_licence_value(state: str | None):
    def parse(name: str, text: str):
        if name in ("birth_date", "expiry_date"):
            return parse_date(text, "birth" if name == "birth_date" else "expiry")
        if name == "licence_number":
            return _number(text, digits_only=state in DIGIT_LICENCES, min_len=4, max_len=10)
        if name == "card_number":
            return _number(text, digits_only=state in DIGIT_CARDS, min_len=6, max_len=10)
        return None
    return parse


def _state(reader: _Reader) -> tuple[str, float, str] | None:
    """The state of issue: its name in the header (fuzzy), else the state code of the address line."""
    best = None
    for b in reader.boxes:
        norm = _norm(b.text)
        for name, code in AU_STATES.items():
            if name in norm:
                sim = 1.0
            else:
                sim = max((_similar(norm[i:i + len(name)], name) for i in range(0, max(1, len(norm) - len(name) + 1))),
                          default=0.0)
            if sim >= 0.8 and (best is None or (sim, len(name)) > (best[1], best[3])):
                best = (code, sim * b.score, b.text, len(name))
    if best:
        return best[:3]
    for b in reader.boxes:
        m = re.search(r"\b(NSW|VIC|QLD|SA|WA|TAS|ACT|NT)\s+\d{3,4}\b", b.text.upper())
        if m:
            return m.group(1), 0.6 * b.score, b.text
    return None


def _read_licence(reader: _Reader) -> None:
    state = _state(reader)
    if state:
        reader.put("state", state[0], state[1], state[2])
    labels = reader.labelled(LABELS, _parse_licence_value(state[0] if state else None))
    # The name: the rows of letters under the header and above the first labelled field, in the text column.
    top = min((b.y0 for b, _ in labels.values()), default=CARD_SIZE[1])
    column = min((b.x0 for b, _ in labels.values()), default=None)
    header_bottom = max((b.y1 for b in reader.boxes if _norm(b.text) in (*AU_STATES, "DRIVER LICENCE",
                                                                           "DRIVER S LICENCE")), default=0)
    names = []
    for row in reader.rows:
        if not row or row[0].y0 < header_bottom - 2 or row[0].y1 > top + 2:
            continue
        parts = [b for b in row if column is None or abs(b.x0 - column) < 120 or b.x0 > column]
        text = reader.row_text(parts)
        if parts and _name_text(text):
            names.append((parts, text))
        elif names:
            break   # the address follows the name
    names = names[:2]
    if len(names) == 2 and "," in names[0][1]:
        names = names[:1]
    if len(names) == 2 and not (names[0][1].isupper() and len(names[0][1].split()) <= 3
                                and any(c.islower() for c in names[1][1]) or names[1][1].isupper()):
        names = names[:1]
    person = split_name([t for _, t in names]) if names else None
    if person:
        score = min(b.score for parts, _ in names for b in parts)
        source = " / ".join(t for _, t in names)
        for k, v in person.items():
            if v:
                reader.put(k, v, score * (0.9 if k == "last_name" else 0.85), source)
    # Dates without labels: the earliest past one is the birth date, a future one the expiry.
    if "birth_date" not in reader.fields or "expiry_date" not in reader.fields:
        dates = []
        for b in reader.boxes:
            if id(b) in reader.used:
                continue
            got = parse_date(b.text, "expiry")
            if got:
                dates.append((got[0], b))
        dates.sort()
        if dates and "birth_date" not in reader.fields and dates[0][0] < reader.today.isoformat():
            reader.put("birth_date", dates[0][0], dates[0][1].score * 0.6, dates[0][1].text)
        if dates and "expiry_date" not in reader.fields and dates[-1][0] >= reader.today.isoformat():
            reader.put("expiry_date", dates[-1][0], dates[-1][1].score * 0.6, dates[-1][1].text)


def _read_medicare(reader: _Reader, img: np.ndarray) -> list[dict]:
    others = []
    for row in reader.rows:
        text = reader.row_text(row)
        compact = re.sub(r"\s+", "", text)
        if "card_number" not in reader.fields and re.fullmatch(r"[0-9OIlSB]{9}", compact) and reader.image is not None:
            again = _reread(reader.image, row[-1], right=1.6)   # the issue digit stands apart: read the row again
            if again and re.fullmatch(r"[0-9OIlSB]{10}", re.sub(r"\s+", "", again[0])):
                text, compact = again[0], re.sub(r"\s+", "", again[0])
                row = [_Box(again[0], again[1] * 0.95, row[0].x0, row[0].y0, row[-1].x1, row[-1].y1)]
        if "card_number" not in reader.fields and re.fullmatch(r"[0-9OIlSB]{10}", compact):
            number = compact.translate(TO_DIGIT)
            ok = medicare_check(number)
            score = min(b.score for b in row) * (1.0 if number == compact else 0.8) * (1.0 if ok else 0.4)
            reader.put("card_number", number, score, text)
            if not ok:
                reader.unread["card_number"] = "CHECK_FAILED"
            continue
        m = re.fullmatch(r"\s*(?:([1-9Il|])\s*[.:]?\s+)?([A-Z][A-Z .'\-]+)", text)
        if m and _name_text(m.group(2)) and not re.search(r"VALID|MEDICARE|RECIPROCAL|INTERIM", m.group(2)) \
                and "card_number" in reader.fields:
            irn = (m.group(1) or "?").translate(TO_DIGIT)
            words = m.group(2).split()
            if len(words) < 2:
                continue
            i = 1
            middle = []
            while i < len(words) - 1 and len(words[i]) == 1:
                middle.append(words[i])
                i += 1
            person = _split_person(words[:1] + middle, words[i:])
            others.append({"individual_reference_number": irn, **person, "score": min(b.score for b in row),
                           "source": text})
        v = re.search(r"VA[LI1]{1,2}D\s*T[O0]\s*(.*)", text.upper())
        if v:
            got = parse_date(v.group(1), "expiry") or parse_month(v.group(1))
            if got:
                reader.put("card_expiry", got[0], min(b.score for b in row) * got[1], text)
    for i, p in enumerate(others):   # a reference number not read: from its neighbours' (they count up by one)
        if p["individual_reference_number"] == "?":
            before = others[i - 1]["individual_reference_number"] if i else "0"
            p["individual_reference_number"] = str(int(before) + 1) if before.isdigit() and int(before) < 9 else ""
            p["score"] *= 0.8
    if others:
        pick, certainty = _choose_person(others, reader.person)
        chosen = others.pop(pick)
        confidence = chosen.pop("score") * certainty
        source = chosen.pop("source")
        for k, v in chosen.items():
            reader.put(k, v, confidence, source)
        others = [{k: v for k, v in o.items() if k not in ("score", "source")} for o in others]
    colour = _medicare_colour(img, reader)
    if colour:
        reader.put("card_type", *colour, "card colour")
    expiry = reader.fields.get("card_expiry")
    if expiry and reader.fields.get("card_type"):   # a green card's expiry is a month, others a date
        kind = reader.fields["card_type"].value
        if kind == "green" and len(expiry.value) == 10:
            expiry.value = expiry.value[:7]
        elif kind != "green" and len(expiry.value) == 7:
            expiry.confidence = round(expiry.confidence * 0.5, 3)
    return others


def _choose_person(people: list[dict], person: dict | None) -> tuple[int, float]:
    """Which of a Medicare card's people is the one verifying: the closest to the expected name (the IDPass's
    requested identity) when given and close enough, else the first listed; and how sure that choice is."""
    if len(people) == 1:
        return 0, 1.0
    if person and (person.get("first_name") or person.get("last_name")):
        want = _norm(f"{person.get('first_name') or ''} {person.get('last_name') or ''}")
        scores = [_similar(want, _norm(f"{p['first_name']} {p['last_name']}")) for p in people]
        best = max(range(len(people)), key=scores.__getitem__)
        if scores[best] >= 0.75:
            return best, 0.95
    return 0, 0.6


def _medicare_colour(img: np.ndarray, reader: _Reader) -> tuple[str, float] | None:
    words = " ".join(b.text.upper() for b in reader.boxes)
    if "RECIPROCAL" in words:
        return "blue", 0.95
    if "INTERIM" in words:
        return "yellow", 0.95
    if img.ndim != 3:
        return None
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
    mask = (hsv[..., 1] > 40) & (hsv[..., 2] > 90)
    if mask.mean() < 0.3:
        return None
    hue = float(np.median(hsv[..., 0][mask]))
    for name, lo, hi in (("yellow", 15, 40), ("green", 40, 90), ("blue", 90, 130)):
        if lo <= hue < hi:
            return name, 0.85
    return None


NZ_CODES = {"1": "last_name", "2": "given", "3": "birth_date", "4b": "expiry_date", "5a": "licence_number",
            "5b": "version_number"}


def _nz_code(text: str) -> tuple[str, str] | None:
    m = re.match(r"\s*([1-9IlS])\s*([abAB68]?)\s*[.,:;]\s*(.*)$", text) or \
        re.match(r"\s*([1-9IlS])([abAB68]?)\s+(.*)$", text)
    if not m:
        return None
    digit = m.group(1).translate(TO_DIGIT)
    letter = {"6": "b", "8": "b"}.get(m.group(2), m.group(2).lower())
    return digit + letter, m.group(3).strip()


def _nz_by_order(reader: _Reader, values: dict[str, tuple[str, _Box]]) -> None:
    """Fields whose number was not read, found by their place: the name rows are the two rows of letters under
    the header (1 surname, then 2 given names); the dates left unclaimed are the birth date (the earliest in the
    past) and the expiry (the latest)."""
    def index(box: _Box) -> int:
        return next(i for i, row in enumerate(reader.rows) if any(b is box for b in row))

    def name_row(i: int) -> tuple[str, _Box] | None:
        if 0 <= i < len(reader.rows):
            text = re.sub(r"^[^A-Za-z]+", "", reader.row_text(reader.rows[i]))
            if _name_text(text):
                return text, reader.rows[i][-1]
        return None

    if "last_name" not in values and "given" not in values:
        rows = [found for i in range(len(reader.rows)) for found in [name_row(i)] if found]
        if len(rows) >= 2:
            values["last_name"], values["given"] = rows[0], rows[1]
    if "last_name" not in values and "given" in values:
        found = name_row(index(values["given"][1]) - 1)
        if found:
            values["last_name"] = found
    if "given" not in values and "last_name" in values:
        found = name_row(index(values["last_name"][1]) + 1)
        if found:
            values["given"] = found
    claimed = {id(box) for _, box in values.values()}
    dates = sorted((got[0], b) for b in reader.boxes if id(b) not in claimed
                   for got in [parse_date(b.text, "expiry")] if got)
    for name, pick in (("birth_date", 0), ("expiry_date", -1)):
        if name not in values and dates:
            value, box = dates[pick]
            if (value < reader.today.isoformat()) == (name == "birth_date"):
                values[name] = (box.text, box)


def _read_nz(reader: _Reader) -> None:
    values: dict[str, tuple[str, _Box]] = {}
    for row in reader.rows:
        for i, b in enumerate(row):
            hit = _nz_code(b.text)
            if hit is None:
                continue
            code, rest = hit
            if not rest and i + 1 < len(row):
                rest = " ".join(x.text for x in row[i + 1:])
            if code in NZ_CODES and rest and NZ_CODES[code] not in values:
                values[NZ_CODES[code]] = (rest, b if not rest or i + 1 >= len(row) else row[i + 1])
            break
    # By shape, where a code was misread: the licence number's two letters and six digits, the dates.
    for b in reader.boxes:
        m = re.search(r"(?<![A-Z0-9])([A-Z0-9]{2})\s?([0-9OIlSB]{6})(?![0-9])", b.text.upper())
        if m and "licence_number" not in values and m.group(1).translate(TO_LETTER).isalpha():
            values["licence_number"] = (m.group(0), b)
    _nz_by_order(reader, values)
    for name, (text, box) in values.items():
        if name in ("last_name", "given"):   # a stray mark read before the name ("1.1 KOWALSKI")
            text = re.sub(r"^[^A-Za-z]+", "", text)
        if name == "last_name":
            if _name_text(text):
                reader.put("last_name", " ".join(w.title() for w in text.split()), box.score * 0.95, text)
        elif name == "given":
            if _name_text(text):
                given = text.split()
                reader.put("first_name", given[0].title(), box.score * 0.95, text)
                if len(given) > 1:
                    reader.put("middle_name", " ".join(w.title() for w in given[1:]), box.score * 0.95, text)
        elif name in ("birth_date", "expiry_date"):
            got = parse_date(text, "birth" if name == "birth_date" else "expiry")
            if got:
                reader.put(name, got[0], box.score * got[1], text)
            else:
                reader.unread[name] = "UNREADABLE"
        elif name == "licence_number":
            token = _compact(text)
            m = re.search(r"([A-Z0-9]{2})([A-Z0-9]{6})$", token)
            if m:
                letters, digits = m.group(1).translate(TO_LETTER), m.group(2).translate(TO_DIGIT)
                if letters.isalpha() and digits.isdigit():
                    repaired = (letters + digits) != m.group(0)
                    reader.put(name, letters + digits, box.score * (0.75 if repaired else 1.0), text)
                    continue
            reader.unread[name] = "UNREADABLE"
        elif name == "version_number":
            token = _compact(text).translate(TO_DIGIT)
            if re.fullmatch(r"\d{3}", token):
                reader.put(name, token, box.score * (1.0 if token == _compact(text) else 0.75), text)
            else:
                reader.unread[name] = "UNREADABLE"


def read_card(image: bytes | np.ndarray, kind: str, *, person: dict | None = None,
              today: dt.date | None = None) -> CardReading:
    """The fields of a card of `kind` (KINDS) in a photo (JPEG/PNG bytes or a BGR array). `person` (first_name,
    last_name), when known, picks the person among a Medicare card's several. Never raises for a bad photo: what
    could not be read is in `unread` (per field) and `problems` (the photo's). Raises OcrUnavailable only when the
    OCR package itself is missing (an installation fault, not the person's)."""
    if kind not in FIELDS:
        raise ValueError(f"unknown card kind {kind!r}")
    started = time.perf_counter()
    result = CardReading(kind=kind)

    def done() -> CardReading:
        photo = next((p for p in ("NOT_AN_IMAGE", "NO_TEXT", "TOO_BLURRY", "TOO_DARK") if p in result.problems),
                     "NOT_FOUND")
        for name in FIELDS[kind]:
            if name not in result.fields and name not in OPTIONAL:
                result.unread.setdefault(name, photo)
        result.unread = {k: v for k, v in result.unread.items() if k not in result.fields or v == "CHECK_FAILED"}
        result.elapsed_ms = round((time.perf_counter() - started) * 1000)
        return result

    try:
        img = decode(image) if isinstance(image, (bytes, bytearray)) else image
    except ImageError:
        result.problems.append("NOT_AN_IMAGE")
        return done()
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    h, w = img.shape[:2]
    work, _ = fit(img, 1600)   # find the card on a smaller copy; straighten from the full photo
    corners = find_card(work)
    if corners is not None:
        corners = corners * (w / work.shape[1])
    result.card_found = corners is not None
    if corners is None:
        result.problems.append("CARD_NOT_FOUND")
    card = straighten(img, corners)
    grey = cv2.cvtColor(card, cv2.COLOR_BGR2GRAY)
    result.sharpness = round(sharpness(cv2.resize(grey, CARD_SIZE, interpolation=cv2.INTER_AREA)), 1)
    if float(np.median(grey)) < DARK:
        result.problems.append("TOO_DARK")
    if result.sharpness < BLURRY:
        result.problems.append("TOO_BLURRY")
    boxes = _ocr(card)
    result.lines = [" ".join(b.text for b in row) for row in _rows(boxes)]
    if not boxes:
        result.problems.append("NO_TEXT")
        return done()
    reader = _Reader(kind, boxes, today or dt.date.today(), person, card)
    if kind == "licence":
        _read_licence(reader)
    elif kind == "medicare":
        result.others = _read_medicare(reader, card)
    else:
        _read_nz(reader)
    result.fields = {k: v for k, v in reader.fields.items() if k in FIELDS[kind]}
    result.unread.update(reader.unread)
    if kind == "licence" and "card_number" not in result.fields and result.fields.get("state") and \
            result.fields["state"].value in ("NSW", "VIC", "SA", "WA"):
        result.unread["card_number"] = "NOT_PRINTED"   # printed on the back of these states' cards
    return done()
