"""Reading MRZs from generated passport photos (OCR-B from Debian's fonts-ocr-b, valid MRZ, degraded capture)."""
import random

import cv2
import numpy as np
import pytest

from app.vision import documents, icao, mrz, ocrb
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


# ---------------------------------------------------------------------------------------------------------------
# the OCR-B cell reader's rules, on made-up inputs

def _glyph_runs(centres, widths):
    return [(int(round(c - w / 2)), int(round(c + w / 2))) for c, w in zip(centres, widths)]


def test_the_walked_grid_follows_a_pitch_that_drifts_along_the_line():
    # a line photographed at a slant: the pitch grows from 25 to 31 px along 44 cells, so a fixed pitch
    # numbers the middle of the line one cell off
    pitches = np.linspace(25, 31, 43)
    true = np.concatenate([[40.0], 40.0 + np.cumsum(pitches)])
    runs = _glyph_runs(true, [0.65 * p for p in np.r_[pitches, 31]])
    runs[10:12] = [(runs[10][0], runs[11][1])]                     # two glyphs that touch: one run
    a, b = runs[20]
    runs[20:21] = [(a, a + 5), (a + 8, b)]                         # a glyph broken in two
    centres, pitch = ocrb._walked_grid(runs, 44)
    assert centres is not None and 25 <= pitch <= 31
    assert np.abs(centres - true).max() < 0.15 * 25
    assert ocrb._walked_grid(runs, 36)[0] is None                  # 44 glyphs are not a 36-character line
    assert ocrb._walked_grid(runs[:-1], 44)[0] is None             # nor 43 glyphs a 44-character one


def test_the_scores_are_opencv_normalised_cross_correlation():
    rng = np.random.default_rng(1)
    tpl, _ = ocrb.templates()
    windows = [rng.random((ocrb.CELL_H + 2 * ocrb.SLACK, ocrb.CELL_W + 2 * ocrb.SLACK)).astype(np.float32) * 255
               for _ in range(2)]
    windows.append(cv2.copyMakeBorder(tpl[ocrb.ALPHABET.index("K")][0], ocrb.SLACK, ocrb.SLACK, ocrb.SLACK,
                                      ocrb.SLACK, cv2.BORDER_CONSTANT, value=0))
    scores = ocrb._scores(windows)
    for w, row in zip(windows, scores):
        for i in (0, 10, 20, 36):
            expected = max(cv2.matchTemplate(w, tpl[i][v], cv2.TM_CCOEFF_NORMED).max() for v in range(len(tpl[i])))
            assert abs(row[i] - expected) < 1e-4
    assert ocrb.ALPHABET[int(np.argmax(scores[2]))] == "K" and scores[2].max() > 0.999


LINES = icao.compose("TD3", country="UTO", surname="MOORE", given_names="OTTO", number="L0A0B0C05",
                     nationality="UTO", birth_date="1980-08-18", sex="M", expiry_date="2030-01-01", optional="ZO0O123")


def _cells(lines, overrides=None):
    """Cells that read `lines` clearly, but for {(line, pos): {char: score}} in `overrides`."""
    out = []
    for li, line in enumerate(lines):
        row = []
        for pi, ch in enumerate(line):
            scores = {c: 0.5 - 0.001 * i for i, c in enumerate(ocrb.ALPHABET)}
            scores[ch] = 0.95
            scores.update((overrides or {}).get((li, pi), {}))
            row.append(ocrb.Cell(sorted(scores.items(), key=lambda kv: -kv[1])))
        out.append(row)
    return out


def _round_glyphs(lines, o_minus_zero_for_zeros: float, o_minus_zero_for_ohs: float):
    """Every 0 and O of `lines` as a close call between the two, shifted as one photo shifts them all."""
    over = {}
    for li, line in enumerate(lines):
        for pi, ch in enumerate(line):
            if ch == "0":
                over[(li, pi)] = {"0": 0.9, "O": 0.9 + o_minus_zero_for_zeros}
            elif ch == "O":
                over[(li, pi)] = {"O": 0.9, "0": 0.9 - o_minus_zero_for_ohs}
    return over


