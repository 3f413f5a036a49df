"""The head-turn challenge on synthetic bursts: a simulated live turn (the nose moves against the outline) passes;
a printed photo turned in front of the camera (one plane) fails FLAT_SURFACE; wrong order, replayed frames and
timing fail with their reasons."""
import random

import pytest

from app.vision import liveness, synthetic


@pytest.fixture(scope="module")
def challenge():
    return liveness.Challenge("a" * 32, ("left", "right", "left"), 0)


def test_new_challenge_is_random_and_bound_to_a_nonce():
    a, b = liveness.new_challenge(random.Random(1)), liveness.new_challenge(random.Random(2))
    assert a.nonce != b.nonce and len(a.nonce) == 32
    assert 2 <= len(a.turns) <= 3 and set(a.turns) <= {"left", "right"}
    assert a.instructions()[0] == "centre" and a.instructions()[-1] == "centre"
    assert liveness.Challenge.from_dict(a.to_dict()) == a
    fresh = liveness.new_challenge()
    assert len(fresh.nonce) == 32
    seen = {liveness.new_challenge(random.Random(s)).turns for s in range(30)}
    assert len(seen) > 3


def test_genuine_turns_pass(obama, challenge):
    frames = synthetic.head_turn_frames(obama, challenge.turns, seed=1)
    result = liveness.check_liveness(challenge, frames)
    assert result.passed, result.reasons
    assert result.observed_turns == list(challenge.turns)
    assert result.confidence > 0.5
    assert result.best_frame is not None and result.readings[result.best_frame].pose == "centre"
    assert len(result.frame_hashes) == len(frames)


def test_a_printed_photo_turned_is_a_flat_surface(obama, challenge):
    frames = synthetic.flat_photo_frames(obama, challenge.turns, seed=2)
    result = liveness.check_liveness(challenge, frames)
    assert not result.passed
    assert liveness.FLAT_SURFACE in result.reasons
    assert result.confidence < 0.5


def test_the_wrong_order_fails(obama2):
    frames = synthetic.head_turn_frames(obama2, ("right", "left"), seed=3)
    result = liveness.check_liveness(liveness.Challenge("b" * 32, ("left", "right"), 0), frames, check_identity=False)
    assert not result.passed and liveness.WRONG_SEQUENCE in result.reasons
    assert result.observed_turns == ["right", "left"]


def test_duplicated_and_reused_frames_fail(obama2):
    challenge = liveness.Challenge("c" * 32, ("left", "right"), 0)
    frames = synthetic.head_turn_frames(obama2, challenge.turns, seed=4)
    doubled = frames[:5] + [(frames[5][0], frames[4][1])] + frames[6:]
    result = liveness.check_liveness(challenge, doubled, check_identity=False)
    assert not result.passed and liveness.REPLAYED_FRAMES in result.reasons
    first = liveness.check_liveness(challenge, frames, check_identity=False)
    assert first.passed
    again = liveness.check_liveness(challenge, frames, seen_hashes=set(first.frame_hashes), check_identity=False)
    assert not again.passed and liveness.REPLAYED_FRAMES in again.reasons


def test_timing_and_expiry(obama2):
    challenge = liveness.Challenge("d" * 32, ("left", "right"), 0)
    fast = synthetic.head_turn_frames(obama2, challenge.turns, seed=5, frame_ms=10)
    assert liveness.TOO_FAST in liveness.check_liveness(challenge, fast, check_identity=False).reasons
    slow = synthetic.head_turn_frames(obama2, challenge.turns, seed=5, frame_ms=2000)
    assert liveness.TOO_SLOW in liveness.check_liveness(challenge, slow, check_identity=False).reasons
    ok = synthetic.head_turn_frames(obama2, challenge.turns, seed=5)
    late = liveness.check_liveness(challenge, ok, now_ms=challenge.valid_for_ms + 1, check_identity=False)
    assert liveness.CHALLENGE_EXPIRED in late.reasons and not late.passed
    assert liveness.TOO_FEW_FRAMES in liveness.check_liveness(challenge, ok[:3]).reasons


def test_no_face_in_the_frames(challenge):
    import numpy as np

    from app.vision.images import encode_jpeg
    rng = np.random.default_rng(0)
    frames = [(i * 120, encode_jpeg(rng.integers(0, 255, (240, 320, 3), dtype=np.uint8))) for i in range(10)]
    result = liveness.check_liveness(challenge, frames)
    assert not result.passed and liveness.NO_FACE in result.reasons and result.best_frame is None


def test_best_frontal_frame(obama):
    frames = synthetic.head_turn_frames(obama, ("left",), seed=6)
    index = liveness.best_frontal_frame(frames)
    assert index is not None and index in (0, 1, 2, 7, 8)
