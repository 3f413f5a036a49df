"""Synthetic selfie bursts for the tests and the benchmark, made from one face photo:

- `head_turn_frames`: a live head turning, simulated by a warp that moves the middle of the face (the nose) more
  than its outline and narrows the face a little: the parallax of a real, three-dimensional head;
- `flat_photo_frames`: a printed photo turned in front of the camera: one perspective warp of the whole picture
  (a plane has no parallax).
Each frame gets its own sensor noise, as a camera's frames do."""
from __future__ import annotations

import cv2
import numpy as np

from app.vision import faces
from app.vision.images import decode, encode_jpeg, fit

FRAME_MS = 120


def _poses(turns: tuple[str, ...] | list[str]) -> list[float]:
    """Yaw amounts per frame (-1 = right, +1 = left): centre, then each turn out and back."""
    seq = [0.0, 0.0, 0.0]
    for turn in turns:
        sign = 1.0 if turn == "left" else -1.0
        seq += [sign * 0.5, sign * 1.0, sign * 1.0, sign * 0.5, 0.0, 0.0]
    return seq


def _noisy(img: np.ndarray, rng: np.random.Generator, sigma: float = 2.0) -> bytes:
    out = img.astype(np.float32) + rng.normal(0, sigma, img.shape)
    return encode_jpeg(out.clip(0, 255).astype(np.uint8), 90)


def _landmarks(img: np.ndarray) -> faces.Face:
    found = faces.detect(img, with_embedding=False)
    if not found:
        raise ValueError("no face in the source photo")
    return found[0]


def head_turn_frames(photo: bytes, turns, *, seed: int = 0, start_ms: int = 0, frame_ms: int = FRAME_MS,
                     strength: float = 0.5, max_side: int = 480) -> list[tuple[int, bytes]]:
    img, _ = fit(decode(photo), max_side)
    face = _landmarks(img)
    pts = np.array(face.landmarks)
    nose = pts[4]
    iod = float(np.linalg.norm((pts[0] + pts[1]) / 2 - (pts[2] + pts[3]) / 2))
    cx = (face.box[0] + face.box[2]) / 2
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    bump = np.exp(-(((xx - nose[0]) / (0.55 * iod)) ** 2 + ((yy - nose[1]) / (0.8 * iod)) ** 2) / 2)
    rng = np.random.default_rng(seed)
    out = []
    for i, t in enumerate(_poses(turns)):
        shift = t * strength * iod * bump
        squeeze = 1.0 - 0.12 * abs(t)
        # inverse map: where each output pixel comes from
        map_x = (cx + (xx - cx) / squeeze - shift).astype(np.float32)
        frame = cv2.remap(img, map_x, yy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        out.append((start_ms + i * frame_ms, _noisy(frame, rng)))
    return out


def flat_photo_frames(photo: bytes, turns, *, seed: int = 0, start_ms: int = 0, frame_ms: int = FRAME_MS,
                      max_angle: float = 40.0, max_side: int = 480) -> list[tuple[int, bytes]]:
    """The photo as a plane turned about its vertical axis by up to `max_angle` degrees, as in the challenge."""
    img, _ = fit(decode(photo), max_side)
    h, w = img.shape[:2]
    rng = np.random.default_rng(seed)
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    out = []
    for i, t in enumerate(_poses(turns)):
        angle = np.deg2rad(max_angle * t)
        half = w / 2 * np.cos(angle)
        near, far = 1 + 0.12 * abs(np.sin(angle)), 1 - 0.12 * abs(np.sin(angle))
        lh, rh = (h * far, h * near) if t > 0 else (h * near, h * far)
        dst = np.float32([[w / 2 - half, (h - lh) / 2], [w / 2 + half, (h - rh) / 2],
                          [w / 2 + half, (h + rh) / 2], [w / 2 - half, (h + lh) / 2]])
        frame = cv2.warpPerspective(img, cv2.getPerspectiveTransform(src, dst), (w, h),
                                    borderMode=cv2.BORDER_CONSTANT, borderValue=(90, 90, 90))
        out.append((start_ms + i * frame_ms, _noisy(frame, rng)))
    return out


