"""Settings that follow other settings: the database in DATA_DIR, the public URL."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from officehub.kit.config import Settings, address_url
from officehub.kit.logs import chosen_format


def test_default_database_is_inside_the_data_dir(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", _env_file=None)
    assert settings.database_url == f"sqlite+aiosqlite:///{tmp_path / 'data' / 'officehub.db'}"
    assert settings.sqlite_path() == tmp_path / "data" / "officehub.db"


def test_public_url_defaults_to_the_served_address() -> None:
    settings = Settings(host="127.0.0.1", port=8123, _env_file=None)
    assert settings.public_url == "http://127.0.0.1:8123"
    served = settings.served_at(None, 9001)
    assert served.public_url == "http://127.0.0.1:9001" and served.port == 9001


def test_explicit_public_url_wins_over_the_served_address() -> None:
    settings = Settings(public_url="https://api.example.com/", _env_file=None)
    assert settings.served_at("0.0.0.0", 9001).public_url == "https://api.example.com"  # noqa: S104


def test_public_url_of_a_wildcard_or_ipv6_address() -> None:
    assert address_url("0.0.0.0", 8000) == "http://127.0.0.1:8000"  # noqa: S104
    assert address_url("::1", 8000) == "http://[::1]:8000"
    assert address_url("officehub.lan", 80) == "http://officehub.lan:80"


def test_logs_are_text_on_a_terminal_and_json_otherwise() -> None:
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as terminal:
        assert chosen_format("auto", terminal) == "text"
        assert chosen_format("json", terminal) == "json"
    os.close(leader)
    assert chosen_format("auto", io.StringIO()) == "json"
    assert chosen_format("text", io.StringIO()) == "text"


def test_trusted_proxies_must_be_addresses_or_networks() -> None:
    assert Settings(trusted_proxies=" 10.0.0.1, 172.28.0.0/24 ,").trusted_proxies == (
        "10.0.0.1,172.28.0.0/24"
    )
    assert Settings(trusted_proxies="").trusted_proxies == ""
    for bad in ("proxy.example", "10.0.0.1/8", "*"):
        with pytest.raises(ValidationError, match="trusted_proxies"):
            Settings(trusted_proxies=bad)
