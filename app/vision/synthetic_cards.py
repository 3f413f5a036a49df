"""Synthetic licences and cards for the tests and the benchmark of `app.vision.cards`: an Australian driver licence
in the layout of each state (as far as plausible: headers, label wording, name order and date format differ per
state), a Medicare card (green, blue or yellow, one to four people) and a New Zealand driver licence (numbered
fields), drawn with Pillow in Debian's DejaVu fonts on an ID-1 card (85.6 x 54 mm), then photographed as a phone
would (`documents.photograph`: on a table, turned, blurred, noisy, JPEG-compressed).

Positions are jittered and the photo's side, the label wording and the layout (label above or beside its value)
vary, so that a reader that found its fields by fixed pixel boxes would fail here. Real cards print some fields on
the back (the card number of NSW, VIC, SA, WA licences): these synthetic fronts carry them, and the reader reads
them only where the photo shows them. Nothing here is read from disk but the fonts."""
from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

import cv2
import numpy as np
from PIL import Image, ImageDraw

from app.vision.cards import CARD_SIZE, medicare_check_digit
from app.vision.documents import _GIVEN, _SURNAMES, _font, _paste_photo, photograph

SANS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",)
SANS_BOLD = ("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",)
MONO_BOLD = ("/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf",)
STATES = ("ACT", "NSW", "NT", "QLD", "SA", "TAS", "VIC", "WA")
_LETTERS = "ABCDEFGHJKLMNPRSTUVWXYZ"          # issuers avoid I, O and Q in numbers
_DIGITS = "0123456789"


@dataclass(frozen=True)
class StateStyle:
    header: tuple[str, str]
    names: str                      # given_SURNAME | ALL | SURNAME/Given | SURNAME, Given
    date: str                       # a strftime format (upper-cased when `upper_dates`)
    labels: dict[str, tuple[str, ...]]
    tint: tuple[int, int, int]      # RGB
    upper_dates: bool = True


# Label wordings per state (one picked per card), the name order and the date format.
STYLES: dict[str, StateStyle] = {
    "NSW": StateStyle(("NEW SOUTH WALES", "DRIVER LICENCE"), "given_SURNAME", "%d %b %Y",
                      {"licence_number": ("Licence No.", "Licence Number"), "card_number": ("Card Number",),
                       "birth_date": ("Date of Birth",), "expiry_date": ("Expiry Date", "Expiry")}, (232, 238, 226)),
    "VIC": StateStyle(("DRIVER LICENCE", "VICTORIA AUSTRALIA"), "ALL", "%d-%m-%Y",
                      {"licence_number": ("LICENCE NO.",), "card_number": ("CARD NUMBER", "CARD NO."),
                       "birth_date": ("DATE OF BIRTH",), "expiry_date": ("LICENCE EXPIRY",)}, (236, 236, 240)),
    "QLD": StateStyle(("QUEENSLAND", "DRIVER LICENCE"), "SURNAME/Given", "%d %b %Y",
                      {"licence_number": ("Licence Number", "Licence No"), "card_number": ("Card Number",),
                       "birth_date": ("Date of Birth", "DOB"), "expiry_date": ("Expiry",)}, (240, 232, 226),
                      upper_dates=False),
    "SA": StateStyle(("SOUTH AUSTRALIA", "DRIVER'S LICENCE"), "SURNAME, Given", "%d/%m/%Y",
                     {"licence_number": ("Licence No", "Licence No."), "card_number": ("Card No", "Card Number"),
                      "birth_date": ("Date of Birth",), "expiry_date": ("Expiry", "Expiry Date")}, (228, 236, 242)),
    "WA": StateStyle(("WESTERN AUSTRALIA", "DRIVER'S LICENCE"), "SURNAME/Given", "%d %b %Y",
                     {"licence_number": ("Licence No", "Licence Number"), "card_number": ("Card Number",),
                      "birth_date": ("Date of Birth",), "expiry_date": ("Expiry Date",)}, (242, 238, 222)),
    "TAS": StateStyle(("TASMANIA", "DRIVER LICENCE"), "given_SURNAME", "%d-%m-%y",
                      {"licence_number": ("Licence No",), "card_number": ("Card No",),
                       "birth_date": ("DOB", "Date of Birth"), "expiry_date": ("Expires", "Expiry")}, (226, 238, 238)),
    "ACT": StateStyle(("AUSTRALIAN CAPITAL TERRITORY", "DRIVER LICENCE"), "SURNAME, Given", "%d %b %Y",
                      {"licence_number": ("Licence No", "Licence No."), "card_number": ("Card No",),
                       "birth_date": ("DOB", "Date of Birth"), "expiry_date": ("Expiry",)}, (236, 230, 240)),
    "NT": StateStyle(("NORTHERN TERRITORY", "DRIVER LICENCE"), "ALL", "%d/%m/%Y",
                     {"licence_number": ("Licence No.",), "card_number": ("Card Number",),
                      "birth_date": ("Date of Birth",), "expiry_date": ("Expiry Date",)}, (244, 234, 224)),
}
MEDICARE_TINTS = {"green": (150, 205, 160), "blue": (160, 195, 235), "yellow": (245, 228, 140)}
_STREETS = ["EXAMPLE ST", "WATTLE AVE", "GEORGE STREET", "BANKSIA RD", "RIVER PDE", "HILL CRES", "KING WAY"]
_TOWNS = {"NSW": ("SYDNEY", 2000), "VIC": ("MELBOURNE", 3000), "QLD": ("BRISBANE", 4000), "SA": ("ADELAIDE", 5000),
          "WA": ("PERTH", 6000), "TAS": ("HOBART", 7000), "ACT": ("CANBERRA", 2600), "NT": ("DARWIN", 800)}


