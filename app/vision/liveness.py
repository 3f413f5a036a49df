"""Active liveness, checked on the server: the server picks a random sequence of head turns (bound to a nonce and
a time window), the phone answers with a short burst of frames, and this module checks them:

- one face in (nearly) every frame, the same person throughout;
- the head turns in the order asked, back to the centre between turns: the yaw comes from the 5-point landmarks,
  as the base of the nose's offset from the eyes' midpoint over the distance between the eyes (`Face.yaw_ratio`):
  the nose stands out of the face, so that ratio moves with a real turn;
- parallax: a printed or displayed photo turned in front of the camera foreshortens as one plane, which narrows
  the eyes' distance (and everything else) without moving the nose against the eyes: turning without that shift is
  FLAT_SURFACE;
- no frame twice (pixel-identical or a near-copy by difference hash), none seen in an earlier attempt, timestamps
  increasing, the whole burst neither too fast for a human head nor too slow.

What this resists and what it does not: docs/vision.md and docs/decisions.md.

    new_challenge(rng) -> Challenge
    check_liveness(challenge, frames) -> LivenessResult
    best_frontal_frame(frames) -> int | None
"""
from __future__ import annotations

import hashlib
import random
import secrets
import time
from dataclasses import dataclass, field

import numpy as np

from app.vision import faces as face_mod
from app.vision.images import ImageError, decode, dhash, fit

TURNS = ("left", "right")
YAW_TURN = 0.11          # |yaw ratio - frontal| beyond which the head is turned
YAW_CENTRE = 0.05        # within which it is back at the centre
FLAT_COMPRESSION = 0.90  # the eyes' distance (over the nose's depth below them) shrinks below this share ...
FLAT_PARALLAX_RATIO = 0.75  # ... while the yaw ratio moves less than this many times the narrowing: a flat surface
MIN_FRAMES, MAX_FRAMES = 6, 90
MIN_MS_PER_TURN = 350
MAX_DURATION_MS = 20_000
FRAME_MAX_SIDE = 640
SAME_PERSON_DISTANCE = 0.6

NO_FACE = "NO_FACE"
MULTIPLE_FACES = "MULTIPLE_FACES"
WRONG_SEQUENCE = "WRONG_SEQUENCE"
FLAT_SURFACE = "FLAT_SURFACE"
REPLAYED_FRAMES = "REPLAYED_FRAMES"
TOO_FAST = "TOO_FAST"
TOO_SLOW = "TOO_SLOW"
TOO_FEW_FRAMES = "TOO_FEW_FRAMES"
FACE_CHANGED = "FACE_CHANGED"
CHALLENGE_EXPIRED = "CHALLENGE_EXPIRED"
UNREADABLE_FRAME = "UNREADABLE_FRAME"


@dataclass(frozen=True)
class Challenge:
    nonce: str                       # 128 bits, url-safe; the caller stores it and accepts one answer per nonce
    turns: tuple[str, ...]           # e.g. ("left", "right", "left"); face the camera between turns
    issued_at_ms: int
    valid_for_ms: int = 120_000

    def instructions(self) -> list[str]:
        """What the person is asked, step by step (the hosted page translates these keys)."""
        steps = ["centre"]
        for turn in self.turns:
            steps += [turn, "centre"]
        return steps

    def to_dict(self) -> dict:
        return {"nonce": self.nonce, "turns": list(self.turns), "issued_at_ms": self.issued_at_ms,
                "valid_for_ms": self.valid_for_ms}

    @classmethod
    def from_dict(cls, data: dict) -> "Challenge":
        return cls(data["nonce"], tuple(data["turns"]), int(data["issued_at_ms"]), int(data.get("valid_for_ms",
                                                                                              120_000)))


def new_challenge(rng: random.Random | None = None, *, now_ms: int | None = None) -> Challenge:
    """2 or 3 head turns in a random order (never the same turn three times in a row), with a fresh nonce."""
    rng = rng or secrets.SystemRandom()
    n = rng.choice((2, 3))
    turns = [rng.choice(TURNS) for _ in range(n)]
    if len(set(turns)) == 1 and n == 3:
        turns[rng.randrange(n)] = "left" if turns[0] == "right" else "right"
    nonce = "%032x" % rng.getrandbits(128) if not isinstance(rng, secrets.SystemRandom) else secrets.token_hex(16)
    return Challenge(nonce, tuple(turns), int(now_ms if now_ms is not None else time.time() * 1000))


