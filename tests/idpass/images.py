"""Images for the IDPass tests: real face photos shipped with the vision tests (tests/vision/images, from the
face_recognition 1.3.0 sdist, MIT), and Australian passports generated with a valid MRZ in the OCR-B font."""
from __future__ import annotations

import random
from pathlib import Path

FACES = Path(__file__).resolve().parents[1] / "vision" / "images"


def face(name: str = "obama.jpg") -> bytes:
    return (FACES / name).read_bytes()


def portrait_jpeg() -> bytes:
    return face("obama.jpg")


def passport_identity(surname: str = "WOMBATSON", given_names: str = "HARRIET", birth_date: str = "1990-02-14",
                      number: str = "PA1234567", sex: str = "F") -> dict:
    return {"kind": "TD3", "country": "AUS", "nationality": "AUS", "surname": surname, "given_names": given_names,
            "number": number, "birth_date": birth_date, "sex": sex, "expiry_date": "2031-04-02", "optional": ""}


def passport_jpeg(*, holder: bytes | None = None, seed: int = 7, **identity) -> bytes:
    """A photographed Australian passport page (a clean photo: no blur or rotation) with `holder`'s portrait."""
    from app.vision.documents import make_document
    doc = make_document(random.Random(seed), face=holder if holder is not None else face("obama2.jpg"),
                        ident=passport_identity(**identity))
    return doc.image