@dataclass
class SyntheticCard:
    image: bytes                    # JPEG
    kind: str                       # licence | medicare | nz_licence
    fields: dict = field(default_factory=dict)       # what is printed, as the reader should return it
    flat: np.ndarray | None = None                   # the card before the photo (BGR)


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _numbers(rng: random.Random, state: str) -> tuple[str, str]:
    """A licence number and a card number in the state's format (id_data.LICENCE_NUMBER / CARD_NUMBER)."""
    licence = {"ACT": lambda: _pick(rng, _DIGITS, rng.choice([6, 7, 10])), "NSW": lambda: _pick(rng, _DIGITS, 8),
               "NT": lambda: _pick(rng, _DIGITS, rng.choice([6, 7])), "QLD": lambda: _pick(rng, _DIGITS, 9),
               "SA": lambda: rng.choice(_LETTERS) + _pick(rng, _DIGITS, 5),
               "TAS": lambda: rng.choice(_LETTERS) + _pick(rng, _DIGITS, 5),
               "VIC": lambda: _pick(rng, _DIGITS, 9), "WA": lambda: _pick(rng, _DIGITS, 7)}[state]()
    card = {"ACT": lambda: _pick(rng, _DIGITS, 10), "NSW": lambda: _pick(rng, _DIGITS, 10),
            "NT": lambda: _pick(rng, _DIGITS, 8), "QLD": lambda: _pick(rng, _LETTERS, 1) + _pick(rng, _DIGITS, 9),
            "SA": lambda: rng.choice(_LETTERS) + _pick(rng, _DIGITS, 8),
            "TAS": lambda: rng.choice(_LETTERS) + _pick(rng, _DIGITS, 8),
            "VIC": lambda: rng.choice(_LETTERS) + _pick(rng, _DIGITS, 7), "WA": lambda: _pick(rng, _DIGITS, 9)}[state]()
    return licence, card


def _medicare_number(rng: random.Random) -> str:
    head = "".join(map(str, [rng.randint(2, 6)] + [rng.randint(0, 9) for _ in range(7)]))
    return head + medicare_check_digit(head) + str(rng.randint(1, 9))


def random_person(rng: random.Random) -> dict:
    given = rng.choice(_GIVEN).split()
    middle = rng.choice(_GIVEN).split()[0] if len(given) == 1 and rng.random() < 0.4 else None
    if len(given) > 1:
        given, middle = given[:1], " ".join(given[1:])
    surname = rng.choice(_SURNAMES)
    birth = dt.date(rng.randint(1940, 2006), rng.randint(1, 12), rng.randint(1, 28))
    return {"first_name": given[0].title(), "middle_name": middle.title() if middle else None,
            "last_name": surname.title(), "birth_date": birth.isoformat()}