@dataclass
class FrameReading:
    timestamp_ms: int
    faces: int
    yaw: float | None = None
    compression: float | None = None
    frontal_score: float = 0.0
    pose: str | None = None          # centre | left | right | None (between)


@dataclass
class LivenessResult:
    passed: bool
    confidence: float                 # 0..1
    reasons: list[str]
    observed_turns: list[str]
    frames_used: int
    duration_ms: float                # processing time
    best_frame: int | None            # index of the most frontal sharp frame: compare it with the document
    frame_hashes: list[str] = field(default_factory=list)   # store them: a later attempt must not reuse a frame
    readings: list[FrameReading] = field(default_factory=list)


def _read_frames(frames: list[tuple[int, bytes]], *, with_embeddings: bool) -> tuple:
    readings, hashes, dhashes, problems = [], [], [], []
    mains = []
    for ts, data in frames:
        try:
            img = decode(data)
        except ImageError:
            problems.append(UNREADABLE_FRAME)
            readings.append(FrameReading(int(ts), 0))
            hashes.append("")
            dhashes.append(-1)
            mains.append(None)
            continue
        img, _ = fit(img, FRAME_MAX_SIDE)
        grey = img.mean(axis=2).astype(np.uint8)
        hashes.append(hashlib.sha256(img.tobytes()).hexdigest())
        dhashes.append(dhash(grey))
        found = face_mod.detect(img, upsample=0, with_embedding=False)
        reading = FrameReading(int(ts), len(found))
        if found:
            main = found[0]
            reading.yaw = main.yaw_ratio()
            reading.compression = main.compression()
            reading.frontal_score = main.sharpness * main.width / (1.0 + 20 * abs(reading.yaw))
            mains.append((img, main))
        else:
            mains.append(None)
        readings.append(reading)
    return readings, hashes, dhashes, problems, mains


