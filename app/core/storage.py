"""Blob storage for the images of IDPass (ID document photos, selfies): one small interface with two
implementations, `FileStorage` (a directory: development, tests, a single server) and `S3Storage` (any
S3-compatible service: production), chosen by configuration (`STORAGE_BACKEND`, see `storage_from_config`).

Keys are relative paths of `[A-Za-z0-9._-]` segments separated by `/` (no `.`/`..` segment, no leading or
trailing `/`, no empty segment), checked the same way by both backends, so that a key can never reach outside a
`FileStorage` root and the two backends accept exactly the same keys.

The backends store bytes as given. What must be encrypted at rest goes through `sealed(storage)`, which seals
with `app.core.crypto` (Fernet, keys `ID_DATA_KEYS`): that wrapper needs a Flask application context, since the
keys are read from `current_app.config` at each call."""
from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from flask import Flask, current_app

from app.core.crypto import seal_bytes, unseal_bytes

_SEGMENT = re.compile(r"[A-Za-z0-9._-]+")
_TMP_SUFFIX = ".~tmp"   # `~` is never in a key: a temporary file cannot be taken for a blob


class BlobNotFound(KeyError):
    """No blob under this key."""


@runtime_checkable
class BlobStorage(Protocol):
    def put(self, key: str, data: bytes, *, content_type: str) -> None:
        """Store `data` under `key`, replacing what was there (readers see the old or the new blob, whole)."""

    def get(self, key: str) -> bytes:
        """The blob under `key`; raises BlobNotFound."""

    def delete(self, key: str) -> None:
        """Remove the blob under `key`; nothing happens when there is none."""

    def delete_prefix(self, prefix: str) -> int:
        """Remove every blob whose key starts with `prefix` (a plain string prefix, as S3 has it: pass
        "sessions/42/" rather than "sessions/42", which would also take "sessions/420/..."); the number removed.
        An empty prefix is refused (ValueError)."""


def check_key(key: str) -> str:
    """The key itself when it is a valid blob key, else ValueError."""
    if not isinstance(key, str) or not key:
        raise ValueError("a blob key is a non-empty string")
    for segment in key.split("/"):
        if not _SEGMENT.fullmatch(segment) or segment in (".", ".."):
            raise ValueError(f"invalid blob key {key!r}: segments of [A-Za-z0-9._-] separated by '/'")
    return key


def check_prefix(prefix: str) -> str:
    """A valid non-empty key prefix: a key, optionally followed by '/'."""
    if not isinstance(prefix, str) or not prefix:
        raise ValueError("an empty prefix would remove every blob: refused")
    check_key(prefix[:-1] if prefix.endswith("/") else prefix)
    return prefix