def _expiry(rng: random.Random) -> dt.date:
    return dt.date.today() + dt.timedelta(days=rng.randint(60, 3600))


def random_fields(rng: random.Random, kind: str, state: str | None = None) -> dict:
    """What a card of `kind` prints, in the ID type's data shape (`id_data`), plus `expiry_date`."""
    person = random_person(rng)
    if kind == "licence":
        state = state or rng.choice(STATES)
        licence, card = _numbers(rng, state)
        return {**person, "state": state, "licence_number": licence, "card_number": card,
                "expiry_date": _expiry(rng).isoformat()}
    if kind == "nz_licence":
        return {**person, "licence_number": _pick(rng, _LETTERS, 2) + _pick(rng, _DIGITS, 6),
                "version_number": _pick(rng, _DIGITS, 3), "expiry_date": _expiry(rng).isoformat()}
    if kind == "medicare":
        card_type = rng.choice(["green", "green", "green", "blue", "yellow"])
        expiry = _expiry(rng)
        person["middle_name"] = person["middle_name"][0] if person["middle_name"] else None
        return {**{k: v for k, v in person.items() if k != "birth_date"}, "card_number": _medicare_number(rng),
                "individual_reference_number": str(rng.randint(1, 3)), "card_type": card_type,
                "card_expiry": expiry.strftime("%Y-%m") if card_type == "green" else expiry.isoformat()}
    raise ValueError(f"unknown card kind {kind!r}")


def _date_text(iso: str, fmt: str, upper: bool) -> str:
    text = dt.date.fromisoformat(iso).strftime(fmt)
    return text.upper() if upper else text


def _name_lines(f: dict, style: str) -> list[str]:
    given = " ".join(x for x in (f["first_name"], f.get("middle_name")) if x)
    surname = f["last_name"].upper()
    if style == "given_SURNAME":
        return [f"{given} {surname}"]
    if style == "ALL":
        return [f"{given.upper()} {surname}"]
    if style == "SURNAME/Given":
        return [surname, given]
    return [f"{surname}, {given}"]          # "SURNAME, Given"


