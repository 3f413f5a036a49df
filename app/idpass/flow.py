"""The hosted flow: what the person does at the link, step by step, and what each step records.

Steps: welcome -> consent -> document_1 [-> document_2 -> document_3] -> selfie (with liveness, when asked) ->
id_photo (when asked) -> finish. Each document step: pick one of the allowed types, photograph it (or upload a
photo), confirm or correct what was read (a passport's MRZ, a licence's or card's printed fields) or type the
document's details, then the issuer verifies them; at most MAX_DOCUMENT_ATTEMPTS failed verifications, after which
the IDPass ends `failed`. The selfie answers a head-turn challenge chosen by the server (one per attempt, kept
across reloads, so a reload never rerolls it), at most MAX_LIVENESS_ATTEMPTS; after the last failed one the flow
goes on and the verdict is `review`.

Every function takes the IdPass locked for update (`for_token`) and plain values, and flushes; the hosted route
commits. What the person sees is in `progress` (private) and `document_summary` (the API's, numbers masked)."""
from __future__ import annotations

import re
import time
from typing import Any

from flask import current_app

from app import signals
from app.core.types import utcnow
from app.core.uploads import ImageRejected, clean_image
from app.idpass import images, rules, services
from app.idpass.models import IdPass
from app.providers.base import ProviderError
from app.providers.id_base import IdRequest
from app.providers.id_types import ID_TYPES, IDPASS_DOCUMENTS, masked, validate_data

# The ID types whose front is read by OCR (IDPASS_DOCUMENTS' `ocr` reading), and the card kind app.vision.cards reads.
CARD_KINDS = {"drivers_licence": "licence", "medicare": "medicare", "nz_drivers_licence": "nz_licence"}
CHECK_BELOW = 0.8            # a field read with less confidence is marked "check this one" on the confirm page
NAME_FIELDS = ("first_name", "middle_name", "last_name")
MAX_DOCUMENT_ATTEMPTS = 3
MAX_LIVENESS_ATTEMPTS = 3
CONSENT_VERSION = "idpass-2026-11"
LANGUAGES = ("en",)


class FlowError(Exception):
    """Something the person can fix or retry (a photo that is not an image, a blurry MRZ, the issuer's service
    not answering): said on the page, nothing counted."""

    def __init__(self, message: str, code: str = "retry"):
        super().__init__(message)
        self.message = message
        self.code = code


def consent_wording(idpass: IdPass) -> str:
    return (f"I agree that {idpass.requester_name} verifies my identity: my identity documents' details are checked "
            "with their issuers or official record holders through the Australian Document Verification Service "
            "(or the New Zealand equivalents), photos of my documents and of my face are taken and compared, and the "
            f"result is shared with {idpass.requester_name}. I can stop at any time by closing this page.")


def sequence(idpass: IdPass) -> list[str]:
    return ["welcome", "consent", *idpass.steps, *(["selfie"] if idpass.check_liveness else []),
            *(["id_photo"] if idpass.require_id_photo else []), "finish"]


def current_step(idpass: IdPass) -> str:
    if idpass.status == "new":
        return "welcome"
    return (idpass.progress or {}).get("step") or "consent"


def _progress(idpass: IdPass) -> dict[str, Any]:
    return dict(idpass.progress or {})


def _advance(idpass: IdPass, progress: dict[str, Any]) -> None:
    order = sequence(idpass)
    step = progress.get("step") or "consent"
    progress["step"] = order[order.index(step) + 1]
    idpass.progress = progress


def _require(idpass: IdPass, step: str) -> None:
    if current_step(idpass) != step:
        raise FlowError("This step is already done or not yet reached: the page has been refreshed.", "stale")


# ---------------------------------------------------------------- welcome and consent

def open_link(idpass: IdPass, *, user_agent: str | None = None) -> None:
    if idpass.status != "new":
        return
    idpass.status = "opened"
    signals.announce(idpass, "idpass.updated")
    idpass.opened_at = utcnow()
    idpass.progress = {**_progress(idpass), "step": "consent"}
    idpass.record("opened", "The person opened the link and passed the welcome page.",
                  device=(user_agent or "")[:200] or None)