class FileStorage:
    """Blobs as files under `root` (created as needed). Writes go to a temporary file in the same directory,
    flushed to disk, then renamed over the target (`os.replace`, atomic on POSIX): a reader never sees half a
    blob, and a crash leaves at most a stray `*.~tmp` file. Files are created with mode 0600."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root).resolve()

    def __repr__(self) -> str:
        return f"FileStorage({str(self.root)!r})"

    def _path(self, key: str) -> Path:
        path = self.root.joinpath(*check_key(key).split("/"))
        if not path.is_relative_to(self.root):  # cannot happen with a checked key; kept as a second lock
            raise ValueError(f"invalid blob key {key!r}")
        return path

    def put(self, key: str, data: bytes, *, content_type: str) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=_TMP_SUFFIX)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise BlobNotFound(key) from None

    def delete(self, key: str) -> None:
        try:
            self._path(key).unlink()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            pass

    def delete_prefix(self, prefix: str) -> int:
        check_prefix(prefix)
        head, _, _ = prefix.rpartition("/")
        top = self.root.joinpath(*head.split("/")) if head else self.root
        if not top.is_dir():
            return 0
        removed = 0
        for dirpath, _dirnames, filenames in os.walk(top, topdown=False):
            for name in filenames:
                path = Path(dirpath, name)
                key = path.relative_to(self.root).as_posix()
                if key.startswith(prefix) and not name.endswith(_TMP_SUFFIX):
                    try:
                        path.unlink()
                        removed += 1
                    except FileNotFoundError:
                        pass
            directory = Path(dirpath)
            if directory != self.root and f"{directory.relative_to(self.root).as_posix()}/".startswith(prefix):
                try:
                    directory.rmdir()  # only when empty (a blob written meanwhile stays, and so does its folder)
                except OSError:
                    pass
        return removed


class S3Storage:
    """Blobs as objects of an S3 bucket (AWS, or any S3-compatible service given by `endpoint_url`: MinIO,
    Ceph, R2, ...), under `prefix` ("idpass" and "idpass/" are the same prefix). Credentials default to boto3's
    own chain (environment, instance profile, ...) when not given. With an `endpoint_url`, path-style addressing
    is used (what S3-compatible servers support everywhere)."""

    page_size = 1000  # keys listed, then deleted, per request: both ListObjectsV2's and DeleteObjects' maximum

    def __init__(self, bucket: str, *, prefix: str = "", endpoint_url: str | None = None, region: str | None = None,
                 access_key_id: str | None = None, secret_access_key: str | None = None, client: Any = None):
        if not bucket:
            raise ValueError("S3Storage needs a bucket")
        self.bucket = bucket
        prefix = prefix.strip("/")
        self.prefix = f"{check_key(prefix)}/" if prefix else ""
        if client is None:
            import boto3  # imported when used: boto3 takes a while to import, and only S3 deployments need it
            from botocore.config import Config as BotoConfig

            config = BotoConfig(signature_version="s3v4", retries={"max_attempts": 5, "mode": "standard"},
                                s3={"addressing_style": "path"} if endpoint_url else None)
            client = boto3.client("s3", endpoint_url=endpoint_url, region_name=region,
                                  aws_access_key_id=access_key_id, aws_secret_access_key=secret_access_key,
                                  config=config)
        self.client = client

    def __repr__(self) -> str:
        return f"S3Storage({self.bucket!r}, prefix={self.prefix!r})"

    def _name(self, key: str) -> str:
        return self.prefix + check_key(key)

    def put(self, key: str, data: bytes, *, content_type: str) -> None:
        self.client.put_object(Bucket=self.bucket, Key=self._name(key), Body=bytes(data), ContentType=content_type)

    def get(self, key: str) -> bytes:
        from botocore.exceptions import ClientError
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=self._name(key))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
                raise BlobNotFound(key) from None
            raise
        with response["Body"] as body:
            return body.read()

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._name(key))  # S3 answers 204 for a missing key

    def delete_prefix(self, prefix: str) -> int:
        full = self.prefix + check_prefix(prefix)
        removed = 0
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=full, PaginationConfig={"PageSize": self.page_size})
        for page in pages:
            keys = [{"Key": obj["Key"]} for obj in page.get("Contents", [])]
            if not keys:
                continue
            response = self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True})
            errors = response.get("Errors") or []
            if errors:
                raise OSError(f"S3 refused to delete {len(errors)} objects under {full!r}: {errors[0]}")
            removed += len(keys)
        return removed


class SealedStorage:
    """A BlobStorage that encrypts each blob (app.core.crypto.seal_bytes: Fernet with the newest ID_DATA_KEYS
    key) before handing it to `inner`, and decrypts on `get` (every configured key opens; SealError when none
    does). Needs a Flask application context on `put` and `get`. The inner storage is told
    "application/octet-stream", whatever `content_type` the caller gives: the stored object is a token, and its
    metadata says nothing of what it holds."""

    def __init__(self, inner: BlobStorage):
        self.inner = inner

    def __repr__(self) -> str:
        return f"SealedStorage({self.inner!r})"

    def put(self, key: str, data: bytes, *, content_type: str) -> None:
        self.inner.put(key, seal_bytes(bytes(data)), content_type="application/octet-stream")

    def get(self, key: str) -> bytes:
        return unseal_bytes(self.inner.get(key))

    def delete(self, key: str) -> None:
        self.inner.delete(key)

    def delete_prefix(self, prefix: str) -> int:
        return self.inner.delete_prefix(prefix)


def sealed(storage: BlobStorage) -> SealedStorage:
    """`storage` with every blob encrypted at rest (see SealedStorage; needs an app context to put and get)."""
    return storage if isinstance(storage, SealedStorage) else SealedStorage(storage)


def storage_from_config(config: Mapping[str, Any], *, instance_path: str | os.PathLike[str] | None = None
                        ) -> BlobStorage:
    """The storage the settings describe: STORAGE_BACKEND "filesystem" (the default; STORAGE_PATH, else
    `<instance_path>/blobs`) or "s3" (S3_BUCKET, S3_PREFIX, S3_ENDPOINT_URL, S3_REGION, S3_ACCESS_KEY_ID,
    S3_SECRET_ACCESS_KEY). ValueError for an unknown backend or a missing bucket/path."""
    backend = (config.get("STORAGE_BACKEND") or "filesystem").strip().lower()
    if backend == "filesystem":
        path = config.get("STORAGE_PATH") or (Path(instance_path) / "blobs" if instance_path else None)
        if not path:
            raise ValueError("STORAGE_BACKEND=filesystem needs STORAGE_PATH (or an instance path)")
        return FileStorage(path)
    if backend == "s3":
        if not config.get("S3_BUCKET"):
            raise ValueError("STORAGE_BACKEND=s3 needs S3_BUCKET")
        return S3Storage(config["S3_BUCKET"], prefix=config.get("S3_PREFIX") or "",
                         endpoint_url=config.get("S3_ENDPOINT_URL") or None, region=config.get("S3_REGION") or None,
                         access_key_id=config.get("S3_ACCESS_KEY_ID") or None,
                         secret_access_key=config.get("S3_SECRET_ACCESS_KEY") or None)
    raise ValueError(f"unknown STORAGE_BACKEND {backend!r}: 'filesystem' or 's3'")


def blob_storage(app: Flask | None = None) -> BlobStorage:
    """The app's storage (unsealed: wrap it with `sealed` for what must be encrypted), made once from its config
    and kept in `app.extensions["blob_storage"]`. Without `app`, the current app."""
    app = app or current_app._get_current_object()  # type: ignore[attr-defined]
    storage = app.extensions.get("blob_storage")
    if storage is None:
        storage = app.extensions["blob_storage"] = storage_from_config(app.config, instance_path=app.instance_path)
    return storage