def test_round_glyphs_in_a_document_number_are_told_apart_by_the_zones_own_zeros_and_ohs():
    assert LINES[1][:9] == "L0A0B0C05" and LINES[1][28:35] == "ZO0O123"
    # a photo where every 0 matches the O template better (by 0.10) than its own: the dates' zeros, which can
    # only be digits, show it, and the names' Os match O far better (0.30)
    cells = _cells(LINES, _round_glyphs(LINES, 0.10, 0.30))
    assert mrz.zero_threshold(cells, mrz._layout("TD3")[0]) == pytest.approx((0.10 + 0.30) / 2)
    assert mrz.text_from_cells(44, cells)[0] == LINES     # 0s in the number and the optional data, the Os kept
    # and one where the Os are barely Os (0.05) and the zeros clear zeros (-0.10)
    cells = _cells(LINES, _round_glyphs(LINES, -0.10, 0.05))
    assert mrz.text_from_cells(44, cells)[0] == LINES
    # with zeros only (no O in the names) the threshold is a fixed step above the zeros' margin
    plain = icao.compose("TD3", country="ITA", surname="MEIER", given_names="ANNA", number="L0A0B0C05",
                         nationality="ITA", birth_date="1980-08-18", sex="F", expiry_date="2030-01-01",
                         optional="ZO0O123")
    assert "O" not in plain[0] + plain[1][10:13]
    cells = _cells(plain, _round_glyphs(plain, 0.03, 0.25))
    assert mrz.zero_threshold(cells, mrz._layout("TD3")[0]) == pytest.approx(0.03 + mrz.ZERO_STEP)
    assert mrz.text_from_cells(44, cells)[0] == plain


def test_a_failed_check_digit_is_repaired_with_the_next_best_glyph():
    # the birth date's last digit 8 printed faintly: 3 matches a hair better, and the check digit says 8
    assert LINES[1][13:20] == "8008183"
    cells = _cells(LINES, {(1, 18): {"3": 0.9, "8": 0.88}})
    assert mrz.text_from_cells(44, cells)[0] == LINES
    # far from the 8 (beyond REPAIR_MARGIN), a clearly printed 3 is not changed: the check digit fails
    cells = _cells(LINES, {(1, 18): {"3": 0.95, "8": 0.7}})
    lines, _ = mrz.text_from_cells(44, cells)
    assert lines[1][18] == "3" and not icao.parse(lines).valid


def test_letters_only_and_digits_only_places_take_the_best_glyph_of_their_kind():
    # a date digit whose best glyph is a letter, a name letter whose best glyph is a digit
    cells = _cells(LINES, {(1, 14): {"O": 0.97, "0": 0.9}, (0, 6): {"0": 0.97, "O": 0.9}})
    assert mrz.text_from_cells(44, cells)[0] == LINES


def test_letters_after_the_filler_run_that_ends_the_names_are_fillers():
    assert mrz.clean_names("WILSON<<CHLOE<<<<<<<<SSKSK<") == "WILSON<<CHLOE<<<<<<<<<<<<<<"
    assert mrz.clean_names("SMITH<<<<<<<<K<<") == "SMITH<<<<<<<<<<<"          # no given names at all
    for good in ("VAN<DER<BERG<<ANNA<MARIA<<<<", "SMITH<<JOHN<PAUL<GEORGE<RINGOSTARRLONGNAME", "<<ERIK<<<<"):
        assert mrz.clean_names(good) == good
    # the OCR-B reader's line 1 gets the same rule: a stray mark in the fillers is not a name
    cells = _cells(LINES, {(0, 30): {"K": 0.97}})
    assert mrz.text_from_cells(44, cells)[0] == LINES


def test_the_second_reader_replaces_only_the_fields_whose_check_digit_fails():
    first = [LINES[0], LINES[1][:14] + "3" + LINES[1][15:]]          # a birth date misread by the first reader
    second = [LINES[0][:30] + "KKSEKK" + LINES[0][36:], LINES[1][:3] + "Z" + LINES[1][4:]]
    assert icao.check_digit(second[1][:9]) != second[1][9]           # ... its document number wrong
    merged = mrz.merge_readings(first, second)
    assert merged == LINES                      # the first reader's names and number, the second's birth date
    assert mrz.merge_readings(first, [second[0], second[1][:36]]) is None