def give_consent(idpass: IdPass, *, agreed: bool, language: str) -> None:
    _require(idpass, "consent")
    if not agreed:
        raise FlowError("Tick the box to agree, or close this page to stop.", "consent")
    now = utcnow()
    idpass.status = "in_progress"
    signals.announce(idpass, "idpass.updated")
    idpass.consent_given_at = now
    idpass.consent = {"given": True, "given_at": now.isoformat(), "wording": consent_wording(idpass),
                      "wording_version": CONSENT_VERSION, "language": language,
                      "privacy_policy_url": idpass.privacy_policy_url}
    progress = _progress(idpass)
    progress["step"] = "consent"
    _advance(idpass, progress)
    idpass.record("consent_given", f"Consent given (wording {CONSENT_VERSION}, {language}).")


# ---------------------------------------------------------------- documents

def document_state(idpass: IdPass, step: str) -> dict[str, Any]:
    return dict(((idpass.progress or {}).get("documents") or {}).get(step) or {})


def _save_document(idpass: IdPass, step: str, state: dict[str, Any]) -> None:
    progress = _progress(idpass)
    progress["documents"] = {**(progress.get("documents") or {}), step: state}
    idpass.progress = progress


def _summary(idpass: IdPass, step: str, **values) -> None:
    summary = dict(idpass.document_summary or {})
    summary[step] = {**(summary.get(step) or {}), **values}
    idpass.document_summary = summary


def choose_document(idpass: IdPass, step: str, document_type: str) -> None:
    _require(idpass, step)
    if document_type not in idpass.document_allowed_types.get(step, []):
        raise FlowError("Pick one of the documents listed.", "choose")
    state = document_state(idpass, step)
    state.update({"type": document_type, "stage": "photo", "read": None, "mrz_valid": None, "ocr": None})
    _save_document(idpass, step, state)
    doc = IDPASS_DOCUMENTS[document_type]
    if doc.reading == "ocr":
        from app.vision.cards import warm_up
        warm_up()   # the reader's models load while the person takes the photo
    _summary(idpass, step, document_type=document_type, document_type_name=doc.label, status="pending",
             attempts=state.get("attempts", 0), read_method=doc.reading)


def submit_document_photo(idpass: IdPass, step: str, raw: bytes) -> dict[str, Any]:
    """Keep the photo (cleaned, encrypted) and read what can be read from it: a passport's MRZ, a licence's or
    card's printed fields. Returns the fields read, to be confirmed."""
    _require(idpass, step)
    state = document_state(idpass, step)
    if state.get("stage") not in ("photo", "confirm"):
        raise FlowError("Pick the document first.", "stale")
    try:
        image = clean_image(raw)
    except ImageRejected as exc:
        raise FlowError(exc.message, exc.code) from None
    doc = IDPASS_DOCUMENTS[state["type"]]
    state["photos"] = state.get("photos", 0) + 1
    images.store(idpass, step, image, attempt=state["photos"])
    read, mrz_valid, found, ocr = None, None, None, None
    if doc.reading == "ocr":
        read, ocr = card_fields(doc.id_type, image.data, person=idpass.requested_identity)
    if doc.reading == "mrz":
        from app.vision.mrz import VisionUnavailable, read_mrz
        try:
            result = read_mrz(image.data)
        except VisionUnavailable as exc:
            current_app.logger.error("MRZ reader unavailable: %s", exc)
            result = None
        if result is not None:
            read, mrz_valid = mrz_fields(doc.id_type, result), result.valid
            found = {"format": result.format, "valid": result.valid, "failed_checks": result.failed_checks,
                     "method": result.method, "confidence": result.confidence}
    state.update({"stage": "confirm", "read": read, "mrz_valid": mrz_valid, "ocr": ocr})
    _save_document(idpass, step, state)
    if doc.reading == "ocr":
        _summary(idpass, step, read_method="ocr" if read else "typed (card not read)",
                 ocr={k: v for k, v in (ocr or {}).items() if k not in ("notes", "said")})
    else:
        _summary(idpass, step, mrz_valid=mrz_valid, mrz=found,
                 read_method=doc.reading if doc.reading != "mrz" or read else "typed (MRZ not read)")
    what = {"mrz": ("its MRZ was read" + ("" if mrz_valid else " but its check digits failed"),
                    "no MRZ could be read from it"),
            "ocr": (f"{len(read or {})} of its fields were read", "none of its fields could be read")}
    said = what.get(doc.reading)
    idpass.record("document_photo", f"{doc.label}: photo {state['photos']} received" + (
        f"; {said[0] if read else said[1]}" if said else "") + ".", step=step)
    return read or {}


