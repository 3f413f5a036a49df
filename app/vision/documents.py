"""Synthetic identity documents for the tests and the benchmark: a passport data page (ICAO TD3, 125 x 88 mm) or a
visa (MRV-A) with a face photo, printed fields and the machine-readable zone in the OCR-B font (Debian's
fonts-ocr-b, public domain), photographed as a phone would: on a table, turned, in uneven light, blurred, noisy,
JPEG-compressed. Nothing here is read from disk but the font and the face photo given."""
from __future__ import annotations

import datetime as dt
import io
import random
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from app.vision import icao

OCRB_PATHS = ("/usr/share/fonts/opentype/ocr-b/OCRB.otf", "/usr/share/fonts/truetype/ocr-b/OCRB.ttf")
TEXT_FONT_PATHS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                   "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
PX_PER_MM = 8.0
PAGE_MM = (125.0, 88.0)

_SURNAMES = ["SMITH", "NGUYEN", "WILLIAMS", "BROWN", "OCONNOR", "MULLER", "GARCIA", "ROSSI", "KOWALSKI", "TANAKA",
             "VAN DER BERG", "PATEL", "SILVA", "JOHANSSON", "MARTIN", "DUBOIS", "KIM", "SINGH", "WILSON", "TAYLOR",
             "ANDERSON", "THOMPSON", "LEE", "WHITE", "HARRIS", "CLARKE", "MORRISON", "MACDONALD", "SCHMIDT", "COHEN",
             "ABDULLAH", "HERNANDEZ", "LOPEZ", "PAPADOPOULOS", "NOWAK", "JENSEN", "OKAFOR", "MENSAH", "YILMAZ", "ALI"]
_GIVEN = ["JAMES", "OLIVIA", "WILLIAM", "CHARLOTTE", "JACK", "AMELIA", "NOAH", "ISLA", "THOMAS", "MIA", "LIAM",
          "GRACE", "HENRY", "CHLOE", "LUCAS", "ZOE", "OSCAR", "RUBY", "LEO", "EMILY", "ANNA MARIA", "JEAN PAUL",
          "MOHAMMED", "FATIMA", "WEI", "AIKO", "RAHUL", "PRIYA", "SEAN", "SIOBHAN", "MATEO", "SOFIA", "ERIK",
          "INGRID", "DMITRI", "OLGA", "KWAME", "ADA", "HUGO", "ELENA"]
_COUNTRIES = ["AUS", "NZL", "GBR", "USA", "CAN", "DEU", "FRA", "ITA", "IND", "CHN", "JPN", "IRL", "NLD", "SWE",
              "POL", "GRC", "NGA", "GHA", "TUR", "UTO"]
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


@dataclass
class SyntheticDocument:
    image: bytes                 # JPEG
    kind: str                    # TD3 | MRVA
    mrz_lines: list[str]
    fields: dict = field(default_factory=dict)


@lru_cache(maxsize=None)
def _font(paths: tuple[str, ...], size: int) -> ImageFont.FreeTypeFont:
    for path in paths:
        if Path(path).exists():
            return ImageFont.truetype(path, size)
    if paths is OCRB_PATHS:
        raise RuntimeError("the OCR-B font is missing: install Debian's fonts-ocr-b (make system-deps)")
    return ImageFont.load_default(size)


def random_identity(rng: random.Random, kind: str = "TD3") -> dict:
    """Fields of a random document holder and document, as `icao.compose` takes them."""
    today = dt.date.today()
    birth = dt.date(rng.randint(1940, 2007), rng.randint(1, 12), rng.randint(1, 28))
    expiry = today + dt.timedelta(days=rng.randint(30, 3650))
    country = rng.choice(_COUNTRIES)
    number_len = rng.choice([8, 9, 9, 9])
    number = "".join(rng.choice(_ALNUM if i < 2 else "0123456789") for i in range(number_len))
    optional = "".join(rng.choice(_ALNUM) for _ in range(rng.choice([0, 0, 9, 14])))
    given = rng.choice(_GIVEN)
    if rng.random() < 0.3:
        given += " " + rng.choice(_GIVEN).split()[0]
    return {
        "kind": kind, "country": country, "nationality": country if rng.random() < 0.9 else rng.choice(_COUNTRIES),
        "surname": rng.choice(_SURNAMES), "given_names": given, "number": number,
        "birth_date": birth.isoformat(), "sex": rng.choice("MF"), "expiry_date": expiry.isoformat(),
        "optional": optional,
    }


