from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field
from typing_extensions import TypeAliasType

from officehub.kit.id_params import Id, ServerId
from officehub.kit.schemas import ApiModel, BodyModel
from officehub.kit.timeutil import Timestamp
from officehub.users.schemas import UserOut

ActorKind = TypeAliasType("ActorKind", Literal["user", "apikey"])


class InviteOut(ApiModel):
    token: str = Field(description="Shown once: only its hash is kept")
    invite_url: str
    expires_at: Timestamp


class PasswordResetCreate(BodyModel):
    user_id: Id


class PasswordResetOut(ApiModel):
    token: str = Field(description="Shown once: only its hash is kept")
    reset_url: str
    expires_at: Timestamp


class InviteAccept(BodyModel):
    token: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=1, max_length=200)


class LoginBody(BodyModel):
    email: str = Field(min_length=1, max_length=320)
    password: str = Field(min_length=1, max_length=200)


class SignedIn(ApiModel):
    user: UserOut
    csrf_token: str = Field(
        description="Send it in the X-CSRF-Token header of every change made with the session"
    )


class AcceptedOut(ApiModel):
    user: UserOut


class MeOut(ApiModel):
    kind: ActorKind
    id: ServerId = Field(description="The user's id, or the API key's")
    role: str | None = Field(description="The user's role; null for an API key")
    office_id: ServerId
    session_id: ServerId | None
    user: UserOut | None
    totp_active: bool = Field(
        description="The user has an active TOTP second factor (always false for an API key)"
    )
    scopes: list[str] = Field(
        description="What the caller may do: the API key's scopes, or the user's role's "
        "(a session holds its role's scopes, no more)"
    )


class SessionOut(ApiModel):
    id: ServerId
    current: bool
    user_agent: str | None
    created_at: Timestamp
    last_seen_at: Timestamp
    expires_at: Timestamp


class SessionEnded(ApiModel):
    id: ServerId


TotpCodeText = Annotated[
    str, Field(pattern=r"^[0-9]{6}$", description="The 6 digits the authenticator app shows")
]
RecoveryCodeText = Annotated[
    str, Field(min_length=1, max_length=64, description="One of the recovery codes (once)")
]


class TotpEnrolment(ApiModel):
    secret: str = Field(description="Base32; shown once, stored sealed")
    otpauth_uri: str = Field(description="For the authenticator app (a QR code of it)")


class TotpConfirm(BodyModel):
    code: TotpCodeText


def _only(field: str, absent: str) -> dict[str, Any]:
    """JSON Schema: ``field`` is sent (a string) and ``absent`` is not (or is null)."""
    return {
        "required": [field],
        "properties": {field: {"type": "string"}, absent: {"type": "null"}},
    }


class TotpProof(BodyModel):
    """A current code or a recovery code: one of the two."""

    SCHEMA_RULES: ClassVar[dict[str, Any]] = {
        "oneOf": [_only("code", "recoveryCode"), _only("recoveryCode", "code")]
    }

    code: TotpCodeText | None = None
    recovery_code: RecoveryCodeText | None = None


class LoginTotpBody(TotpProof):
    challenge: str = Field(min_length=1, max_length=200)


class RecoveryCodesOut(ApiModel):
    recovery_codes: list[str] = Field(description="Shown once: only their hashes are kept")


class TotpRequired(ApiModel):
    totp_required: Literal[True] = True
    challenge: str = Field(description="For POST /auth/login/totp: one use, 5 minutes")
    expires_at: Timestamp


class TotpState(ApiModel):
    user_id: ServerId
    totp_active: bool
