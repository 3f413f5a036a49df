"""Cleaning an uploaded image before anything keeps it: only JPEG and PNG (by content, never by name or declared
type), at most `max_bytes`, at most `max_pixels` as declared by the header (checked before a single pixel is
decoded: a small file can declare a huge picture), turned upright per its EXIF orientation, scaled down to
`max_side`, and re-encoded from its pixels alone, so that no metadata survives (EXIF with its GPS position and
camera, ICC profiles, XMP, PNG text chunks, comments, thumbnails).

Pillow's own decompression-bomb guard (the process-wide `Image.MAX_IMAGE_PIXELS`) is left as it is: our limit
is checked on the header's size right after `Image.open`, which reads the header only, and Pillow's error (or its
warning, when warnings are turned into errors) counts as too many pixels as well."""
from __future__ import annotations

import hashlib
import io
import struct
import threading
import zlib
from dataclasses import dataclass

from PIL import Image, ImageFile, ImageOps, UnidentifiedImageError

MAX_BYTES = 10 * 1024 * 1024
MAX_PIXELS = 40_000_000   # a 40 MP phone photo is the largest plausible
MAX_SIDE = 3000           # what is kept: enough to read a document, far less to store
JPEG_QUALITY = 92

_JPEG_MAGIC = b"\xff\xd8\xff"
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class ImageRejected(ValueError):
    """An upload that is not an acceptable image. `code` is machine-readable: not_an_image, too_large,
    too_many_pixels, unreadable; the message says it to a person."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class CleanImage:
    data: bytes           # the re-encoded image, without metadata
    content_type: str     # image/jpeg or image/png (the input's format)
    width: int
    height: int
    sha256: str           # hex digest of `data`


def sniff(data: bytes) -> str | None:
    """'JPEG' or 'PNG' from the magic bytes, else None."""
    if data[:3] == _JPEG_MAGIC:
        return "JPEG"
    if data[:8] == _PNG_MAGIC:
        return "PNG"
    return None


def _rgb(im: Image.Image) -> Image.Image:
    """The image as 8-bit RGB; transparency is laid on white (a document photo has none that matters)."""
    if im.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I"):
        im = im.convert("I").point(lambda v: v * (1 / 256)).convert("L")   # 16-bit grey to 8-bit
    elif im.mode == "F":
        im = im.convert("L")
    if im.mode == "P":
        im = im.convert("RGBA")
    if im.mode in ("RGBA", "LA", "PA") or "transparency" in im.info:
        im = im.convert("RGBA")
        background = Image.new("RGBA", im.size, (255, 255, 255, 255))
        im = Image.alpha_composite(background, im)
    return im.convert("RGB") if im.mode != "RGB" else im


_strict = threading.Lock()


def _load_strictly(im: Image.Image) -> None:
    """Decode, refusing a truncated file. WeasyPrint sets Pillow's process-wide LOAD_TRUNCATED_IMAGES when it is
    imported (the PDF reports), which would make a cut-off upload decode silently with grey rows: it is switched
    off for this decode (under a lock, restored after)."""
    with _strict:
        before = ImageFile.LOAD_TRUNCATED_IMAGES
        ImageFile.LOAD_TRUNCATED_IMAGES = False
        try:
            im.load()
        finally:
            ImageFile.LOAD_TRUNCATED_IMAGES = before


def clean_image(data: bytes, *, max_bytes: int = MAX_BYTES, max_pixels: int = MAX_PIXELS,
                max_side: int = MAX_SIDE) -> CleanImage:
    """The upload checked and re-encoded (see the module's docstring); raises ImageRejected."""
    data = bytes(data)
    if len(data) > max_bytes:
        raise ImageRejected("too_large", f"The image is larger than {max_bytes / (1024 * 1024):g} MB.")
    kind = sniff(data)
    if kind is None:
        raise ImageRejected("not_an_image", "Only JPEG and PNG photos are accepted.")
    too_many = ImageRejected("too_many_pixels", f"The image has more than {max_pixels / 1e6:g} million pixels.")
    unreadable = ImageRejected("unreadable", "The image is damaged or incomplete and cannot be read.")
    try:
        with Image.open(io.BytesIO(data), formats=[kind]) as im:   # reads the header only
            width, height = im.size
            if width <= 0 or height <= 0:
                raise unreadable
            if width * height > max_pixels:
                raise too_many
            if kind == "JPEG":
                # Decode at the smallest DCT scale still at least max_side on the shorter side (no quality lost
                # for what is kept, a quarter of the memory for a large photo).
                im.draft("RGB", (max_side, max_side))
            _load_strictly(im)
            upright = ImageOps.exif_transpose(im)
            upright.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
            pixels = _rgb(upright)
    except ImageRejected:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise too_many from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError, struct.error, zlib.error,
            IndexError, TypeError):
        raise unreadable from None
    except MemoryError:
        raise too_many from None

    # A new image from the pixels alone: nothing of the original's `info` (exif, icc_profile, text, dpi, ...)
    # can reach the encoder.
    clean = Image.frombytes("RGB", pixels.size, pixels.tobytes())
    out = io.BytesIO()
    if kind == "JPEG":
        clean.save(out, format="JPEG", quality=JPEG_QUALITY, optimize=True)
        content_type = "image/jpeg"
    else:
        clean.save(out, format="PNG", compress_level=6)
        content_type = "image/png"
    encoded = out.getvalue()
    return CleanImage(data=encoded, content_type=content_type, width=clean.width, height=clean.height,
                      sha256=hashlib.sha256(encoded).hexdigest())
