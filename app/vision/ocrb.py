"""A fixed-pitch OCR-B reader for machine-readable zones.

ICAO Doc 9303 prints every MRZ in OCR-B at 10 characters per inch, each line a fixed number of characters (30, 36
or 44). So once the zone is level, each line is a row of cells: number the glyphs from left to right (the pitch
drifts along a line photographed at a slant), fit the cells' centres to them, and match each cell against OCR-B
glyphs rendered from Debian's fonts-ocr-b (normalized cross-correlation with a little slack, all templates and
shifts in one matrix product). Each cell keeps its ranked candidates so that the caller can restrict a
position to digits or letters and repair a field whose check digit fails with the next-best candidates.

Tesseract's `eng` model reads the filler `<` as K, C or E and miscounts runs of fillers: this reader does not have
that weakness, and tesseract stays as the second opinion (app/vision/mrz.py).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789<"
FONT_PATHS = ("/usr/share/fonts/opentype/ocr-b/OCRB.otf", "/usr/share/fonts/truetype/ocr-b/OCRB.ttf")
CELL_W, CELL_H = 28, 34          # the size cells are compared at
SLACK = 3                        # pixels of shift allowed each way

_lock = threading.Lock()
_templates: tuple[np.ndarray, float] | None = None


def _font_path() -> str:
    for path in FONT_PATHS:
        if Path(path).exists():
            return path
    raise RuntimeError("the OCR-B font is missing: install Debian's fonts-ocr-b (make system-deps)")


def templates() -> tuple[np.ndarray, float]:
    """(array [len(ALPHABET), variants, CELL_H, CELL_W] of float32 templates, the font's pitch / cap height)."""
    global _templates
    with _lock:
        if _templates is None:
            size = 96
            font = ImageFont.truetype(_font_path(), size)
            pitch = font.getlength("H")
            top = font.getbbox("H")[1]
            baseline = font.getbbox("H")[3]
            cap = baseline - top
            out = []
            for ch in ALPHABET:
                img = Image.new("L", (int(pitch * 2), size * 2), 0)
                ImageDraw.Draw(img).text((int(pitch / 2), 0), ch, font=font, fill=255)
                arr = np.asarray(img, np.float32)[top:baseline, int(pitch / 2):int(pitch / 2 + pitch)]
                cell = cv2.resize(arr, (CELL_W, CELL_H), interpolation=cv2.INTER_AREA)
                variants = [cell]
                for sigma in (0.8, 1.4):
                    variants.append(cv2.GaussianBlur(cell, (0, 0), sigma))
                variants.append(cv2.dilate(cell, np.ones((2, 2), np.uint8)))
                variants.append(cv2.erode(cell, np.ones((2, 2), np.uint8)))
                out.append(np.stack(variants))
            _templates = (np.stack(out).astype(np.float32), pitch / cap)
        return _templates


@dataclass
class Cell:
    ranked: list[tuple[str, float]]     # (character, score) best first

    def best(self, allowed: str | None = None) -> tuple[str, float]:
        for ch, score in self.ranked:
            if allowed is None or ch in allowed:
                return ch, score
        return self.ranked[0]


def _bands(ink: np.ndarray) -> list[tuple[int, int]]:
    profile = ink.sum(axis=1).astype(np.float32)
    if profile.max() <= 0:
        return []
    on = profile > 0.2 * profile.max()
    bands, start = [], None
    for y, v in enumerate(on):
        if v and start is None:
            start = y
        elif not v and start is not None:
            bands.append((start, y))
            start = None
    if start is not None:
        bands.append((start, len(on)))
    if not bands:
        return []
    tallest = max(b - a for a, b in bands)
    return [(a, b) for a, b in bands if b - a >= 0.45 * tallest]


def _windows(flat_ink: np.ndarray, centres, width: float, top: float, bottom: float) -> list[np.ndarray]:
    sx, sy = CELL_W / width, CELL_H / max(1.0, bottom - top)
    h, w = flat_ink.shape
    out = []
    for cx in centres:
        x0, x1 = int(round(cx - width / 2 - SLACK / sx)), int(round(cx + width / 2 + SLACK / sx))
        y0, y1 = int(round(top - SLACK / sy)), int(round(bottom + SLACK / sy))
        window = np.zeros((max(1, y1 - y0), max(1, x1 - x0)), np.float32)
        sx0, sy0, sx1, sy1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
        if sx1 > sx0 and sy1 > sy0:
            window[sy0 - y0:sy1 - y0, sx0 - x0:sx1 - x0] = flat_ink[sy0:sy1, sx0:sx1]
        out.append(cv2.resize(window, (CELL_W + 2 * SLACK, CELL_H + 2 * SLACK), interpolation=cv2.INTER_AREA))
    return out


def _unit_rows(rows: np.ndarray) -> np.ndarray:
    rows = rows - rows.mean(axis=1, keepdims=True)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-6)


_unit_templates: np.ndarray | None = None


