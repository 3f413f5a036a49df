"""Decoding the images given as bytes, with the limits an upload needs (size, pixel count), and small helpers."""
from __future__ import annotations

import cv2
import numpy as np

MAX_BYTES = 10 * 1024 * 1024          # what the hosted flow accepts
MAX_PIXELS = 40_000_000               # decompression-bomb limit (a 40 MP phone photo is the largest plausible)


class ImageError(ValueError):
    """The bytes are not a JPEG or PNG image within the limits; `code` is machine-readable."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def sniff(data: bytes) -> str | None:
    """'jpeg' or 'png' by content (magic bytes), else None."""
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    return None


def _png_size(data: bytes) -> tuple[int, int] | None:
    if len(data) >= 24 and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        i += 2 + int.from_bytes(data[i + 2:i + 4], "big")
    return None


def decode(data: bytes, *, grey: bool = False) -> np.ndarray:
    """A BGR (or grey) array from JPEG/PNG bytes; raises ImageError (UNSUPPORTED_FORMAT, TOO_LARGE, CORRUPT)."""
    kind = sniff(data)
    if kind is None:
        raise ImageError("UNSUPPORTED_FORMAT", "only JPEG and PNG images are accepted")
    if len(data) > MAX_BYTES:
        raise ImageError("TOO_LARGE", f"images are limited to {MAX_BYTES // (1024 * 1024)} MB")
    size = _png_size(data) if kind == "png" else _jpeg_size(data)
    if size is None:
        raise ImageError("CORRUPT", "the image header cannot be read")
    if size[0] * size[1] > MAX_PIXELS:
        raise ImageError("TOO_LARGE", "the image has too many pixels")
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE if grey else cv2.IMREAD_COLOR)
    if img is None:
        raise ImageError("CORRUPT", "the image cannot be decoded")
    return img


def encode_jpeg(img: np.ndarray, quality: int = 90) -> bytes:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ImageError("CORRUPT", "cannot encode")
    return buf.tobytes()


def encode_png(img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", img)
    if not ok:
        raise ImageError("CORRUPT", "cannot encode")
    return buf.tobytes()


def fit(img: np.ndarray, max_side: int) -> tuple[np.ndarray, float]:
    """The image scaled down so its longer side is at most `max_side`, and the scale applied."""
    h, w = img.shape[:2]
    scale = min(1.0, max_side / max(h, w))
    if scale < 1.0:
        img = cv2.resize(img, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    return img, scale


def sharpness(grey: np.ndarray) -> float:
    """Variance of the Laplacian: low for a blurred image."""
    return float(cv2.Laplacian(grey, cv2.CV_64F).var())


def dhash(grey: np.ndarray, size: int = 16) -> int:
    """A difference hash of size*size bits: near-equal for near-equal pictures (re-encoded, rescaled)."""
    small = cv2.resize(grey, (size + 1, size), interpolation=cv2.INTER_AREA).astype(np.int16)
    bits = (small[:, 1:] > small[:, :-1]).flatten()
    return int("".join("1" if b else "0" for b in bits), 2)
