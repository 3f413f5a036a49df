"""Face match on real photos (face_recognition's test images) and on a generated passport carrying the photo."""
import random

import cv2
import numpy as np

from app.vision import documents, faces
from app.vision.images import decode, encode_jpeg
from tests.vision.conftest import image


def test_same_person_matches(obama, obama2):
    result = faces.face_match(obama2, obama)
    assert result.passed
    assert result.similarity > result.threshold
    assert result.faces_found == {"probe": 1, "reference": 1}
    assert not result.face_occluded and result.reasons == []


def test_different_people_do_not_match(obama, biden):
    result = faces.face_match(biden, obama)
    assert not result.passed
    assert result.similarity < result.threshold and result.distance > faces.DISTANCE_THRESHOLD


def test_selfie_against_the_document_photo(obama, obama2):
    portrait = faces.crop_portrait(obama)
    doc = documents.make_document(random.Random(5), face=portrait, rotation=3, blur=0.6, noise=4)
    assert faces.face_match(obama2, doc.image).passed


def test_no_face_and_too_many_faces(obama, biden):
    blank = encode_jpeg(np.full((480, 640, 3), 200, np.uint8))
    result = faces.face_match(blank, obama)
    assert not result.passed and "probe:NO_FACE_FOUND" in result.reasons and result.similarity is None
    a, b = decode(obama), decode(biden)
    b = cv2.resize(b, (round(b.shape[1] * a.shape[0] / b.shape[0]), a.shape[0]))
    two = encode_jpeg(np.concatenate([a, b], axis=1))
    result = faces.face_match(two, obama)
    assert not result.passed and "probe:TOO_MANY_FACES" in result.reasons
    assert result.faces_found["probe"] == 2


def test_small_blurry_and_partial_faces(obama):
    img = decode(obama)
    small = encode_jpeg(cv2.resize(img, (img.shape[1] // 5, img.shape[0] // 5)))
    analysis = faces.analyse(small)
    assert faces.FACE_TOO_SMALL in analysis.reasons or faces.NO_FACE_FOUND in analysis.reasons
    blurry = encode_jpeg(cv2.GaussianBlur(img, (0, 0), 6))
    analysis = faces.analyse(blurry)
    assert faces.FACE_TOO_BLURRY in analysis.reasons or faces.NO_FACE_FOUND in analysis.reasons
    result = faces.face_match(image("obama_partial_face.jpg"), obama)
    assert result.face_occluded and not result.passed
    assert "probe:FACE_OCCLUDED" in result.reasons


def test_not_an_image():
    result = faces.face_match(b"GIF89a....", b"\x00" * 10)
    assert not result.passed and "probe:UNREADABLE_IMAGE" in result.reasons
