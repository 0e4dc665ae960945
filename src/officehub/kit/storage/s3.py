"""``S3Storage``: the storage interface over an S3-compatible bucket (AWS, MinIO, Ceph…),
so several hosts share files. Links are presigned ``GET`` URLs of the bucket.

Uploads stream as a multipart upload of 8 MiB parts (one ``PUT`` when smaller), so memory
stays bounded whatever the file's size; passing ``max_bytes`` aborts the upload, leaving
nothing behind.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import botocore.session
from aiobotocore.session import get_session
from botocore.config import Config
from botocore.exceptions import ClientError

from officehub.kit.config import Settings
from officehub.kit.errors import PayloadTooLarge
from officehub.kit.storage.base import Signer, is_valid_key, signing_secret

PART_BYTES = 8 * 1024 * 1024
_CHUNK = 64 * 1024


class S3Storage:
    def __init__(
        self,
        *,
        bucket: str,
        endpoint_url: str | None,
        region: str,
        access_key_id: str,
        secret_access_key: str,
        default_ttl_seconds: int,
        signer: Signer,
    ) -> None:
        self.bucket = bucket
        self.default_ttl_seconds = default_ttl_seconds
        self.signer = signer
        self._options: dict[str, Any] = {
            "region_name": region,
            "endpoint_url": endpoint_url or None,
            "aws_access_key_id": access_key_id or None,
            "aws_secret_access_key": secret_access_key or None,
            "config": Config(signature_version="s3v4", s3={"addressing_style": "path"}),
        }
        self._session = get_session()
        # Presigning is computation only: a plain botocore client does it without I/O.
        self._presigner = botocore.session.get_session().create_client("s3", **self._options)

    @classmethod
    def from_settings(cls, settings: Settings) -> S3Storage:
        return cls(
            bucket=settings.s3_bucket,
            endpoint_url=settings.s3_endpoint_url,
            region=settings.s3_region,
            access_key_id=settings.s3_access_key_id,
            secret_access_key=settings.s3_secret_access_key,
            default_ttl_seconds=settings.media_url_ttl_seconds,
            signer=Signer(signing_secret(settings)),
        )

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[Any]:
        async with self._session.create_client("s3", **self._options) as client:
            yield client

    @staticmethod
    def _checked(key: str) -> str:
        if not is_valid_key(key):
            raise ValueError(f"invalid storage key {key!r}")
        return key

    async def save(self, key: str, chunks: AsyncIterable[bytes], max_bytes: int) -> int:
        self._checked(key)
        size = 0
        buffer = bytearray()
        upload_id: str | None = None
        parts: list[dict[str, Any]] = []
        async with self._client() as client:
            try:
                async for chunk in chunks:
                    size += len(chunk)
                    if size > max_bytes:
                        raise PayloadTooLarge(
                            "File too large", details=f"The file may be at most {max_bytes} bytes"
                        )
                    buffer += chunk
                    if len(buffer) >= PART_BYTES:
                        if upload_id is None:
                            created = await client.create_multipart_upload(
                                Bucket=self.bucket, Key=key
                            )
                            upload_id = str(created["UploadId"])
                        part = await client.upload_part(
                            Bucket=self.bucket,
                            Key=key,
                            UploadId=upload_id,
                            PartNumber=len(parts) + 1,
                            Body=bytes(buffer),
                        )
                        parts.append({"PartNumber": len(parts) + 1, "ETag": part["ETag"]})
                        buffer.clear()
                if upload_id is None:
                    await client.put_object(Bucket=self.bucket, Key=key, Body=bytes(buffer))
                    return size
                if buffer:
                    part = await client.upload_part(
                        Bucket=self.bucket,
                        Key=key,
                        UploadId=upload_id,
                        PartNumber=len(parts) + 1,
                        Body=bytes(buffer),
                    )
                    parts.append({"PartNumber": len(parts) + 1, "ETag": part["ETag"]})
                await client.complete_multipart_upload(
                    Bucket=self.bucket,
                    Key=key,
                    UploadId=upload_id,
                    MultipartUpload={"Parts": parts},
                )
            except BaseException:
                if upload_id is not None:
                    await client.abort_multipart_upload(
                        Bucket=self.bucket, Key=key, UploadId=upload_id
                    )
                raise
        return size

    async def exists(self, key: str) -> bool:
        self._checked(key)
        async with self._client() as client:
            try:
                await client.head_object(Bucket=self.bucket, Key=key)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                    return False
                raise
        return True

    async def delete(self, key: str) -> bool:
        if not await self.exists(key):
            return False
        async with self._client() as client:
            await client.delete_object(Bucket=self.bucket, Key=key)
        return True

    async def delete_under(self, prefix: str) -> int:
        if not prefix.endswith("/"):
            return 0
        self._checked(prefix.rstrip("/"))
        removed = 0
        async with self._client() as client:
            pages = client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix
            )
            async for page in pages:
                keys = [{"Key": item["Key"]} for item in page.get("Contents", [])]
                if keys:
                    await client.delete_objects(Bucket=self.bucket, Delete={"Objects": keys})
                    removed += len(keys)
        return removed

    async def read(self, key: str) -> AsyncIterator[bytes]:
        self._checked(key)
        async with self._client() as client:
            response = await client.get_object(Bucket=self.bucket, Key=key)
            async with response["Body"] as body:
                while chunk := await body.read(_CHUNK):
                    yield chunk

    def url(self, key: str, ttl_seconds: int | None = None) -> str:
        ttl = self.default_ttl_seconds if ttl_seconds is None else ttl_seconds
        link: str = self._presigner.generate_presigned_url(
            "get_object", Params={"Bucket": self.bucket, "Key": self._checked(key)}, ExpiresIn=ttl
        )
        return link

    def verify_link(self, key: str, expires: int, signature: str) -> bool:
        """Links of this storage are the bucket's own; a service-signed ``/media`` link
        (made elsewhere with the same key) is still honoured."""
        return self.signer.verify(key, expires, signature)
