"""An IDPass's images: cleaned on the way in (JPEG/PNG by content, size and pixel limits, metadata stripped:
`core.uploads.clean_image`), encrypted at rest in the blob storage (`core.storage.sealed`), one row each in
`idpass_images`, read back for the vision code, the analyst and (when the launch asked) the API; deleted when the
program's data retention runs out (`purge`)."""
from __future__ import annotations

from app.core.actor import Actor
from app.core.errors import NotFound
from app.core.storage import BlobNotFound, blob_storage, sealed
from app.core.types import utcnow
from app.core.uploads import CleanImage
from app.extensions import db
from app.idpass.models import IMAGE_TYPES, IdPass, IdPassImage
from app.idpass.queries import get_idpass


def _storage():
    return sealed(blob_storage())


def store(idpass: IdPass, image_type: str, image: CleanImage, *, attempt: int = 1) -> IdPassImage:
    """Keep an image of `image_type`; it becomes the current one of its type (earlier attempts stay, not current).
    The blob is written before the row: a failed transaction leaves at worst an orphan blob, never a row without
    its bytes (the retention purge deletes by prefix)."""
    assert image_type in IMAGE_TYPES or image_type.startswith("liveness_")
    ext = "png" if image.content_type == "image/png" else "jpg"
    key = f"idpass/{idpass.uuid}/{image_type}-{attempt}-{image.sha256[:16]}.{ext}"
    _storage().put(key, image.data, content_type=image.content_type)
    for old in idpass.images:
        if old.type == image_type and old.current:
            old.current = False
    row = IdPassImage(idpass=idpass, type=image_type, attempt=attempt, current=True, storage_key=key,
                      content_type=image.content_type, sha256=image.sha256, width=image.width, height=image.height,
                      size=len(image.data), created_at=utcnow())
    db.session.add(row)
    return row


def current(idpass: IdPass, image_type: str) -> IdPassImage | None:
    return next((i for i in idpass.current_images if i.type == image_type), None)


def read(row: IdPassImage) -> bytes:
    return _storage().get(row.storage_key)


def image_bytes(idpass: IdPass, image_type: str) -> tuple[bytes, str] | None:
    row = current(idpass, image_type)
    if row is None:
        return None
    try:
        return read(row), row.content_type
    except BlobNotFound:
        return None


def api_image(actor: Actor, idpass_uuid, image_type: str) -> tuple[bytes, str]:
    """An image for the API: only those named in the IDPass's `images` (return_verification_images)."""
    idpass = get_idpass(actor, idpass_uuid)
    found = image_bytes(idpass, image_type) if idpass.return_verification_images else None
    if found is None:
        raise NotFound("No such image: the IDPass has none of this type, was launched without "
                       "return_verification_images, or its images were deleted under the data retention.")
    return found


def portal_image(actor: Actor, idpass_uuid, image_id: int) -> tuple[bytes, str]:
    """Any stored image of the IDPass (every attempt), for the analyst reviewing it."""
    idpass = get_idpass(actor, idpass_uuid)
    row = next((i for i in idpass.images if i.id == image_id and i.purged_at is None), None)
    if row is None:
        raise NotFound("Image not found.")
    try:
        return read(row), row.content_type
    except BlobNotFound:
        raise NotFound("The image's bytes are gone.") from None


def purge(idpass: IdPass) -> int:
    """Delete every image of the IDPass (the data retention ran out); the rows stay as a record, marked purged."""
    now = utcnow()
    storage = _storage()
    n = 0
    for row in idpass.images:
        if row.purged_at is None:
            storage.delete(row.storage_key)
            row.purged_at = now
            n += 1
    storage.delete_prefix(f"idpass/{idpass.uuid}/")
    idpass.images_purged_at = now
    return n
