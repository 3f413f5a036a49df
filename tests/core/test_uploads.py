"""Cleaning uploaded images (app/core/uploads.py): formats by content, size and pixel limits checked before
decoding, EXIF orientation applied, and no metadata left."""
from __future__ import annotations

import hashlib
import io
import struct
import time
import zlib

import pytest
from PIL import ExifTags, Image, ImageCms, PngImagePlugin

from app.core.uploads import CleanImage, ImageRejected, clean_image, sniff


def jpeg(im: Image.Image, **save) -> bytes:
    out = io.BytesIO()
    im.save(out, "JPEG", quality=95, **save)
    return out.getvalue()


def png(im: Image.Image, **save) -> bytes:
    out = io.BytesIO()
    im.save(out, "PNG", **save)
    return out.getvalue()


def red_blue(width: int = 200, height: int = 100) -> Image.Image:
    """Left half red, right half blue: which way it was turned shows."""
    im = Image.new("RGB", (width, height), (255, 0, 0))
    im.paste((0, 0, 255), (width // 2, 0, width, height))
    return im


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_chunks(data: bytes) -> list[bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    kinds, i = [], 8
    while i < len(data):
        (length,) = struct.unpack(">I", data[i:i + 4])
        kinds.append(data[i + 4:i + 8])
        i += 12 + length
    return kinds


def jpeg_markers(data: bytes) -> list[int]:
    """The markers of the segments before the scan (APPn, COM, DQT, SOF, ...)."""
    markers, i = [], 2
    while i + 4 <= len(data) and data[i] == 0xFF:
        marker = data[i + 1]
        markers.append(marker)
        if marker == 0xDA:  # start of scan: entropy-coded data follows
            break
        i += 2 + int.from_bytes(data[i + 2:i + 4], "big")
    return markers


def bomb_png(width: int, height: int, block_bytes: int = 50_000_000) -> bytes:
    """A valid greyscale PNG of width x height black pixels, a few MB at most (deflate of zeros): one compressed
    row block, repeated (a full flush makes each block independent of what came before)."""
    limit = max(1, block_bytes // (width + 1))
    rows = max(r for r in range(1, min(height, limit) + 1) if height % r == 0)
    raw = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = raw.compress(bytes((width + 1) * rows)) + raw.flush(zlib.Z_FULL_FLUSH)
    tail = raw.flush()
    adler, zero_rows = 1, bytes((width + 1) * rows)
    for _ in range(height // rows):
        adler = zlib.adler32(zero_rows, adler)
    idat = b"\x78\xda" + block * (height // rows) + tail + struct.pack(">I", adler)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def test_the_bomb_helper_makes_valid_pngs():
    small = Image.open(io.BytesIO(bomb_png(300, 200, block_bytes=3010)))  # 20 repeated blocks of 10 rows
    small.load()
    assert small.size == (300, 200) and small.mode == "L" and small.getextrema() == (0, 0)
    assert clean_image(bomb_png(300, 200, block_bytes=3010)).width == 300


def test_sniff():
    assert sniff(jpeg(red_blue())) == "JPEG"
    assert sniff(png(red_blue())) == "PNG"
    assert sniff(b"GIF89a") is None and sniff(b"") is None


def test_jpeg_loses_its_exif_and_is_turned_upright():
    exif = Image.Exif()
    exif[ExifTags.Base.Make] = "SpyCam Industries"
    exif[ExifTags.Base.Model] = "Model X1"
    exif[ExifTags.Base.Orientation] = 6  # shown turned 90 degrees clockwise
    gps = exif.get_ifd(ExifTags.IFD.GPSInfo)
    gps[ExifTags.GPS.GPSLatitudeRef] = "S"
    gps[ExifTags.GPS.GPSLatitude] = (33.0, 52.0, 10.0)
    gps[ExifTags.GPS.GPSLongitudeRef] = "E"
    gps[ExifTags.GPS.GPSLongitude] = (151.0, 12.0, 30.0)
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    data = jpeg(red_blue(), exif=exif, icc_profile=icc, comment=b"taken at 12 Secret St")
    source = Image.open(io.BytesIO(data))
    assert source.getexif().get_ifd(ExifTags.IFD.GPSInfo) and "icc_profile" in source.info  # what must go

    clean = clean_image(data)

    assert isinstance(clean, CleanImage) and clean.content_type == "image/jpeg"
    assert (clean.width, clean.height) == (100, 200)  # turned: the 200 x 100 picture stood up
    assert clean.sha256 == hashlib.sha256(clean.data).hexdigest()
    for secret in (b"SpyCam", b"Model X1", b"Exif", b"Secret St", b"ICC_PROFILE", b"http://ns.adobe.com"):
        assert secret not in clean.data
    assert not any(0xE1 <= m <= 0xEF or m == 0xFE for m in jpeg_markers(clean.data))  # no APP1..APP15, no COM
    out = Image.open(io.BytesIO(clean.data))
    assert out.size == (100, 200) and out.mode == "RGB"
    assert not out.getexif() and "icc_profile" not in out.info and "exif" not in out.info
    red, blue = out.getpixel((50, 40)), out.getpixel((50, 160))
    assert red[0] > 200 and red[2] < 50      # the left (red) half is now on top
    assert blue[2] > 200 and blue[0] < 50


@pytest.mark.parametrize("orientation, size, top_left_red", [(1, (200, 100), True), (3, (200, 100), False),
                                                             (8, (100, 200), False)])
def test_other_orientations(orientation, size, top_left_red):
    exif = Image.Exif()
    exif[ExifTags.Base.Orientation] = orientation
    out = Image.open(io.BytesIO(clean_image(jpeg(red_blue(), exif=exif)).data))
    assert out.size == size
    assert (out.getpixel((10, 10))[0] > 200) is top_left_red


def test_png_loses_its_text_chunks():
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "GPS -33.8688 151.2093")
    info.add_text("Author", "a secret author", zip=True)   # zTXt
    info.add_itxt("Description", "private note", lang="en")
    exif = Image.Exif()
    exif[ExifTags.Base.Make] = "SpyCam Industries"
    data = png(red_blue(), pnginfo=info, exif=exif, dpi=(300, 300))
    assert {b"tEXt", b"zTXt", b"iTXt", b"eXIf"} <= set(png_chunks(data))

    clean = clean_image(data)

    assert clean.content_type == "image/png" and (clean.width, clean.height) == (200, 100)
    assert png_chunks(clean.data) == [b"IHDR", b"IDAT", b"IEND"]
    for secret in (b"GPS", b"secret", b"private", b"SpyCam", b"Comment"):
        assert secret not in clean.data
    out = Image.open(io.BytesIO(clean.data))
    assert out.mode == "RGB" and out.getpixel((10, 10)) == (255, 0, 0) and out.getpixel((190, 10)) == (0, 0, 255)


@pytest.mark.parametrize("mode", ["L", "RGBA", "P", "LA", "I;16"])
def test_png_modes_become_rgb(mode):
    im = Image.new("RGBA", (40, 30), (10, 200, 10, 255))
    im.paste((0, 0, 0, 0), (0, 0, 20, 30))  # transparent left half
    source = im.convert(mode) if mode != "I;16" else Image.new("I;16", (40, 30), 40000)
    out = Image.open(io.BytesIO(clean_image(png(source)).data))
    assert out.mode == "RGB" and out.size == (40, 30)
    if mode in ("RGBA", "LA"):
        assert out.getpixel((5, 5)) == (255, 255, 255)  # transparency laid on white
    if mode == "I;16":
        assert out.getpixel((5, 5)) == (156, 156, 156)  # 40000 / 256


def test_cmyk_jpeg_becomes_rgb():
    clean = clean_image(jpeg(red_blue().convert("CMYK")))
    out = Image.open(io.BytesIO(clean.data))
    assert out.mode == "RGB" and out.getpixel((10, 10))[0] > 200


def test_large_images_are_scaled_down():
    clean = clean_image(png(red_blue(4000, 1000)))
    assert (clean.width, clean.height) == (3000, 750)
    clean = clean_image(jpeg(red_blue(1000, 4000)), max_side=800)
    assert (clean.width, clean.height) == (200, 800)
    assert Image.open(io.BytesIO(clean.data)).size == (200, 800)
    clean = clean_image(jpeg(red_blue(7000, 5000)))  # decoded at half scale (JPEG draft), then fitted
    assert (clean.width, clean.height) == (3000, 2143)


def gif() -> bytes:
    out = io.BytesIO()
    red_blue().save(out, "GIF")
    return out.getvalue()


@pytest.mark.parametrize("data", [
    pytest.param(gif(), id="gif"),
    pytest.param(b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer <<>>\n%%EOF", id="pdf"),
    pytest.param(b"this is selfie.jpg, honest\n", id="text-named-jpg"),
    pytest.param(b"<svg xmlns='http://www.w3.org/2000/svg'/>", id="svg"),
    pytest.param(b"RIFF\x00\x00\x00\x00WEBPVP8 ", id="webp"),
    pytest.param(b"BM" + bytes(60), id="bmp"),
    pytest.param(b"\xff\xd8", id="two-bytes"),
    pytest.param(b"", id="empty"),
])
def test_not_an_image(data):
    with pytest.raises(ImageRejected) as err:
        clean_image(data)
    assert err.value.code == "not_an_image"
    assert "JPEG and PNG" in str(err.value)


def test_too_large():
    data = jpeg(red_blue())
    too_big = data + bytes(10 * 1024 * 1024 + 1 - len(data))
    assert len(too_big) == 10 * 1024 * 1024 + 1
    with pytest.raises(ImageRejected) as err:
        clean_image(too_big)
    assert err.value.code == "too_large" and "10 MB" in err.value.message
    with pytest.raises(ImageRejected) as err:
        clean_image(data, max_bytes=len(data) - 1)
    assert err.value.code == "too_large"
    assert clean_image(data, max_bytes=len(data)).width == 200


def test_a_png_declaring_too_many_pixels_is_refused_without_decoding():
    data = bomb_png(50_000, 50_000)  # 2.5 gigapixels of black, as a valid PNG
    assert len(data) < 4 * 1024 * 1024
    before = Image.MAX_IMAGE_PIXELS
    started = time.perf_counter()
    with pytest.raises(ImageRejected) as err:
        clean_image(data)
    assert time.perf_counter() - started < 1.0
    assert err.value.code == "too_many_pixels"
    assert Image.MAX_IMAGE_PIXELS == before  # Pillow's process-wide guard left alone


def test_pixel_limit_below_pillows_own(recwarn):
    data = bomb_png(8000, 8000)  # 64 MP: under Pillow's limit (89 MP), over ours (40 MP)
    with pytest.raises(ImageRejected) as err:
        clean_image(data)
    assert err.value.code == "too_many_pixels"
    with pytest.raises(ImageRejected) as err:
        clean_image(png(red_blue(200, 100)), max_pixels=19_999)
    assert err.value.code == "too_many_pixels"
    assert clean_image(png(red_blue(200, 100)), max_pixels=20_000).width == 200
    assert not [w for w in recwarn if issubclass(w.category, Image.DecompressionBombWarning)]


def test_a_jpeg_declaring_too_many_pixels_is_refused():
    data = bytearray(jpeg(red_blue(16, 16)))
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", 60_000, 60_000)  # height, width
    with pytest.raises(ImageRejected) as err:
        clean_image(bytes(data))
    assert err.value.code == "too_many_pixels"


def test_pillows_bomb_warning_counts_as_too_many_pixels():
    """When warnings are errors, Pillow's warning (over 89 MP) is raised: still too_many_pixels."""
    import warnings
    data = bomb_png(10_000, 10_000)  # 100 MP: Pillow warns (over 89 MP, under twice that)
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        with pytest.raises(ImageRejected) as err:
            clean_image(data, max_pixels=200_000_000)
    assert err.value.code == "too_many_pixels"


@pytest.mark.parametrize("cut", [0.5, 0.9])
@pytest.mark.parametrize("weasyprint_loaded", [False, True])
def test_truncated_images_are_unreadable(cut, weasyprint_loaded, monkeypatch):
    from PIL import ImageFile
    if weasyprint_loaded:  # WeasyPrint's import sets this for the whole process
        monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)
    for data in (jpeg(red_blue(400, 300)), png(red_blue(400, 300))):
        with pytest.raises(ImageRejected) as err:
            clean_image(data[:int(len(data) * cut)])
        assert err.value.code == "unreadable"


def test_garbage_after_the_magic_is_unreadable():
    for data in (b"\xff\xd8\xff" + bytes(range(256)) * 4, b"\x89PNG\r\n\x1a\n" + b"\x00" * 100):
        with pytest.raises(ImageRejected) as err:
            clean_image(data)
        assert err.value.code == "unreadable"