def _template_matrix() -> np.ndarray:
    """Every variant of every template, zero-mean and unit-norm, one a column: [CELL_H * CELL_W, chars * variants]."""
    global _unit_templates
    if _unit_templates is None:
        tpl, _ = templates()
        _unit_templates = np.ascontiguousarray(_unit_rows(tpl.reshape(-1, CELL_H * CELL_W)).T)
    return _unit_templates


def _scores(windows: list[np.ndarray]) -> np.ndarray:
    """[len(windows), len(ALPHABET)]: each character's best normalized cross-correlation (cv2's TM_CCOEFF_NORMED)
    over every variant and every shift of up to SLACK pixels, as one matrix product."""
    if not windows:
        return np.zeros((0, len(ALPHABET)), np.float32)
    views = np.lib.stride_tricks.sliding_window_view(np.stack(windows), (CELL_H, CELL_W), axis=(1, 2))
    shifts = views.shape[1] * views.shape[2]
    patches = _unit_rows(views.reshape(-1, CELL_H * CELL_W).astype(np.float32))
    corr = (patches @ _template_matrix()).reshape(len(windows), shifts, len(ALPHABET), -1)
    return corr.max(axis=(1, 3))


SCALE_VOTE = (-0.08, 0.0, 0.08)   # the cap heights a cell is read at, around the line's best: the scores averaged
VOTE_MARGIN = 0.08                # ... when its two best characters are closer than this at the line's best height


