"""Reading MRZs from generated passport photos (OCR-B from Debian's fonts-ocr-b, valid MRZ, degraded capture)."""
import random

from app.vision import documents, mrz
from app.vision.images import encode_jpeg


def test_generated_passports_read_exactly(obama):
    rng = random.Random(20)
    for _ in range(4):
        doc = documents.make_document(rng, face=obama, **documents.degraded(rng))
        result = mrz.read_mrz(doc.image)
        assert result is not None
        assert result.lines == doc.mrz_lines
        assert result.valid and result.failed_checks == []
        ident = doc.fields
        assert result.document_number == ident["number"]
        assert result.birth_date == ident["birth_date"] and result.expiry_date == ident["expiry_date"]
        assert result.surname == ident["surname"] and result.given_names == ident["given_names"]
        assert result.format == "TD3" and result.document_type == "P"
        assert 0 < result.confidence <= 1 and result.duration_ms > 0


def test_a_visa_reads_as_mrv_a():
    rng = random.Random(7)
    doc = documents.make_document(rng, kind="MRVA", rotation=3, blur=0.8, noise=4)
    result = mrz.read_mrz(doc.image)
    assert result is not None and result.format == "MRVA" and result.valid
    assert result.lines == doc.mrz_lines


def test_a_corrupted_check_digit_is_reported_invalid():
    rng = random.Random(3)
    ident = documents.random_identity(rng)
    good = documents.make_document(rng, ident=ident, rotation=2, noise=3).mrz_lines
    bad = documents.corrupt_check_digit(good)
    doc = documents.make_document(rng, ident=ident, mrz_lines=bad, rotation=2, noise=3)
    result = mrz.read_mrz(doc.image)
    assert result is not None
    assert not result.valid
    assert "birth_date" in result.failed_checks


def test_a_picture_without_mrz_gives_none(obama):
    assert mrz.read_mrz(obama) is None
    page = documents.render_page(documents.random_identity(random.Random(1)))[0]
    page[-200:, :] = 235          # a data page with its MRZ cut off
    assert mrz.read_mrz(encode_jpeg(page)) is None


def test_not_an_image_gives_none():
    assert mrz.read_mrz(b"%PDF-1.4 not an image") is None
