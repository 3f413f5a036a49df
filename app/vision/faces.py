"""Faces: detection (dlib's HOG detector, built into dlib), the 5-point landmarks (eye corners and the base of
the nose: `shape_predictor_5_face_landmarks.dat`, CC0) and the 128-d embedding (dlib's ResNet,
`dlib_face_recognition_resnet_model_v1.dat`, CC0), the model files from the `face-recognition-models` package:
nothing is downloaded at run time. The models load once per process, lazily, under a lock.

    face_match(probe_bytes, reference_bytes) -> FaceMatch
    analyse(image_bytes) -> FaceAnalysis
"""
from __future__ import annotations

import importlib.util
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from app.vision.images import ImageError, decode, encode_jpeg, fit, sharpness

# dlib's published operating point: distance 0.6 separates same / different people (99.38% on LFW). A KYC match
# wants fewer false matches than LFW's balance: 0.55 (see docs/vision.md for the figures on our face set).
DISTANCE_THRESHOLD = 0.55
MIN_FACE_PX = 60          # face box width below which the embedding is unreliable
MIN_SHARPNESS = 12.0      # Laplacian variance of the face at 150 px wide, below which it is too blurry
MAX_SIDE = 1024           # images are scaled down to this before detection

NO_FACE_FOUND = "NO_FACE_FOUND"
TOO_MANY_FACES = "TOO_MANY_FACES"
FACE_TOO_SMALL = "FACE_TOO_SMALL"
FACE_TOO_BLURRY = "FACE_TOO_BLURRY"
FACE_OCCLUDED = "FACE_OCCLUDED"
UNREADABLE_IMAGE = "UNREADABLE_IMAGE"


class _Models:
    _lock = threading.Lock()
    _loaded: tuple | None = None

    @classmethod
    def get(cls):
        if cls._loaded is None:
            with cls._lock:
                if cls._loaded is None:
                    import dlib  # imported here: importing app.vision stays cheap

                    spec = importlib.util.find_spec("face_recognition_models")
                    if spec is None or not spec.submodule_search_locations:
                        raise RuntimeError("face-recognition-models is not installed (pyproject dependencies)")
                    # the package's own __init__ needs pkg_resources; its files are all we need
                    models = Path(list(spec.submodule_search_locations)[0]) / "models"
                    cls._loaded = (
                        dlib.get_frontal_face_detector(),
                        dlib.shape_predictor(str(models / "shape_predictor_5_face_landmarks.dat")),
                        dlib.face_recognition_model_v1(str(models / "dlib_face_recognition_resnet_model_v1.dat")),
                        dlib,
                    )
        return cls._loaded


def load_models() -> None:
    """Load the models now (a worker can call this at start so the first request does not pay for it)."""
    _Models.get()


@dataclass
class Face:
    box: tuple[int, int, int, int]          # left, top, right, bottom in the image's pixels
    score: float                            # the detector's confidence (HOG margin; > 0 is a detection)
    landmarks: list[tuple[float, float]]    # 5 points: right eye outer, inner; left eye outer, inner; nose base
    width: int = 0
    sharpness: float = 0.0
    clipped: float = 0.0                    # share of the face box outside the image (a partial face)
    occluded: bool = False
    occlusion_reasons: list[str] = field(default_factory=list)
    embedding: np.ndarray | None = None

    @property
    def eye_centres(self) -> tuple[np.ndarray, np.ndarray]:
        p = np.array(self.landmarks)
        return (p[0] + p[1]) / 2, (p[2] + p[3]) / 2

    def yaw_ratio(self) -> float:
        """The nose base's offset from the eyes' midpoint along the eye line, over the distance between the eyes:
        about 0 facing the camera, positive when the head turns to the person's left (the nose moves to the
        image's right in an unmirrored picture), and constant for a flat picture of a face however it is turned."""
        a, b = self.eye_centres
        left, right = (a, b) if a[0] < b[0] else (b, a)
        axis = right - left
        iod = float(np.linalg.norm(axis))
        if iod < 1e-6:
            return 0.0
        u = axis / iod
        nose = np.array(self.landmarks[4])
        return float(np.dot(nose - (left + right) / 2, u) / iod)

    def compression(self) -> float:
        """Distance between the eyes over the nose base's distance from the eye line: falls as the head (or a
        picture of it) turns away from the camera."""
        a, b = self.eye_centres
        axis = b - a
        iod = float(np.linalg.norm(axis))
        if iod < 1e-6:
            return 0.0
        normal = np.array([-axis[1], axis[0]]) / iod
        depth = abs(float(np.dot(np.array(self.landmarks[4]) - (a + b) / 2, normal)))
        return iod / max(1e-6, depth)


