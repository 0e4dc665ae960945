from __future__ import annotations

from typing import Literal

from pydantic import Field

from officehub.kit.schemas import ApiModel


class EvidenceKeyOut(ApiModel):
    algorithm: Literal["Ed25519"] = "Ed25519"
    public_key_pem: str = Field(description="The office's evidence public key (SPKI, PEM)")
    fingerprint: str = Field(
        description="SHA-256 of the raw 32-byte public key, hex: compare it with the one a "
        "bundle's verification prints"
    )
