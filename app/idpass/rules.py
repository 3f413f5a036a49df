"""The verdict of a finished IDPass, from what its steps found: plain values in, `(verification_status, reasons,
description)` out. No database, no Flask: the rules are read here and nowhere else (docs/idpass.md).

- **failed**: a document step could not be verified with its issuer in its attempts (DOCUMENT_NOT_VERIFIED; the
  flow ends there with status `failed`), or the selfie is clearly someone else than a document's photo
  (FACE_MISMATCH: distance beyond FACE_MISMATCH_DISTANCE).
- **review** (verified, but a person must look): the liveness challenge was not passed in its attempts
  (LIVENESS_FAILED, with its own reasons such as FLAT_SURFACE), the face comparison is uncertain (FACE_UNCERTAIN:
  between the match threshold and the mismatch distance), could not be made (FACE_NOT_COMPARED: no usable face on
  the document or the selfie) or is occluded (FACE_OCCLUDED); the documents disagree on the person's name or date of
  birth (IDENTITY_INCONSISTENT); they name someone other than the identity requested
  (REQUESTED_IDENTITY_MISMATCH); the person changed what was read from a machine-readable zone whose check digits
  held (MRZ_FIELDS_CHANGED), the zone's check digits failed (MRZ_INVALID), or it could not be read and the details
  were typed (MRZ_NOT_READ: nothing then ties the photographed page to the details verified).
- **passed**: none of those: every document verified with its issuer, the face matched the photo on every document
  that has one, the liveness challenge passed (when asked), one identity throughout, the one requested.
"""
from __future__ import annotations

import re
from typing import Any

from anyascii import anyascii

FACE_MISMATCH_DISTANCE = 0.75   # dlib distance beyond which two faces are different people (impostors ≥ 0.76)

DESCRIPTIONS = {
    "DOCUMENT_NOT_VERIFIED": "A document could not be verified with its issuer.",
    "FACE_MISMATCH": "The selfie is not the person on a document's photo.",
    "LIVENESS_FAILED": "The liveness challenge was not passed.",
    "FACE_UNCERTAIN": "The face comparison with a document's photo is uncertain.",
    "FACE_NOT_COMPARED": "The face could not be compared with a document's photo.",
    "FACE_OCCLUDED": "The face is partly hidden on the selfie or a document.",
    "IDENTITY_INCONSISTENT": "The documents disagree on the person's name or date of birth.",
    "REQUESTED_IDENTITY_MISMATCH": "The documents name someone other than the identity requested.",
    "MRZ_FIELDS_CHANGED": "The person changed details read from a passport's machine-readable zone.",
    "MRZ_INVALID": "A machine-readable zone's check digits did not hold.",
    "MRZ_NOT_READ": "A passport's machine-readable zone could not be read: its details were typed.",
}
FAILING = ("DOCUMENT_NOT_VERIFIED", "FACE_MISMATCH")


def name_key(value: str | None) -> str:
    return re.sub(r"[^A-Z ]", "", anyascii(value or "").upper().replace("-", " ")).strip()


def same_person(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Do two sets of identity fields (first_name, last_name, birth_date or dob) name one person? Last names equal,
    the first given name equal (middle names and extra given names may be absent on one side), dates equal when
    both have one."""
    if name_key(a.get("last_name")) != name_key(b.get("last_name")):
        return False
    first_a, first_b = name_key(a.get("first_name")).split(), name_key(b.get("first_name")).split()
    if not first_a or not first_b or first_a[0] != first_b[0]:
        return False
    dob_a, dob_b = a.get("birth_date") or a.get("dob"), b.get("birth_date") or b.get("dob")
    return not (dob_a and dob_b and str(dob_a) != str(dob_b))


def verdict(documents: list[dict[str, Any]], *, liveness: dict[str, Any] | None,
            requested: dict[str, Any]) -> tuple[str, list[str], str, dict[str, Any]]:
    """`documents`: one per step, each {status: verified|not_verified, identity: {...confirmed fields},
    face: {compared, matched, distance, face_occluded} or None (no photo on it), mrz_valid, mrz_changed};
    `liveness`: {checked, passed, reasons} or None. Returns the status, reasons, a description and the summary."""
    reasons: list[str] = []
    if any(d.get("status") != "verified" for d in documents) or not documents:
        reasons.append("DOCUMENT_NOT_VERIFIED")
    faces = [d["face"] for d in documents if d.get("face")]
    for face in faces:
        if not face.get("compared"):
            reasons.append("FACE_NOT_COMPARED")
        elif face.get("distance") is not None and face["distance"] > FACE_MISMATCH_DISTANCE:
            reasons.append("FACE_MISMATCH")
        elif not face.get("matched"):
            reasons.append("FACE_UNCERTAIN")
        if face.get("face_occluded"):
            reasons.append("FACE_OCCLUDED")
    if liveness and liveness.get("checked") and not liveness.get("passed"):
        reasons.append("LIVENESS_FAILED")
    identities = [d["identity"] for d in documents if d.get("identity")]
    consistent = all(same_person(identities[0], other) for other in identities[1:]) if identities else True
    if not consistent:
        reasons.append("IDENTITY_INCONSISTENT")
    requested_match = all(same_person(requested, i) for i in identities) if identities else None
    if requested_match is False:
        reasons.append("REQUESTED_IDENTITY_MISMATCH")
    if any(d.get("mrz_changed") for d in documents):
        reasons.append("MRZ_FIELDS_CHANGED")
    if any(d.get("mrz_valid") is False for d in documents):
        reasons.append("MRZ_INVALID")
    if any(d.get("read_method") == "typed (MRZ not read)" for d in documents):
        reasons.append("MRZ_NOT_READ")
    reasons = list(dict.fromkeys(reasons))
    status = "failed" if any(r in FAILING for r in reasons) else "review" if reasons else "passed"
    if status == "passed":
        description = ("Every document was verified with its issuer" + (
            ", the face matched each document's photo" if faces else "") + (
            " and the liveness challenge was passed" if liveness and liveness.get("checked") else "") + ".")
    else:
        description = " ".join(DESCRIPTIONS[r] for r in reasons)
    summary = {
        "document_verified": "DOCUMENT_NOT_VERIFIED" not in reasons,
        "face_matched": (all(f.get("matched") for f in faces) if faces else None),
        "identity_consistent": consistent,
        "requested_identity_match": requested_match,
        "liveness": liveness or {"checked": False},
        "reasons": reasons,
    }
    return status, reasons, description, summary
