"""Blob storage (app/core/storage.py): the same round-trip tests on the filesystem and on a real S3-compatible HTTP
server (moto's, in-process on 127.0.0.1, spoken to by boto3 over HTTP as a production bucket would be)."""
from __future__ import annotations

import os
import uuid

import pytest

from app.core.crypto import SealError
from app.core.storage import (BlobNotFound, BlobStorage, FileStorage, S3Storage, SealedStorage, blob_storage, sealed,
                              storage_from_config)

CREDENTIALS = {"region": "us-east-1", "access_key_id": "testing", "secret_access_key": "testing"}


@pytest.fixture(scope="module")
def s3_endpoint():
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def new_bucket(endpoint: str, **kwargs) -> S3Storage:
    bucket = f"blobs-{uuid.uuid4().hex[:12]}"
    storage = S3Storage(bucket, endpoint_url=endpoint, **CREDENTIALS, **kwargs)
    storage.client.create_bucket(Bucket=bucket)
    return storage


@pytest.fixture(params=["filesystem", "s3"])
def storage(request, tmp_path) -> BlobStorage:
    if request.param == "filesystem":
        return FileStorage(tmp_path / "blobs")
    return new_bucket(request.getfixturevalue("s3_endpoint"))


def test_round_trip(storage):
    assert isinstance(storage, BlobStorage)
    storage.put("sessions/42/document-front.jpg", b"\xff\xd8\xffjpeg bytes", content_type="image/jpeg")
    storage.put("top-level", b"", content_type="application/octet-stream")
    assert storage.get("sessions/42/document-front.jpg") == b"\xff\xd8\xffjpeg bytes"
    assert storage.get("top-level") == b""


def test_missing_key(storage):
    with pytest.raises(BlobNotFound):
        storage.get("sessions/1/nothing.jpg")
    storage.put("sessions/1/a.jpg", b"a", content_type="image/jpeg")
    with pytest.raises(KeyError):  # BlobNotFound is a KeyError
        storage.get("sessions/1")  # a "folder" is not a blob
    with pytest.raises(BlobNotFound):
        storage.get("sessions/1/a.jpg/deeper")


def test_overwrite(storage):
    storage.put("k/v.bin", b"first version, longer", content_type="application/octet-stream")
    storage.put("k/v.bin", b"second", content_type="application/octet-stream")
    assert storage.get("k/v.bin") == b"second"


def test_delete_is_idempotent(storage):
    storage.put("k/v.bin", b"x", content_type="application/octet-stream")
    storage.delete("k/v.bin")
    with pytest.raises(BlobNotFound):
        storage.get("k/v.bin")
    storage.delete("k/v.bin")
    storage.delete("never/was.bin")


def test_delete_prefix(storage):
    for key in ("sessions/4/a.jpg", "sessions/4/b/c.png", "sessions/42/a.jpg", "sessions/5/a.jpg", "other.bin"):
        storage.put(key, key.encode(), content_type="application/octet-stream")
    assert storage.delete_prefix("sessions/4/") == 2
    for gone in ("sessions/4/a.jpg", "sessions/4/b/c.png"):
        with pytest.raises(BlobNotFound):
            storage.get(gone)
    assert storage.get("sessions/42/a.jpg") == b"sessions/42/a.jpg"
    assert storage.delete_prefix("sessions/4/") == 0
    assert storage.delete_prefix("sessions/nothing-here/") == 0
    assert storage.delete_prefix("sessions/4") == 1  # a string prefix, as in S3: takes sessions/42/ too
    assert storage.get("sessions/5/a.jpg") == b"sessions/5/a.jpg"
    assert storage.get("other.bin") == b"other.bin"
    with pytest.raises(ValueError):
        storage.delete_prefix("")  # would remove everything


BAD_KEYS = ["", "/abs/path", "../escape", "a/../../escape", "a/..", "..", ".", "a/./b", "a//b", "a/", "a\\b",
            "a b", "naïve", "a\x00b", "%2e%2e/x", "~/x", "a/b?c"]


