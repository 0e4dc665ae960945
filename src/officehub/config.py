from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Every setting is read from the environment with the prefix ``OFFICEHUB_``."""

    model_config = SettingsConfigDict(env_prefix="OFFICEHUB_", extra="ignore")

    database_url: str = Field(
        "sqlite+aiosqlite:///./data/officehub.db", description="SQLAlchemy async database URL"
    )
    data_dir: Path = Field(Path("./data"), description="Folder for the SQLite file and uploads")
    host: str = Field("127.0.0.1", description="Address the API listens on")
    port: int = Field(8000, description="Port the API listens on")
    log_level: str = Field("INFO", description="Log level (DEBUG, INFO, WARNING, ERROR)")
    public_url: str = Field(
        "http://127.0.0.1:8000", description="Base URL the service is reached at (signed links)"
    )
    signing_key: str = Field(
        "", description="Key for signed media links; generated under DATA_DIR when empty"
    )
    media_url_ttl_seconds: int = Field(
        7 * 24 * 3600, description="How long a signed media link stays valid"
    )
    webhook_allow_private: bool = Field(
        False, description="Allow webhook URLs that resolve to private or loopback addresses"
    )
    webhook_timeout_seconds: float = Field(10.0, description="Timeout of one webhook delivery")
    delivery_lease_seconds: float = Field(
        60.0, description="How long a worker holds a claimed delivery before others may retry it"
    )
    delivery_batch_size: int = Field(50, description="Deliveries a worker claims at once")
    delivery_concurrency: int = Field(20, description="Deliveries a worker sends at once")
    delivery_retention_days: int = Field(90, description="Days delivery records are kept")
    worker_poll_seconds: float = Field(1.0, description="How often an idle worker looks for work")
    db_pool_size: int = Field(10, description="PostgreSQL connection pool size")
    max_json_body_bytes: int = Field(1024 * 1024, description="Largest JSON body accepted")
    storage_backend: Literal["local", "s3"] = Field(
        "local", description="Where uploaded files live: the data folder or an S3 bucket"
    )
    s3_endpoint_url: str = Field("", description="S3-compatible endpoint (empty: AWS)")
    s3_bucket: str = Field("", description="Bucket of the S3 storage")
    s3_region: str = Field("us-east-1", description="Region of the S3 storage")
    s3_access_key_id: str = Field("", description="Access key of the S3 storage")
    s3_secret_access_key: str = Field("", description="Secret key of the S3 storage")
    whatsapp_api_url: str = Field(
        "https://graph.facebook.com/v21.0",
        description="Base URL of the official WhatsApp Cloud API (operator configuration)",
    )
    whatsapp_timeout_seconds: float = Field(10.0, description="Timeout of one platform call")
    dispatch_batch_size: int = Field(100, description="Outbound messages a worker claims at once")
    dispatch_concurrency: int = Field(10, description="Conversations a worker sends to at once")
    dispatch_lease_seconds: float = Field(
        120.0,
        description="How long a worker holds claimed outbound messages (at least what "
        "sending a whole batch can take)",
    )
    dispatch_max_attempts: int = Field(
        8, description="Sends of one message tried before it is FAILED (429 and 5xx only)"
    )


@lru_cache
def get_settings() -> Settings:
    return Settings()