def card_fields(id_type: str, data: bytes, *, person: dict | None = None) -> tuple[dict[str, str], dict | None]:
    """A licence's or card's fields read from its photo, as the ID type's data (those the confirm page shows), and
    what the page and the record say about the reading: each field's confidence, the fields not read and why, the
    photo's problems, the card's expiry. ({}, None) when the reader is not installed (the person types)."""
    from app.vision.cards import REASONS, OcrUnavailable, read_card
    started = time.perf_counter()
    try:
        reading = read_card(data, CARD_KINDS[id_type], person=person)
    except OcrUnavailable as exc:
        current_app.logger.error("Card reader unavailable: %s", exc)
        return {}, None
    schema = ID_TYPES[id_type].data.model_fields
    read = {k: f.value for k, f in reading.fields.items() if k in schema}
    notes = {k: "Not read from the photo (" + REASONS.get(code, code) + "): type it as printed." if code !=
             "CHECK_FAILED" else "Read, but it does not look right: check it against the card."
             for k, code in reading.unread.items() if k in schema}
    notes.update({k: "Hard to read on the photo: check it against the card." for k, f in reading.fields.items()
                  if k in read and f.confidence < CHECK_BELOW and k not in notes})
    expiry = reading.fields.get("expiry_date") or reading.fields.get("card_expiry")
    info = {"confidence": {k: c for k, c in reading.confidences().items() if k in read},
            "unread": {k: v for k, v in reading.unread.items() if k in schema}, "problems": reading.problems,
            "card_found": reading.card_found, "expiry": expiry.value if expiry else None,
            "others_on_card": len(reading.others), "ms": round((time.perf_counter() - started) * 1000),
            "notes": notes, "said": [REASONS.get(p, p) for p in reading.problems if p != "CARD_NOT_FOUND"]}
    current_app.logger.info("Card read (%s): %d fields in %d ms, problems %s", id_type, len(read), info["ms"],
                            ",".join(reading.problems) or "none")
    return read, info


def _same(field: str, read: Any, confirmed: Any) -> bool:
    """Is a confirmed value the one read? Names as the rules compare them (case, accents, hyphens), other values
    (numbers, dates) without their spaces and dashes, in upper case."""
    if field in NAME_FIELDS:
        return rules.name_key(str(read or "")) == rules.name_key(str(confirmed or ""))
    def plain(value: Any) -> str:
        return re.sub(r"[\s\-/.]+", "", str(value or "")).upper()
    return plain(read) == plain(confirmed)


def mrz_fields(id_type: str, mrz) -> dict[str, str]:
    """An MRZ's fields as the ID type's data (names title-cased as a person writes them)."""
    given = mrz.given_names.split()
    fields = {"first_name": given[0].title() if given else "", "middle_name": " ".join(given[1:]).title() or None,
              "last_name": mrz.surname.title(), "birth_date": mrz.birth_date}
    if id_type == "passport":
        fields.update(gender=mrz.sex if mrz.sex in ("M", "F") else "X", document_number=mrz.document_number)
    elif id_type == "visa":
        fields.update(passport_number=mrz.document_number, country_of_issue=mrz.issuing_country)
    elif id_type == "nz_passport":
        fields.update(passport_number=mrz.document_number, expiry_date=mrz.expiry_date)
    return {k: v for k, v in fields.items() if v}