@pytest.mark.parametrize("key", BAD_KEYS)
def test_keys_that_could_escape_are_refused(storage, key):
    with pytest.raises(ValueError):
        storage.put(key, b"x", content_type="application/octet-stream")
    with pytest.raises(ValueError):
        storage.get(key)
    with pytest.raises(ValueError):
        storage.delete(key)


def test_file_storage_stays_in_its_root(tmp_path):
    storage = FileStorage(tmp_path / "root")
    storage.put("a/b.bin", b"x", content_type="application/octet-stream")
    with pytest.raises(ValueError):
        storage.put("../outside.bin", b"x", content_type="application/octet-stream")
    with pytest.raises(ValueError):
        storage.delete_prefix("../")
    assert not (tmp_path / "outside.bin").exists()
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["root", "root/a", "root/a/b.bin"]


def test_file_storage_writes_atomically(tmp_path):
    storage = FileStorage(tmp_path)
    storage.put("a/b.bin", b"one", content_type="application/octet-stream")
    storage.put("a/b.bin", b"two", content_type="application/octet-stream")
    assert os.listdir(tmp_path / "a") == ["b.bin"]  # no temporary file left behind
    assert (tmp_path / "a" / "b.bin").stat().st_mode & 0o077 == 0  # readable by the owner only


def test_file_storage_failed_write_leaves_the_old_blob(tmp_path, monkeypatch):
    storage = FileStorage(tmp_path)
    storage.put("a.bin", b"old", content_type="application/octet-stream")

    def crash(*args):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        storage.put("a.bin", b"new", content_type="application/octet-stream")
    monkeypatch.undo()
    assert storage.get("a.bin") == b"old"
    assert os.listdir(tmp_path) == ["a.bin"]


def test_file_storage_delete_prefix_removes_emptied_folders(tmp_path):
    storage = FileStorage(tmp_path)
    storage.put("s/1/a/b.bin", b"x", content_type="application/octet-stream")
    storage.put("s/2/a.bin", b"x", content_type="application/octet-stream")
    assert storage.delete_prefix("s/1/") == 1
    assert sorted(os.listdir(tmp_path / "s")) == ["2"]


def test_s3_prefix_and_content_type(s3_endpoint):
    tenant_a = new_bucket(s3_endpoint, prefix="idpass/")
    tenant_b = S3Storage(tenant_a.bucket, prefix="other", endpoint_url=s3_endpoint, **CREDENTIALS)
    tenant_a.put("s/1.jpg", b"a", content_type="image/jpeg")
    tenant_b.put("s/1.jpg", b"b", content_type="image/jpeg")
    head = tenant_a.client.head_object(Bucket=tenant_a.bucket, Key="idpass/s/1.jpg")
    assert head["ContentType"] == "image/jpeg"
    assert tenant_a.delete_prefix("s/") == 1
    assert tenant_b.get("s/1.jpg") == b"b"
    with pytest.raises(BlobNotFound):
        tenant_a.get("s/1.jpg")


def test_s3_delete_prefix_beyond_one_page(s3_endpoint):
    storage = new_bucket(s3_endpoint)
    storage.page_size = 3  # 1000 in use: the same paging, without a thousand requests to moto
    for i in range(8):
        storage.put(f"many/{i}", b"", content_type="application/octet-stream")
    storage.put("manyx", b"", content_type="application/octet-stream")
    calls = []
    storage.client.meta.events.register("before-call.s3.DeleteObjects", lambda **kw: calls.append(kw))
    assert storage.delete_prefix("many/") == 8
    assert len(calls) == 3
    assert storage.get("manyx") == b""
    storage.delete("manyx")
    assert storage.client.list_objects_v2(Bucket=storage.bucket).get("KeyCount") == 0