@dataclass
class FaceAnalysis:
    faces: list[Face]
    width: int
    height: int
    reasons: list[str]                       # machine-readable problems of the main face (empty when usable)
    main: Face | None                        # the largest face

    @property
    def usable(self) -> bool:
        return self.main is not None and not self.reasons


def _rgb(img: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(cv2.cvtColor(img, cv2.COLOR_BGR2RGB))


def detect(img: np.ndarray, *, upsample: int | None = None, with_embedding: bool = True) -> list[Face]:
    """Faces in a BGR image, largest first, with landmarks, quality and (optionally) the embedding."""
    detector, predictor, encoder, dlib = _Models.get()
    rgb = _rgb(img)
    h, w = img.shape[:2]
    if upsample is None:
        upsample = 1 if max(h, w) < 700 else 0
    rects, scores, _ = detector.run(rgb, upsample, -0.2)
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    faces = []
    for rect, score in zip(rects, scores):
        shape = predictor(rgb, rect)
        pts = [(float(shape.part(i).x), float(shape.part(i).y)) for i in range(5)]
        left, top, right, bottom = rect.left(), rect.top(), rect.right(), rect.bottom()
        bw, bh = right - left, bottom - top
        inside = max(0, min(right, w) - max(left, 0)) * max(0, min(bottom, h) - max(top, 0))
        clipped = 1.0 - inside / max(1, bw * bh)
        x0, y0, x1, y1 = max(0, left), max(0, top), min(w, right), min(h, bottom)
        crop = grey[y0:y1, x0:x1]
        sharp = sharpness(cv2.resize(crop, (150, round(150 * crop.shape[0] / max(1, crop.shape[1]))))) \
            if crop.size else 0.0
        face = Face((left, top, right, bottom), float(score), pts, bw, sharp, clipped)
        _occlusion(face, score)
        if with_embedding:
            face.embedding = np.array(encoder.compute_face_descriptor(rgb, shape, 0))
        faces.append(face)
    faces.sort(key=lambda f: -f.width)
    return faces


def _occlusion(face: Face, score: float) -> None:
    """A heuristic: the face is there but part of it is hidden or out of the picture. Signs: the box runs out of
    the image, the detector barely fires, or the landmarks have an implausible geometry (the nose base not below
    the eyes' middle, eyes too close or too far for the box)."""
    reasons = []
    if face.clipped > 0.12:
        reasons.append("partial_face")
    if score < 0.1:
        reasons.append("weak_detection")
    a, b = face.eye_centres
    iod = float(np.linalg.norm(b - a))
    if not (0.25 < iod / max(1, face.width) < 0.65):
        reasons.append("landmark_geometry")
    ratio = abs(face.yaw_ratio())
    if ratio > 0.45:
        reasons.append("landmark_geometry")
    comp = face.compression()
    if not (0.8 < comp < 3.5):
        reasons.append("landmark_geometry")
    face.occlusion_reasons = sorted(set(reasons))
    face.occluded = bool(face.occlusion_reasons)


def analyse_image(img: np.ndarray, *, with_embedding: bool = True) -> FaceAnalysis:
    img, _ = fit(img, MAX_SIDE)
    faces = detect(img, with_embedding=with_embedding)
    h, w = img.shape[:2]
    reasons = []
    main = faces[0] if faces else None
    if main is None:
        reasons.append(NO_FACE_FOUND)
    else:
        # a second face at least half as wide as the main one is a second person (a much smaller one is the
        # ghost portrait of a document or a face far behind)
        if any(f.width >= 0.5 * main.width for f in faces[1:]):
            reasons.append(TOO_MANY_FACES)
        if main.width < MIN_FACE_PX:
            reasons.append(FACE_TOO_SMALL)
        if main.sharpness < MIN_SHARPNESS:
            reasons.append(FACE_TOO_BLURRY)
        if main.occluded:
            reasons.append(FACE_OCCLUDED)
    return FaceAnalysis(faces, w, h, reasons, main)


def analyse(image_bytes: bytes, *, with_embedding: bool = True) -> FaceAnalysis:
    """Faces and problems of one picture (a selfie or a document photo)."""
    try:
        img = decode(image_bytes)
    except ImageError:
        return FaceAnalysis([], 0, 0, [UNREADABLE_IMAGE], None)
    return analyse_image(img, with_embedding=with_embedding)


def similarity_from_distance(distance: float) -> float:
    """0..1, 1 for identical embeddings; 0.5 at dlib's 0.6 and falls to 0 at 1.2."""
    return round(float(max(0.0, min(1.0, 1.0 - distance / 1.2))), 4)


@dataclass
class FaceMatch:
    passed: bool
    similarity: float | None             # 0..1 (see similarity_from_distance)
    threshold: float                     # the similarity a match needs
    distance: float | None               # dlib's Euclidean distance between the embeddings
    distance_threshold: float
    faces_found: dict[str, int]          # {"probe": n, "reference": n}
    face_occluded: bool                  # on either side
    reasons: list[str]                   # e.g. ["probe:NO_FACE_FOUND", "reference:FACE_TOO_SMALL"]
    duration_ms: float


def face_match(probe_bytes: bytes, reference_bytes: bytes, *,
               distance_threshold: float = DISTANCE_THRESHOLD) -> FaceMatch:
    """Is the person of `probe` (a selfie) the person of `reference` (a document's photo or another selfie)?
    Each side's problems come back as `side:REASON`; an occluded face still gets a similarity but does not pass."""
    started = time.perf_counter()
    sides = {"probe": analyse(probe_bytes), "reference": analyse(reference_bytes)}
    reasons = [f"{side}:{r}" for side, a in sides.items() for r in a.reasons]
    distance = similarity = None
    probe, ref = sides["probe"].main, sides["reference"].main
    if probe is not None and ref is not None and probe.embedding is not None and ref.embedding is not None:
        distance = round(float(np.linalg.norm(probe.embedding - ref.embedding)), 4)
        similarity = similarity_from_distance(distance)
    blocking = [r for r in reasons if not r.endswith(FACE_TOO_BLURRY)]
    passed = distance is not None and distance <= distance_threshold and not blocking
    return FaceMatch(
        passed=passed, similarity=similarity, threshold=similarity_from_distance(distance_threshold),
        distance=distance, distance_threshold=distance_threshold,
        faces_found={side: len(a.faces) for side, a in sides.items()},
        face_occluded=any(a.main is not None and a.main.occluded for a in sides.values()),
        reasons=reasons, duration_ms=round((time.perf_counter() - started) * 1000, 1))


def crop_portrait(image_bytes: bytes, *, width: int = 420) -> bytes | None:
    """A head-and-shoulders crop (ID-photo proportions 35:45) around the largest face, JPEG; None without a face."""
    try:
        img = decode(image_bytes)
    except ImageError:
        return None
    small, scale = fit(img, MAX_SIDE)
    faces = detect(small, with_embedding=False)
    if not faces:
        return None
    left, top, right, bottom = (v / scale for v in faces[0].box)
    fw = right - left
    cx, cy = (left + right) / 2, (top + bottom) / 2
    cw = fw * 2.0
    ch = cw * 45 / 35
    x0, y0 = int(cx - cw / 2), int(cy - ch * 0.45)
    h, w = img.shape[:2]
    pad = cv2.copyMakeBorder(img, h, h, w, w, cv2.BORDER_REPLICATE)
    crop = pad[y0 + h:int(y0 + ch) + h, x0 + w:int(x0 + cw) + w]
    crop = cv2.resize(crop, (width, round(width * 45 / 35)), interpolation=cv2.INTER_AREA)
    return encode_jpeg(crop, 92)