def confirm_document(idpass: IdPass, step: str, form: dict[str, Any]) -> str:
    """The person's confirmed details, verified with the issuer. Returns `verified`, `retry` (not verified, attempts
    left) or `failed` (the last attempt: the IDPass has ended). Field errors: Invalid keyed `data.<field>`."""
    _require(idpass, step)
    state = document_state(idpass, step)
    if state.get("stage") != "confirm":
        raise FlowError("Photograph the document first.", "stale")
    doc = IDPASS_DOCUMENTS[state["type"]]
    entry = ID_TYPES[doc.id_type]
    submitted = {k: (v.strip() if isinstance(v, str) else v) for k, v in form.items()
                 if k in entry.data.model_fields and v not in (None, "")}
    data = {k: v for k, v in validate_data(doc.id_type, submitted).model_dump(mode="json").items() if v is not None}
    read = state.get("read") or {}
    changes = [{"field": k, "read": read[k], "confirmed": data.get(k)} for k in read
               if not _same(k, read[k], data.get(k))]
    request = IdRequest(reference=f"{idpass.uuid}:{step}:{state.get('attempts', 0) + 1}", oac=idpass.oac_code,
                        requester_name=idpass.requester_name, sandbox=idpass.is_sandbox,
                        settings=dict(current_app.config))
    provider = entry.provider(sandbox=idpass.is_sandbox, settings=dict(current_app.config))
    try:
        answer = provider.verify(dict(data), request)
    except ProviderError as exc:
        current_app.logger.warning("IDPass %s %s: the issuer did not answer: %s", idpass.uuid, step, exc)
        raise FlowError("The document service did not answer. Nothing was counted: try again in a minute.",
                        "upstream") from None
    state["attempts"] = state.get("attempts", 0) + 1
    shown = masked(doc.id_type, data)
    shown_changes = [{**c, "read": masked(doc.id_type, {c["field"]: c["read"]})[c["field"]],
                      "confirmed": masked(doc.id_type, {c["field"]: c["confirmed"]})[c["field"]]} for c in changes]
    verification = {"outcome": answer.outcome, "check_type": entry.check_type, "summary": answer.outcome_summary,
                    "result_code": (answer.details or {}).get("verification_result_code")
                    or (answer.details or {}).get("match_status")}
    verified = answer.outcome == "pass"
    _summary(idpass, step, status="verified" if verified else "not_verified", attempts=state["attempts"],
             fields=shown, changes=shown_changes, verification=verification,
             mrz_changed=bool(changes) and state.get("mrz_valid") is True,
             identity={k: data.get(k) for k in ("first_name", "middle_name", "last_name", "birth_date")},
             verified_at=utcnow().isoformat() if verified else None)
    idpass.record("document_verified" if verified else "document_not_verified",
                  f"{doc.label}: {'verified' if verified else 'not verified'} by the issuer (attempt "
                  f"{state['attempts']} of {MAX_DOCUMENT_ATTEMPTS}).", step=step)
    if verified:
        state["stage"] = "done"
        _save_document(idpass, step, state)
        progress = _progress(idpass)
        progress["step"] = step
        _advance(idpass, progress)
        return "verified"
    if state["attempts"] >= MAX_DOCUMENT_ATTEMPTS:
        _save_document(idpass, step, state)
        _end(idpass, ended="failed")
        return "failed"
    state["stage"] = "confirm"
    _save_document(idpass, step, state)
    return "retry"


# ---------------------------------------------------------------- selfie and liveness

def challenge(idpass: IdPass):
    """The liveness challenge of the current attempt: issued once and kept until it is answered or runs out."""
    from app.vision.liveness import Challenge, new_challenge
    progress = _progress(idpass)
    live = dict(progress.get("liveness") or {})
    now_ms = int(time.time() * 1000)
    current = Challenge.from_dict(live["challenge"]) if live.get("challenge") else None
    if current is None or now_ms > current.issued_at_ms + current.valid_for_ms:
        current = new_challenge(now_ms=now_ms)
        live["challenge"] = current.to_dict()
        progress["liveness"] = live
        idpass.progress = progress
    return current


