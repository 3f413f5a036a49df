"""Fake-camera clips for Chromium: `--use-fake-device-for-media-stream --use-fake-ui-for-media-stream
--use-file-for-fake-video-capture=clip.y4m` makes getUserMedia deliver the frames of a Y4M file (looped) instead
of a camera's. The clip makers return lists of BGR uint8 frames, all of one even size, each with its own sensor
noise (a real camera never delivers two identical frames); `write_y4m` writes them.

    write_y4m(path, frames, fps=10)
    document_clip(image_bytes, seconds=4, fps=10, size=(640, 480))
    head_turn_clip(photo_bytes, turns, fps=10, lead_s=1.5, tail_s=6, size=(640, 480))
    flat_photo_clip(photo_bytes, turns, fps=10, lead_s=1.5, tail_s=6, size=(640, 480))

What Chromium does with such a file (measured by tests/browser/test_fakecam.py) is written in that module."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import cv2
import numpy as np

BACKGROUND = (60, 60, 60)   # BGR of the letterbox bars: a dark table or wall
NOISE_SIGMA = 2.0


def write_y4m(path: str | Path, frames: Sequence[np.ndarray], fps: int = 10) -> Path:
    """`frames` (BGR uint8, one size, even width and height) as a YUV4MPEG2 file, 4:2:0 (I420 planes), at `fps`
    frames per second."""
    if not frames:
        raise ValueError("no frames")
    height, width = frames[0].shape[:2]
    if width % 2 or height % 2:
        raise ValueError(f"4:2:0 needs an even width and height, not {width}x{height}")
    path = Path(path)
    with path.open("wb") as f:
        f.write(f"YUV4MPEG2 W{width} H{height} F{int(fps)}:1 Ip A1:1 C420jpeg\n".encode())
        for i, frame in enumerate(frames):
            if frame.shape != (height, width, 3) or frame.dtype != np.uint8:
                raise ValueError(f"frame {i} is {frame.shape} {frame.dtype}, not ({height}, {width}, 3) uint8")
            f.write(b"FRAME\n")
            f.write(cv2.cvtColor(frame, cv2.COLOR_BGR2YUV_I420).tobytes())
    return path


def letterbox(img: np.ndarray, size: tuple[int, int] = (640, 480), background=BACKGROUND) -> np.ndarray:
    """`img` scaled (up or down) to fit `size` (width, height), centred on bars of `background`."""
    width, height = size
    h, w = img.shape[:2]
    scale = min(width / w, height / h)
    new_w, new_h = max(1, round(w * scale)), max(1, round(h * scale))
    interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    resized = cv2.resize(img, (new_w, new_h), interpolation=interpolation)
    out = np.empty((height, width, 3), np.uint8)
    out[:] = background
    x, y = (width - new_w) // 2, (height - new_h) // 2
    out[y:y + new_h, x:x + new_w] = resized
    return out


def noisy(img: np.ndarray, rng: np.random.Generator, sigma: float = NOISE_SIGMA) -> np.ndarray:
    """`img` with fresh Gaussian sensor noise."""
    return (img.astype(np.float32) + rng.normal(0, sigma, img.shape)).clip(0, 255).astype(np.uint8)


def _decode(data: bytes) -> np.ndarray:
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if img is None:
        raise ValueError("cannot decode the image")
    return img


def _even(size: tuple[int, int]) -> tuple[int, int]:
    width, height = size
    if width % 2 or height % 2:
        raise ValueError(f"the clip size must be even, not {width}x{height}")
    return width, height


def document_clip(image_bytes: bytes, seconds: float = 4, fps: int = 10, size: tuple[int, int] = (640, 480),
                  *, seed: int = 0) -> list[np.ndarray]:
    """A still photo of a document (JPEG/PNG bytes) held before the camera for `seconds`."""
    still = letterbox(_decode(image_bytes), _even(size))
    rng = np.random.default_rng(seed)
    return [noisy(still, rng) for _ in range(max(1, round(seconds * fps)))]


def _motion_clip(make: Callable[..., list[tuple[int, bytes]]], photo_bytes: bytes, turns, fps: int, lead_s: float,
                 tail_s: float, size: tuple[int, int], seed: int, pose_ms: int) -> list[np.ndarray]:
    """The synthetic burst of `make` at `pose_ms` per pose, on the clip's timeline: each clip frame shows the pose
    of its time (a pose lasts as long as it lasts, whatever the fps), preceded by `lead_s` and followed by
    `tail_s` of the first and last (frontal) pose."""
    size = _even(size)
    burst = make(photo_bytes, turns, seed=seed, frame_ms=pose_ms)
    poses = [letterbox(_decode(jpeg), size) for _ms, jpeg in burst]
    frame_ms = 1000 / fps
    motion = max(1, round(len(poses) * pose_ms / frame_ms))
    timeline = ([poses[0]] * round(lead_s * fps)
                + [poses[min(len(poses) - 1, int(i * frame_ms // pose_ms))] for i in range(motion)]
                + [poses[-1]] * round(tail_s * fps))
    rng = np.random.default_rng(seed + 1)
    return [noisy(pose, rng) for pose in timeline]


def head_turn_clip(photo_bytes: bytes, turns, fps: int = 10, lead_s: float = 1.5, tail_s: float = 6,
                   size: tuple[int, int] = (640, 480), *, seed: int = 0, pose_ms: int = 120) -> list[np.ndarray]:
    """A live head turning `turns` (e.g. ["left", "right"]; app.vision.synthetic.head_turn_frames: parallax of a
    real head), after a frontal lead-in and with a long frontal tail."""
    from app.vision.synthetic import head_turn_frames
    return _motion_clip(head_turn_frames, photo_bytes, turns, fps, lead_s, tail_s, size, seed, pose_ms)


def flat_photo_clip(photo_bytes: bytes, turns, fps: int = 10, lead_s: float = 1.5, tail_s: float = 6,
                    size: tuple[int, int] = (640, 480), *, seed: int = 0, pose_ms: int = 120) -> list[np.ndarray]:
    """A printed photo turned before the camera (app.vision.synthetic.flat_photo_frames: one plane, no
    parallax), with the same lead-in and tail as `head_turn_clip`."""
    from app.vision.synthetic import flat_photo_frames
    return _motion_clip(flat_photo_frames, photo_bytes, turns, fps, lead_s, tail_s, size, seed, pose_ms)