def test_sealed_round_trip(storage, app_ctx):
    box = sealed(storage)
    plaintext = b"\xff\xd8\xff" + b"PASSPORT P<UTOERIKSSON<<ANNA<MARIA" * 20
    box.put("sessions/7/passport.jpg", plaintext, content_type="image/jpeg")
    assert box.get("sessions/7/passport.jpg") == plaintext
    stored = storage.get("sessions/7/passport.jpg")
    assert b"ERIKSSON" not in stored and stored != plaintext
    assert sealed(box) is box
    box.delete("sessions/7/passport.jpg")
    with pytest.raises(BlobNotFound):
        box.get("sessions/7/passport.jpg")


def test_sealed_file_on_disk_holds_no_plaintext(tmp_path, app_ctx):
    box = sealed(FileStorage(tmp_path))
    box.put("s/1/selfie.png", b"\x89PNG\r\n\x1a\nsecret selfie pixels", content_type="image/png")
    raw = (tmp_path / "s" / "1" / "selfie.png").read_bytes()
    assert b"secret selfie" not in raw and b"PNG" not in raw
    assert box.get("s/1/selfie.png") == b"\x89PNG\r\n\x1a\nsecret selfie pixels"


def test_sealed_s3_object_is_opaque(s3_endpoint, app_ctx):
    inner = new_bucket(s3_endpoint)
    sealed(inner).put("a.jpg", b"\xff\xd8\xffsecret", content_type="image/jpeg")
    obj = inner.client.get_object(Bucket=inner.bucket, Key="a.jpg")
    assert obj["ContentType"] == "application/octet-stream"
    assert b"secret" not in obj["Body"].read()


def test_sealed_tampered_blob(tmp_path, app_ctx):
    inner = FileStorage(tmp_path)
    sealed(inner).put("a.bin", b"data", content_type="application/octet-stream")
    token = bytearray(inner.get("a.bin"))
    token[-5] ^= 1
    inner.put("a.bin", bytes(token), content_type="application/octet-stream")
    with pytest.raises(SealError):
        sealed(inner).get("a.bin")


def test_storage_from_config(tmp_path, s3_endpoint):
    fs = storage_from_config({"STORAGE_PATH": str(tmp_path / "x")})
    assert isinstance(fs, FileStorage) and fs.root == (tmp_path / "x").resolve()
    fs = storage_from_config({"STORAGE_BACKEND": "filesystem", "STORAGE_PATH": None}, instance_path=tmp_path)
    assert fs.root == (tmp_path / "blobs").resolve()
    s3 = storage_from_config({"STORAGE_BACKEND": "s3", "S3_BUCKET": "b", "S3_PREFIX": "p",
                              "S3_ENDPOINT_URL": s3_endpoint, "S3_REGION": "eu-west-1", "S3_ACCESS_KEY_ID": "k",
                              "S3_SECRET_ACCESS_KEY": "s"})
    assert isinstance(s3, S3Storage) and (s3.bucket, s3.prefix) == ("b", "p/")
    assert s3.client.meta.endpoint_url == s3_endpoint and s3.client.meta.region_name == "eu-west-1"
    with pytest.raises(ValueError):
        storage_from_config({"STORAGE_BACKEND": "s3"})
    with pytest.raises(ValueError):
        storage_from_config({"STORAGE_BACKEND": "ftp"})
    with pytest.raises(ValueError):
        storage_from_config({})


def test_blob_storage_is_made_once_per_app(app):
    saved = app.extensions.pop("blob_storage", None)
    try:
        with app.app_context():
            first = blob_storage()
        assert blob_storage(app) is first
        assert isinstance(first, FileStorage)
        expected = app.config.get("STORAGE_PATH") or os.path.join(app.instance_path, "blobs")
        assert str(first.root) == os.path.realpath(expected)
        assert isinstance(sealed(first), SealedStorage)
    finally:
        app.extensions.pop("blob_storage", None)
        if saved is not None:
            app.extensions["blob_storage"] = saved