def _score_cells(flat_ink: np.ndarray, centres: np.ndarray, pitch: float, middle: float, cap: float) -> list[Cell]:
    """Rank the characters of each cell. The glyphs' size within the cell differs between printers (and blur
    fattens them): the scale is chosen once per line, on a sample of its cells, so that no single cell can
    pick the scale that suits a wrong character (a squat 0 is an O). That choice is noisy, and at a cap height
    a little off a 0 reads as U and an O as D by a hair: a cell whose two best characters are close is read
    again at the heights either side and its scores averaged, so that the character that fits at every height
    wins."""
    sample = centres[:: max(1, len(centres) // 10)]

    def at(cells, fx: float, fy: float) -> np.ndarray:
        return _scores(_windows(flat_ink, cells, pitch * fx, middle - cap * fy / 2, middle + cap * fy / 2))

    fy = max((0.8, 0.88, 0.96, 1.04, 1.12), key=lambda f: float(at(sample, 1.0, f).max(axis=1).mean()))
    fx = max((0.9, 1.0, 1.1), key=lambda f: float(at(sample, f, fy).max(axis=1).mean()))
    scores = at(centres, fx, fy)
    top2 = -np.partition(-scores, 1, axis=1)[:, :2]
    unsure = np.flatnonzero(top2[:, 0] - top2[:, 1] < VOTE_MARGIN)    # a clear glyph needs no second look
    if len(unsure):
        votes = [at(centres[unsure], fx, fy + d) for d in SCALE_VOTE if d]
        scores[unsure] = (scores[unsure] + sum(votes)) / (1 + len(votes))
    out = []
    for row in scores:
        order = np.argsort(-row)
        out.append(Cell([(ALPHABET[j], float(row[j])) for j in order]))
    return out


def _runs(cols: np.ndarray) -> list[tuple[int, int]]:
    """Runs of consecutive columns with ink: glyphs, or pieces of glyphs, or glyphs that touch."""
    runs, start, prev = [], cols[0], cols[0]
    for c in cols[1:]:
        if c > prev + 1:
            runs.append((int(start), int(prev)))
            start = c
        prev = c
    runs.append((int(start), int(prev)))
    return runs


def _smooth_grid(ks: list[int], cs: list[float], n_chars: int, pitch: float) -> np.ndarray | None:
    """Cell centres c(k) for k = 0..n_chars-1 fitted to the glyph centres found (quadratic: a photo taken at a
    slant changes the pitch along the line), dropping glyphs that sit off the fit."""
    k, c = np.array(ks, float), np.array(cs, float)
    deg = 2 if len(set(ks)) >= n_chars // 3 else 1
    keep = np.ones(len(k), bool)
    for _ in range(2):
        if len(set(k[keep].tolist())) <= deg + 2:
            return None
        coef = np.polyfit(k[keep], c[keep], deg)
        keep = np.abs(np.polyval(coef, k) - c) < 0.25 * pitch
    centres = np.polyval(coef, np.arange(n_chars))
    steps = np.diff(centres)
    if np.any(steps < 0.7 * pitch) or np.any(steps > 1.3 * pitch):
        return None
    return centres


def _walked_grid(runs: list[tuple[int, int]], n_chars: int) -> tuple[np.ndarray | None, float]:
    """Number the glyphs from left to right, each step the gap over the local pitch (which drifts along a line
    photographed at a slant: a fixed pitch numbers the middle of the line wrongly); the grid holds only when the
    numbering ends at the last cell exactly."""
    span = runs[-1][1] - runs[0][0]
    pitch = span / (n_chars - 0.3)
    if pitch <= 0:
        return None, pitch
    # glyphs that touch: a run as wide as m glyphs and their gaps is m glyphs
    glyphs: list[tuple[float, float, bool]] = []           # (centre, width, one whole glyph)
    for a, b in runs:
        width = b - a + 1
        m = max(1, round((width + 0.35 * pitch) / pitch))
        for j in range(m):
            glyphs.append((a + (j + 0.5) * width / m, width / m, m == 1))
    ks, cs = [0], [glyphs[0][0]]
    single = [glyphs[0][2]]
    steps: list[float] = []
    for centre, _, whole in glyphs[1:]:
        local = float(np.median(steps[-6:])) if len(steps) >= 3 else pitch
        step = round((centre - cs[-1]) / local)
        if step == 0:                                        # a piece of the same glyph: merge
            cs[-1] = (cs[-1] + centre) / 2
            single[-1] = False
            continue
        if step == 1:
            steps.append(centre - cs[-1])
        ks.append(ks[-1] + step)
        cs.append(centre)
        single.append(whole)
    if ks[-1] != n_chars - 1:
        return None, pitch
    pairs = [(k, c) for k, c, s in zip(ks, cs, single) if s]
    centres = _smooth_grid([k for k, _ in pairs], [c for _, c in pairs], n_chars, pitch)
    return centres, float(np.mean(np.diff(centres))) if centres is not None else pitch


def _fitted_grid(runs: list[tuple[int, int]], n_chars: int) -> tuple[np.ndarray | None, float]:
    """The grid from the line's first and last ink and a fixed pitch, refined on the runs one glyph wide."""
    span = runs[-1][1] - runs[0][0]
    pitch = span / (n_chars - 0.3)
    x0 = runs[0][0] + 0.35 * pitch                         # centre of the first cell
    if pitch <= 0:
        return None, pitch
    ks: list[int] = []
    cs: list[float] = []
    for _ in range(2):
        ks, cs = [], []
        for a, b in runs:
            if 0.25 * pitch <= b - a + 1 <= 1.0 * pitch:
                c = (a + b) / 2
                k = round((c - x0) / pitch)
                if 0 <= k < n_chars and abs(c - (x0 + k * pitch)) < 0.35 * pitch:
                    ks.append(k)
                    cs.append(c)
        if len(set(ks)) < max(4, n_chars // 4):
            break
        slope, intercept = np.polyfit(np.array(ks, float), np.array(cs, float), 1)
        if not (0.8 * pitch < slope < 1.2 * pitch):
            break
        pitch, x0 = float(slope), float(intercept)
    centres = x0 + pitch * np.arange(n_chars)
    if len(set(ks)) >= n_chars // 3:
        quad = np.polyfit(np.array(ks, float), np.array(cs, float), 2)
        curved = np.polyval(quad, np.arange(n_chars))
        if np.all(np.diff(curved) > 0.8 * pitch) and np.all(np.diff(curved) < 1.2 * pitch):
            centres = curved
    return centres, pitch


def read_zone(grey: np.ndarray, n_chars_options=(44, 36, 30)) -> list[tuple[int, list[list[Cell]]]]:
    """Candidate readings of a level, cropped MRZ: for each plausible line width, the cells of each line
    (ranked characters). Empty when no row of glyphs is found."""
    scale = 1300 / max(1, grey.shape[1])
    img = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC if scale > 1 else cv2.INTER_AREA)
    background = cv2.morphologyEx(img, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (41, 41)))
    flat = cv2.divide(img, background, scale=255)
    smooth = cv2.GaussianBlur(flat, (3, 3), 0)
    _, ink = cv2.threshold(smooth, 0, 1, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    ink = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    flat_ink = 255.0 - flat.astype(np.float32)
    bands = _bands(ink)
    if len(bands) < 2:
        return []
    _, pitch_ratio = templates()
    lines = []
    for top, bottom in bands:
        cols = np.where(ink[top:bottom].sum(axis=0) > 0)[0]
        if len(cols) < 10:
            continue
        lines.append((top, bottom, cols))
    # the MRZ lines are the long ones at the bottom
    if not lines:
        return []
    longest = max(c[-1] - c[0] for _, _, c in lines)
    lines = [ln for ln in lines if ln[2][-1] - ln[2][0] >= 0.6 * longest]
    results = []
    for grid in (_walked_grid, _fitted_grid):     # the fitted grid only when no line width walks out exactly
        for n_chars in n_chars_options:
            n_lines = 3 if n_chars == 30 else 2
            if len(lines) < n_lines:
                continue
            read = []
            for top, bottom, cols in lines[-n_lines:]:
                centres, pitch = grid(_runs(cols), n_chars)
                if centres is None:
                    read = None
                    break
                cap = pitch / pitch_ratio                         # the cap height the pitch implies
                if not (0.75 < (bottom - top) / cap < 1.45):
                    read = None
                    break
                read.append(_score_cells(flat_ink, centres, pitch, (top + bottom) / 2, cap))
            if read:
                results.append((n_chars, read))
        if results:
            break
    return results
