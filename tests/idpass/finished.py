"""A finished IDPass for the tests that read one (the portal's page, the certificate, the review event): what the
hosted flow leaves behind (app/api/examples.py's IDPASS), then the end through `services.close`."""
from __future__ import annotations

from sqlalchemy import select

from app.extensions import db

DESCRIPTIONS = {
    "passed": "Every document was verified with its issuer, the face matched each document's photo and the liveness "
              "challenge was passed.",
    "review": "The face comparison with a document's photo is uncertain.",
    "failed": "The face did not match the document's photo.",
}
REASONS = {"passed": [], "review": ["FACE_UNCERTAIN"], "failed": ["FACE_MISMATCH"]}
FACES = {"passed": (0.91, True), "review": (0.62, False), "failed": (0.18, False)}


def finish(app, idpass_uuid, *, verdict: str = "passed", reasons: list[str] | None = None,
           document_photos: list[bytes] | None = None, selfie: bool = True) -> dict:
    """Consent, a passport read from its MRZ (the person corrected the first name), verified with its issuer, the
    face compared, a selfie with its liveness, then closed with `verdict`. `document_photos`: the passport's
    attempts in order (default: one generated passport page; [] for none). Returns the stored images' ids and the
    selfie's bytes."""
    from app.core.transactions import commit
    from app.core.types import utcnow
    from app.core.uploads import clean_image
    from app.idpass import images, services
    from app.idpass.models import IdPass
    from tests.idpass.images import passport_jpeg, portrait_jpeg
    photos = [passport_jpeg()] if document_photos is None else document_photos
    similarity, matched = FACES[verdict]
    with app.app_context():
        idpass = db.session.scalar(select(IdPass).where(IdPass.uuid == idpass_uuid))
        documents = [images.store(idpass, "document_1", clean_image(p), attempt=i)
                     for i, p in enumerate(photos, start=1)]
        portrait = clean_image(portrait_jpeg())
        stored_selfie = images.store(idpass, "selfie", portrait) if selfie else None
        now = utcnow()
        idpass.status, idpass.opened_at, idpass.consent_given_at = "in_progress", now, now
        idpass.consent = {"given": True, "wording_version": "idpass-2026-11", "language": "en",
                          "wording": "I agree that Bar Bank of Wombats checks my identity documents with their "
                                     "issuers and compares my face with their photos."}
        idpass.record("consent_given", "Consent given (idpass-2026-11, en).")
        idpass.document_summary = {"document_1": {
            "document_type": "passport", "document_type_name": "Australian passport", "status": "verified",
            "attempts": max(len(photos), 1), "read_method": "mrz", "mrz_valid": True,
            "fields": {"first_name": "HARRIET", "last_name": "WOMBATSON", "dob": "1990-02-14",
                       "document_number": "••••••567", "expiry_date": "2031-04-02"},
            "changes": [{"field": "first_name", "read": "HARRLET", "confirmed": "HARRIET"}],
            "verification": {"outcome": "pass", "check_type": "dvs", "result_code": "Y"},
            "face": {"compared": True, "similarity": similarity, "threshold": 0.73, "matched": matched,
                     "face_occluded": False}}}
        idpass.validation_summary = {"document_verified": True, "face_matched": matched, "identity_consistent": True,
                                     "requested_identity_match": True,
                                     "liveness": {"checked": True, "passed": True, "confidence": 0.86, "attempts": 1,
                                                  "reasons": []}}
        idpass.requested_identity_mismatch = False
        services.close(idpass, "complete", verdict, REASONS[verdict] if reasons is None else reasons,
                       DESCRIPTIONS[verdict])
        commit()
        return {"documents": [d.id for d in documents], "selfie": stored_selfie.id if stored_selfie else None,
                "selfie_bytes": portrait.data}