def _canvas(rng: random.Random, tint: tuple[int, int, int]) -> tuple[Image.Image, ImageDraw.ImageDraw, int, int]:
    w, h = CARD_SIZE                        # ID-1 at 10 px a millimetre, as the reader straightens it
    base = np.ones((h, w, 3), np.float32) * np.array(tint, np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    for _ in range(2):                      # faint guilloche waves
        f1, f2, ph = rng.uniform(0.01, 0.03), rng.uniform(0.005, 0.02), rng.uniform(0, 6.28)
        wave = np.sin(xx * f1 + np.sin(yy * f2 + ph) * 3.0)
        base -= (wave > 0.97)[..., None] * np.array([18, 14, 10], np.float32)
    img = Image.fromarray(base.clip(0, 255).astype(np.uint8))
    return img, ImageDraw.Draw(img), w, h


def _label_value(d: ImageDraw.ImageDraw, x: int, y: int, label: str, value: str, *, beside: bool, small, big,
                 ink, label_ink) -> int:
    """Draws a label and its value (below it, or to its right); returns the y of the next row."""
    if beside:
        d.text((x, y + 4), label, font=small, fill=label_ink)
        lw = d.textlength(label, font=small)
        d.text((x + lw + 14, y), value, font=big, fill=ink)
        return y + big.size + 14
    d.text((x, y), label, font=small, fill=label_ink)
    d.text((x, y + small.size + 3), value, font=big, fill=ink)
    return y + small.size + big.size + 14


def render_licence(f: dict, rng: random.Random, face: bytes | None = None) -> np.ndarray:
    style = STYLES[f["state"]]
    img, d, w, h = _canvas(rng, style.tint)
    ink, label_ink, head_ink = (20, 22, 30), (70, 70, 90), (30, 40, 110)
    j = lambda n: rng.randint(-n, n)  # noqa: E731 - position jitter
    title, sub = _font(SANS_BOLD, 30 + j(3)), _font(SANS_BOLD, 22 + j(2))
    d.rectangle([0, 0, w, 70 + j(6)], fill=tuple(max(0, c - 40) for c in style.tint))
    d.text((22 + j(6), 10 + j(3)), style.header[0], font=title if len(style.header[0]) < 20 else sub, fill=head_ink)
    d.text((22 + j(6), 44 + j(2)), style.header[1], font=_font(SANS_BOLD, 18), fill=head_ink)
    photo_left = rng.random() < 0.5
    pw, ph = 230 + j(15), 290 + j(15)
    px = 22 + j(6) if photo_left else w - pw - 22 + j(6)
    _paste_photo(img, face, (px, 100 + j(8), pw, ph))
    x = (px + pw + 30 + j(8)) if photo_left else 26 + j(8)
    y = 88 + j(6)
    name_font = _font(SANS_BOLD, 27 + j(2))
    for line in _name_lines(f, style.names):
        d.text((x, y), line, font=name_font, fill=ink)
        y += name_font.size + 6
    town, postcode = _TOWNS[f["state"]]
    addr = _font(SANS, 17)
    d.text((x, y + 2), f"{rng.randint(1, 199)} {rng.choice(_STREETS)}", font=addr, fill=label_ink)
    d.text((x, y + 24), f"{town} {f['state']} {postcode:04d}", font=addr, fill=label_ink)
    y += 60 + j(4)
    small, big = _font(SANS, 16 + j(1)), _font(SANS_BOLD, 23 + j(1))
    beside = rng.random() < 0.5
    order = ["licence_number", "birth_date", "expiry_date", "card_number"]
    if rng.random() < 0.5:
        order[1], order[2] = order[2], order[1]
    values = {"licence_number": f["licence_number"], "card_number": f["card_number"],
              "birth_date": _date_text(f["birth_date"], style.date, style.upper_dates),
              "expiry_date": _date_text(f["expiry_date"], style.date, style.upper_dates)}
    col2 = x + 230 + j(10)
    for i, name in enumerate(order):
        label = rng.choice(style.labels[name])
        if beside:
            y = _label_value(d, x, y, label, values[name], beside=True, small=small, big=big, ink=ink,
                             label_ink=label_ink)
        else:   # two columns of label-over-value
            cx = x if i % 2 == 0 else col2
            ny = _label_value(d, cx, y, label, values[name], beside=False, small=small, big=big, ink=ink,
                              label_ink=label_ink)
            if i % 2 == 1:
                y = ny
    d.text((x, min(h - 40, y + 6)), f"Class {rng.choice(['C', 'C', 'LR', 'MR', 'HR'])}", font=small, fill=label_ink)
    d.line([(px + 10, h - 30), (px + pw - 20, h - 45 + j(8))], fill=(40, 40, 90), width=2)   # a signature
    return cv2.cvtColor(np.asarray(img), cv2.COLOR_RGB2BGR)


def render_medicare(f: dict, rng: random.Random, *, others: int = 0) -> np.ndarray:
    img, d, w, h = _canvas(rng, MEDICARE_TINTS[f["card_type"]])
    ink = (15, 20, 25)
    j = lambda n: rng.randint(-n, n)  # noqa: E731
    d.text((40 + j(8), 30 + j(6)), "medicare", font=_font(SANS_BOLD, 44), fill=(20, 60, 40))
    if f["card_type"] != "green":
        d.text((40 + j(8), 88 + j(4)), "RECIPROCAL HEALTH CARE" if f["card_type"] == "blue" else "INTERIM CARD",
               font=_font(SANS_BOLD, 18), fill=(30, 40, 60))
    n = f["card_number"]
    d.text((40 + j(8), 150 + j(8)), f"{n[:4]} {n[4:9]} {n[9]}", font=_font(MONO_BOLD, 46 + j(3)), fill=ink)
    people = [(int(f["individual_reference_number"]),
               " ".join(x for x in (f["first_name"], f.get("middle_name"), f["last_name"]) if x).upper())]
    for i in range(others):
        p = random_person(rng)
        people.append((0, f"{p['first_name']} {p['last_name'].split()[-1]}".upper()))
    irns = iter(i for i in range(1, 10) if i != people[0][0])
    people = [(irn or next(irns), name) for irn, name in people]
    y = 240 + j(8)
    font = _font(MONO_BOLD, 26 + j(2))
    for irn, name in sorted(people):
        d.text((48 + j(4), y), f"{irn}  {name}", font=font, fill=ink)
        y += 38
    expiry = dt.date.fromisoformat(f["card_expiry"] + ("-01" if len(f["card_expiry"]) == 7 else ""))
    text = expiry.strftime("%m/%Y") if f["card_type"] == "green" else expiry.strftime("%d/%m/%Y")
    d.text((440 + j(20), h - 70 + j(6)), f"VALID TO  {text}", font=_font(MONO_BOLD, 24), fill=ink)
    return cv2.cvtColor(np.asarray(img), cv2.COLOR_RGB2BGR)


def render_nz_licence(f: dict, rng: random.Random, face: bytes | None = None) -> np.ndarray:
    img, d, w, h = _canvas(rng, (236, 232, 242))
    ink, code_ink = (20, 20, 30), (120, 40, 60)
    j = lambda n: rng.randint(-n, n)  # noqa: E731
    d.rounded_rectangle([10, 8, w - 10, 64], radius=10, fill=(70, 95, 150))
    d.text((24 + j(6), 18 + j(3)), "NEW ZEALAND DRIVER LICENCE", font=_font(SANS_BOLD, 28), fill=(240, 240, 250))
    pw, ph = 220 + j(10), 280 + j(10)
    _paste_photo(img, face, (22 + j(5), 90 + j(6), pw, ph))
    x, y = 22 + pw + 34 + j(8), 84 + j(6)
    fmt = rng.choice(["%d/%m/%Y", "%d-%m-%Y"])
    given = " ".join(v for v in (f["first_name"], f.get("middle_name")) if v).upper()
    rows = [("1.", f["last_name"].upper()), ("2.", given), ("3.", dt.date.fromisoformat(f["birth_date"]).strftime(fmt)),
            ("4a.", (dt.date.fromisoformat(f["expiry_date"]) - dt.timedelta(days=3652)).strftime(fmt)),
            ("4b.", dt.date.fromisoformat(f["expiry_date"]).strftime(fmt)), ("4c.", "NZ TRANSPORT AGENCY"),
            ("5a.", f["licence_number"]), ("5b.", f["version_number"])]
    code, value = _font(SANS_BOLD, 17), _font(SANS_BOLD, 24 + j(1))
    for c, v in rows:
        d.text((x, y + 4), c, font=code, fill=code_ink)
        d.text((x + 44, y), v, font=value, fill=ink)
        y += value.size + 12 + j(2)
    d.text((x, y + 4), "9.", font=code, fill=code_ink)
    d.text((x + 44, y), "Class 1", font=value, fill=ink)
    return cv2.cvtColor(np.asarray(img), cv2.COLOR_RGB2BGR)


def make_card(rng: random.Random, kind: str = "licence", *, state: str | None = None, face: bytes | None = None,
              fields: dict | None = None, others: int | None = None, **photo) -> SyntheticCard:
    """A photographed synthetic card of `kind` (random fields unless given); `photo` takes `documents.photograph`'s
    keyword arguments (rotation, perspective, blur, noise, lighting, jpeg_quality, margin)."""
    fields = dict(fields or random_fields(rng, kind, state))
    if kind == "licence":
        flat = render_licence(fields, rng, face)
    elif kind == "medicare":
        others = rng.randint(0, 3) if others is None else others
        flat = render_medicare(fields, rng, others=max(others, int(fields["individual_reference_number"]) - 1))
    elif kind == "nz_licence":
        flat = render_nz_licence(fields, rng, face)
    else:
        raise ValueError(f"unknown card kind {kind!r}")
    photo.setdefault("margin", 0.15)
    return SyntheticCard(photograph(flat, rng, **photo), kind, fields, flat)