def _same_person(mains: list) -> bool:
    """The first, middle and last faces seen belong to one person (embeddings of three frames)."""
    seen = [m for m in mains if m is not None]
    if len(seen) < 2:
        return True
    picks = [seen[0], seen[len(seen) // 2], seen[-1]]
    embeddings = []
    for img, _face in picks:
        found = face_mod.detect(img, upsample=0, with_embedding=True)
        if found:
            embeddings.append(found[0].embedding)
    for a in embeddings:
        for b in embeddings:
            if float(np.linalg.norm(a - b)) > SAME_PERSON_DISTANCE:
                return False
    return True


def check_liveness(challenge: Challenge, frames: list[tuple[int, bytes]], *, now_ms: int | None = None,
                   seen_hashes: set[str] | frozenset[str] = frozenset(),
                   check_identity: bool = True) -> LivenessResult:
    """Did a live person turn their head as `challenge` asked, in these frames (timestamp in ms, JPEG/PNG)?"""
    started = time.perf_counter()
    reasons: list[str] = []
    if now_ms is not None and now_ms > challenge.issued_at_ms + challenge.valid_for_ms:
        reasons.append(CHALLENGE_EXPIRED)
    if len(frames) < MIN_FRAMES:
        return LivenessResult(False, 0.0, reasons + [TOO_FEW_FRAMES], [], len(frames),
                              round((time.perf_counter() - started) * 1000, 1), None)
    frames = list(frames)[:MAX_FRAMES]
    readings, hashes, dhashes, problems, mains = _read_frames(frames, with_embeddings=False)
    reasons += sorted(set(problems))

    # replays: a real camera never delivers the same pixels twice (sensor noise), nor a frame of another attempt
    replayed = len({h for h in hashes if h}) < len([h for h in hashes if h]) or any(h in seen_hashes for h in hashes)
    for i in range(1, len(dhashes)):
        if dhashes[i] >= 0 and dhashes[i] == dhashes[i - 1]:
            a, b = decode(frames[i][1]), decode(frames[i - 1][1])
            if a.shape == b.shape and float(np.abs(a.astype(np.int16) - b).mean()) < 0.6:
                replayed = True
    if replayed:
        reasons.append(REPLAYED_FRAMES)

    # timing
    times = [r.timestamp_ms for r in readings]
    if any(b <= a for a, b in zip(times, times[1:])):
        reasons.append(REPLAYED_FRAMES if REPLAYED_FRAMES not in reasons else WRONG_SEQUENCE)
    span = times[-1] - times[0]
    if span < MIN_MS_PER_TURN * len(challenge.turns):
        reasons.append(TOO_FAST)
    if span > MAX_DURATION_MS:
        reasons.append(TOO_SLOW)

    # faces
    with_face = [r for r in readings if r.faces >= 1]
    if len(with_face) < 0.8 * len(readings):
        reasons.append(NO_FACE)
    if sum(r.faces > 1 for r in readings) > 0.2 * len(readings):
        reasons.append(MULTIPLE_FACES)
    if len(with_face) < MIN_FRAMES:
        return _done(False, 0.0, reasons, [], readings, hashes, started)

    # pose: relative to the frontal yaw of the first frames (faces are not symmetric)
    base_yaw = float(np.median([r.yaw for r in with_face[:3]]))
    base_comp = float(np.median([r.compression for r in with_face[:3]]))
    for r in with_face:
        d = r.yaw - base_yaw
        r.pose = "centre" if abs(d) <= YAW_CENTRE else ("left" if d >= YAW_TURN else "right" if d <= -YAW_TURN
                                                        else None)
    observed, current = [], "centre"
    for r in with_face:
        if r.pose is None or r.pose == current:
            continue
        if r.pose != "centre":
            observed.append(r.pose)
        current = r.pose
    # parallax: frames where the face narrowed as in a turn, yet the nose stayed put against the eyes
    # (a real head turned by θ narrows by cos θ while the nose moves by about depth·tan θ: the nose's shift per
    # unit of narrowing is well above 1; a turned plane narrows the same but moves the nose only by perspective)
    narrowed = [r for r in with_face if r.compression < FLAT_COMPRESSION * base_comp]
    parallax = [abs(r.yaw - base_yaw) / max(1e-3, 1 - r.compression / base_comp) for r in narrowed]
    if len(narrowed) >= 2 and float(np.median(parallax)) < FLAT_PARALLAX_RATIO:
        reasons.append(FLAT_SURFACE)
    if observed != list(challenge.turns):
        reasons.append(WRONG_SEQUENCE)
    centre_mains = [m for m, r in zip(mains, readings) if m is not None and r.pose == "centre"]
    if check_identity and not any(r in reasons for r in (NO_FACE, FLAT_SURFACE)) and not _same_person(centre_mains):
        reasons.append(FACE_CHANGED)

    # confidence: how clearly each turn was made, the share of frames with exactly one face
    turn_peaks = []
    segment = []
    for r in with_face:
        if r.pose in TURNS:
            segment.append(abs(r.yaw - base_yaw))
        elif r.pose == "centre" and segment:
            turn_peaks.append(max(segment))
            segment = []
    if segment:
        turn_peaks.append(max(segment))
    strength = float(np.mean([min(1.0, p / (2 * YAW_TURN)) for p in turn_peaks])) if turn_peaks else 0.0
    single = sum(r.faces == 1 for r in readings) / len(readings)
    confidence = round(strength * single * (1.0 if not reasons else 0.5), 3)
    passed = not reasons
    result = _done(passed, confidence if passed else min(confidence, 0.4), reasons, observed, readings, hashes,
                   started)
    return result


def _done(passed, confidence, reasons, observed, readings, hashes, started) -> LivenessResult:
    best = _best_index(readings)
    return LivenessResult(passed, confidence, list(dict.fromkeys(reasons)), observed, len(readings),
                          round((time.perf_counter() - started) * 1000, 1), best, [h for h in hashes if h],
                          readings)


def _best_index(readings: list[FrameReading]) -> int | None:
    scored = [(r.frontal_score, i) for i, r in enumerate(readings) if r.faces == 1 and r.yaw is not None]
    return max(scored)[1] if scored else None


def best_frontal_frame(frames: list[tuple[int, bytes]]) -> int | None:
    """The index of the frame to compare with the document: one face, sharp, large, facing the camera."""
    readings = _read_frames(frames, with_embeddings=False)[0]
    return _best_index(readings)