def _background(rng: random.Random, w: int, h: int) -> np.ndarray:
    """A pale security print: a tint and a few guilloche-like waves (BGR)."""
    base = np.array([rng.randint(215, 245), rng.randint(215, 240), rng.randint(200, 235)], np.float32)
    img = np.ones((h, w, 3), np.float32) * base
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    for _ in range(3):
        f1, f2, ph = rng.uniform(0.01, 0.04), rng.uniform(0.005, 0.02), rng.uniform(0, 6.28)
        wave = np.sin(xx * f1 + np.sin(yy * f2 + ph) * 3.0)
        img -= (wave > 0.96)[..., None] * np.array([20, 10, 25], np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def _paste_photo(page: Image.Image, face: bytes | None, box: tuple[int, int, int, int]) -> None:
    x, y, w, h = box
    if face is None:
        d = ImageDraw.Draw(page)
        d.rectangle([x, y, x + w, y + h], fill=(200, 205, 210))
        d.ellipse([x + w * 0.3, y + h * 0.18, x + w * 0.7, y + h * 0.58], fill=(150, 150, 155))
        d.rectangle([x + w * 0.15, y + h * 0.62, x + w * 0.85, y + h], fill=(150, 150, 155))
        return
    photo = Image.open(io.BytesIO(face)).convert("RGB")
    # cover the box, keeping the upper-middle of the photo (where a portrait's face is)
    scale = max(w / photo.width, h / photo.height)
    photo = photo.resize((max(w, round(photo.width * scale)), max(h, round(photo.height * scale))), Image.LANCZOS)
    left = (photo.width - w) // 2
    top = max(0, min(photo.height - h, int((photo.height - h) * 0.3)))
    page.paste(photo.crop((left, top, left + w, top + h)), (x, y))


def render_page(ident: dict, *, face: bytes | None = None, rng: random.Random | None = None,
                mrz_lines: list[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """The flat data page (BGR array, 1000 x 704 px at 8 px/mm) and its MRZ lines."""
    rng = rng or random.Random(0)
    kind = ident.get("kind", "TD3")
    lines = mrz_lines or icao.compose(kind, **{k: v for k, v in ident.items() if k != "kind"})
    mm = PX_PER_MM
    w, h = int(PAGE_MM[0] * mm), int(PAGE_MM[1] * mm)
    page = Image.fromarray(cv2.cvtColor(_background(rng, w, h), cv2.COLOR_BGR2RGB))
    d = ImageDraw.Draw(page)
    small, value, title = (_font(TEXT_FONT_PATHS, 15), _font(TEXT_FONT_PATHS[1:], 21),
                           _font(TEXT_FONT_PATHS[1:], 28))
    ink = (30, 35, 60)
    d.text((int(8 * mm), int(4 * mm)), "PASSPORT" if kind == "TD3" else "VISA", font=title, fill=(60, 40, 90))
    d.text((int(60 * mm), int(5 * mm)), f"{ident['country']}  REPUBLIC OF UTOPIA", font=small, fill=(60, 40, 90))
    _paste_photo(page, face, (int(6 * mm), int(16 * mm), int(35 * mm), int(45 * mm)))
    rows = [
        ("Type / Type", "P" if kind == "TD3" else "V", "Code / Code", ident["country"]),
        ("Passport No. / No. du passeport", ident["number"], None, None),
        ("Surname / Nom", ident["surname"], None, None),
        ("Given names / Prénoms", ident["given_names"], None, None),
        ("Nationality / Nationalité", ident["nationality"], "Sex / Sexe", ident["sex"]),
        ("Date of birth / Date de naissance", dt.date.fromisoformat(ident["birth_date"]).strftime("%d %b %Y").upper(),
         None, None),
        ("Date of expiry / Date d'expiration",
         dt.date.fromisoformat(ident["expiry_date"]).strftime("%d %b %Y").upper(), None, None),
    ]
    x0, y = int(46 * mm), int(15 * mm)
    for label, val, label2, val2 in rows:
        d.text((x0, y), label, font=small, fill=(90, 90, 110))
        d.text((x0, y + 15), val, font=value, fill=ink)
        if label2:
            d.text((x0 + int(40 * mm), y), label2, font=small, fill=(90, 90, 110))
            d.text((x0 + int(40 * mm), y + 15), val2, font=value, fill=ink)
        y += int(6.4 * mm)
    # The MRZ: OCR-B, 10 characters per inch (2.54 mm pitch), lines 4.2 mm apart, 6 mm from the left edge
    ocrb = _font(OCRB_PATHS, int(3.3 * mm))
    pitch = 2.54 * mm
    top = h - int((7.0 + 4.6 * len(lines)) * mm)
    for row, line in enumerate(lines):
        yline = top + int(row * 4.6 * mm)
        for i, ch in enumerate(line):
            d.text((int(6 * mm + i * pitch), yline), ch, font=ocrb, fill=(15, 15, 20))
    return cv2.cvtColor(np.asarray(page), cv2.COLOR_RGB2BGR), lines


def photograph(page: np.ndarray, rng: random.Random, *, rotation: float = 0.0, perspective: float = 0.0,
               blur: float = 0.0, noise: float = 0.0, lighting: float = 0.0, jpeg_quality: int = 88,
               margin: float = 0.12) -> bytes:
    """The page on a table, as a phone sees it: turned by `rotation` degrees, its corners moved by up to
    `perspective` x its width, a light gradient of strength `lighting` (0..1), Gaussian blur of sigma `blur`,
    Gaussian noise of sigma `noise` (grey levels); JPEG bytes."""
    h, w = page.shape[:2]
    mw, mh = int(w * margin), int(h * margin)
    cw, ch = w + 2 * mw, h + 2 * mh
    table = np.array([rng.randint(40, 120), rng.randint(40, 110), rng.randint(30, 100)], np.float32)
    canvas = (np.ones((ch, cw, 3), np.float32) * table + np.random.default_rng(rng.randint(0, 2**31))
              .normal(0, 6, (ch, cw, 3))).clip(0, 255).astype(np.uint8)
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = src + np.float32([mw, mh])
    if perspective:
        dst = dst + np.float32([[rng.uniform(-1, 1) * perspective * w, rng.uniform(-1, 1) * perspective * w]
                                for _ in range(4)])
    if rotation:
        centre = np.float32([cw / 2, ch / 2])
        a = np.deg2rad(rotation)
        rot = np.float32([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        dst = (dst - centre) @ rot.T + centre
    matrix = cv2.getPerspectiveTransform(src, dst.astype(np.float32))
    warped = cv2.warpPerspective(page, matrix, (cw, ch), flags=cv2.INTER_LINEAR)
    mask = cv2.warpPerspective(np.full((h, w), 255, np.uint8), matrix, (cw, ch))
    out = np.where(mask[..., None] > 127, warped, canvas).astype(np.float32)
    if lighting:
        yy, xx = np.mgrid[0:ch, 0:cw].astype(np.float32)
        angle = rng.uniform(0, 2 * np.pi)
        grad = (np.cos(angle) * xx / cw + np.sin(angle) * yy / ch)
        grad = (grad - grad.min()) / max(1e-6, float(grad.max() - grad.min()))
        out *= (1.0 - lighting * 0.55 + lighting * 0.55 * grad)[..., None]
    if blur:
        out = cv2.GaussianBlur(out, (0, 0), blur)
    if noise:
        out += np.random.default_rng(rng.randint(0, 2**31)).normal(0, noise, out.shape)
    ok, buf = cv2.imencode(".jpg", out.clip(0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, jpeg_quality])
    assert ok
    return buf.tobytes()


def make_document(rng: random.Random, *, kind: str = "TD3", face: bytes | None = None, ident: dict | None = None,
                  mrz_lines: list[str] | None = None, **photo) -> SyntheticDocument:
    """A photographed synthetic document with a valid MRZ (unless `mrz_lines` are given); `photo` takes the
    keyword arguments of `photograph` (rotation, perspective, blur, noise, lighting, jpeg_quality)."""
    ident = ident or random_identity(rng, kind)
    page, lines = render_page(ident, face=face, rng=rng, mrz_lines=mrz_lines)
    return SyntheticDocument(photograph(page, rng, **photo), kind, lines, ident)


def degraded(rng: random.Random) -> dict:
    """Random capture conditions of the benchmark: noise, blur, rotation, a little perspective, uneven light."""
    return {"rotation": rng.uniform(-8, 8), "perspective": rng.uniform(0, 0.03), "blur": rng.uniform(0.3, 1.6),
            "noise": rng.uniform(2, 12), "lighting": rng.uniform(0, 0.8), "jpeg_quality": rng.randint(60, 92)}


def corrupt_check_digit(lines: list[str]) -> list[str]:
    """The same MRZ with the birth-date check digit of a TD3/MRV line 2 changed."""
    line2 = lines[1]
    wrong = str((int(line2[19]) + 3) % 10)
    return [lines[0], line2[:19] + wrong + line2[20:]] + lines[2:]