def submit_selfie(idpass: IdPass, frames: list[tuple[int, bytes]]) -> str:
    """A burst of frames answering the challenge. Returns `passed`, `retry` or `done_failed` (the last attempt
    failed: the flow goes on, the verdict will be review). The most frontal sharp frame is kept as the selfie and
    compared with each document's photo."""
    from app.vision.faces import face_match
    from app.vision.liveness import check_liveness
    _require(idpass, "selfie")
    current = challenge(idpass)
    cleaned = []
    for ts, raw in frames[:90]:
        try:
            cleaned.append((int(ts), clean_image(raw, max_bytes=2 * 1024 * 1024)))
        except (ImageRejected, ValueError):
            raise FlowError("The camera's frames could not be read: try again.", "frames") from None
    progress = _progress(idpass)
    live = dict(progress.get("liveness") or {})
    seen = set(live.get("hashes") or [])
    result = check_liveness(current, [(ts, img.data) for ts, img in cleaned], now_ms=int(time.time() * 1000),
                            seen_hashes=seen)
    live["attempts"] = live.get("attempts", 0) + 1
    live["hashes"] = sorted(seen | set(result.frame_hashes))[-2000:]
    live["challenge"] = None  # one answer per challenge
    live.update(passed=result.passed, confidence=result.confidence, reasons=result.reasons,
                observed_turns=result.observed_turns, asked_turns=list(current.turns))
    progress["liveness"] = live
    idpass.progress = progress
    last = live["attempts"] >= MAX_LIVENESS_ATTEMPTS
    idpass.record("liveness_passed" if result.passed else "liveness_failed",
                  f"Liveness attempt {live['attempts']}: " + ("passed" if result.passed else
                                                               "not passed (" + ", ".join(result.reasons) + ")")
                  + f", confidence {result.confidence:.2f}.")
    if not result.passed and not last:
        return "retry"
    if result.best_frame is not None:
        selfie = cleaned[result.best_frame][1]
        images.store(idpass, "selfie", selfie, attempt=live["attempts"])
        for step in idpass.steps:
            doc = IDPASS_DOCUMENTS.get((document_state(idpass, step) or {}).get("type") or "")
            photo = images.current(idpass, step)
            if doc is None or not doc.has_photo or photo is None:
                continue
            match = face_match(selfie.data, images.read(photo))
            _summary(idpass, step, face={
                "compared": match.similarity is not None, "similarity": match.similarity,
                "threshold": match.threshold, "matched": match.passed, "distance": match.distance,
                "face_occluded": match.face_occluded, "reasons": match.reasons})
    progress = _progress(idpass)
    progress["step"] = "selfie"
    _advance(idpass, progress)
    return "passed" if result.passed else "done_failed"


def submit_id_photo(idpass: IdPass, raw: bytes) -> None:
    from app.vision.faces import analyse
    _require(idpass, "id_photo")
    try:
        image = clean_image(raw)
    except ImageRejected as exc:
        raise FlowError(exc.message, exc.code) from None
    found = analyse(image.data, with_embedding=False)
    if len(found.faces) != 1:
        raise FlowError("The photo must show one face, yours, looking at the camera." if found.faces else
                        "No face was found: face the camera in good light and try again.", "face")
    images.store(idpass, "id_photo", image)
    _summary(idpass, "id_photo", status="captured", captured_at=utcnow().isoformat(), purpose=idpass.id_photo_purpose)
    idpass.record("id_photo", "ID photo taken.")
    progress = _progress(idpass)
    progress["step"] = "id_photo"
    _advance(idpass, progress)


# ---------------------------------------------------------------- the end

def finish(idpass: IdPass) -> None:
    _require(idpass, "finish")
    _end(idpass, ended="complete")


def _end(idpass: IdPass, *, ended: str) -> None:
    """Close the IDPass with the verdict of what its steps found: `complete` after the last step, `failed` when a
    document step ran out of attempts."""
    summary = idpass.document_summary or {}
    if ended == "complete":
        documents = [dict(summary.get(step) or {"status": "not_verified"}) for step in idpass.steps]
    else:
        documents = [dict(summary[step]) for step in idpass.steps if summary.get(step)]
    live = (idpass.progress or {}).get("liveness") or {}
    liveness = ({"checked": True, "passed": bool(live.get("passed")), "confidence": live.get("confidence"),
                 "attempts": live.get("attempts", 0), "reasons": live.get("reasons") or []}
                if idpass.check_liveness and ended == "complete" else None)
    for d in documents:  # a document with a photo that could not be compared with a selfie (none was usable)
        if liveness and d.get("document_type") and IDPASS_DOCUMENTS[d["document_type"]].has_photo \
                and not d.get("face"):
            d["face"] = {"compared": False}
    status, reasons, description, validation = rules.verdict(documents, liveness=liveness,
                                                             requested=idpass.requested_identity)
    if ended == "failed":
        status, description = "failed", "A document could not be verified with its issuer in " \
                                        f"{MAX_DOCUMENT_ATTEMPTS} attempts. " + description
    idpass.validation_summary = validation
    idpass.requested_identity_mismatch = validation["requested_identity_match"] is False \
        if validation["requested_identity_match"] is not None else None
    progress = _progress(idpass)
    progress["step"] = "done"
    idpass.progress = progress
    services.close(idpass, ended, status, reasons, description)


def for_token(token: str) -> IdPass | None:
    """The IDPass of a hosted link, locked for this request; None for an unknown or tampered token."""
    return services.find_by_token(token, for_update=True)

