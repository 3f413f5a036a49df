"""Images for the vision tests: face photos shipped in tests/vision/images (from the face_recognition 1.3.0 sdist,
MIT; see docs/vision.md), documents generated on the fly. No database, no network."""
from __future__ import annotations

from pathlib import Path

import pytest

IMAGES = Path(__file__).parent / "images"


def image(name: str) -> bytes:
    return (IMAGES / name).read_bytes()


@pytest.fixture(scope="session")
def obama() -> bytes:
    return image("obama.jpg")


@pytest.fixture(scope="session")
def obama2() -> bytes:
    return image("obama2.jpg")


@pytest.fixture(scope="session")
def biden() -> bytes:
    return image("biden.jpg")
