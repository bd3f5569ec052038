"""Fixtures for the SDK end-to-end tests (openai, anthropic, google-genai).

scripts/sdk-e2e.sh starts the real Switchboard and the mock upstream and exports:

- SWITCHBOARD_URL: e.g. http://127.0.0.1:PORT (no trailing slash)
- SWITCHBOARD_ROOT_TOKEN: root's access token (`Authorization: <token>` on /api)
- MOCK_UPSTREAM_URL: e.g. http://127.0.0.1:PORT (channel base URL, without /v1)

Everything a test needs (channels, users, keys, settings) is created through the management API
with unique names and removed or restored afterwards, so tests do not depend on each other.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import httpx
import openai
import pytest

# Every model the shared channel serves (each has a built-in price).
SHARED_MODELS = [
    "gpt-4o-mini",
    "gpt-4o",
    "text-embedding-3-small",
    "dall-e-3",
    "tts-1",
    "whisper-1",
    "omni-moderation-latest",
]
# Plenty for every request of one test (an image costs 20000, a transcription 3000).
USER_QUOTA = 10_000_000


def _env(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise pytest.UsageError(f"{name} is not set: run these tests with scripts/sdk-e2e.sh (make test-sdk)")
    return value.rstrip("/")


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def wait_for(check: Callable[[], Any], what: str, timeout: float = 5.0, interval: float = 0.05) -> Any:
    """Polls `check` until it returns a truthy value (ledger flushes are asynchronous)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        last = check()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")
        time.sleep(interval)


class ApiError(AssertionError):
    def __init__(self, method: str, path: str, response: httpx.Response):
        self.status = response.status_code
        try:
            self.body = response.json()
        except ValueError:
            self.body = response.text
        super().__init__(f"{method} {path} -> {self.status}: {self.body}")


def call(http: httpx.Client, method: str, path: str, body: Any = None) -> Any:
    """One management call; returns `data` of a successful envelope, raises ApiError otherwise."""
    r = http.request(method, path, json=body)
    try:
        envelope = r.json()
    except ValueError:
        raise ApiError(method, path, r) from None
    if r.status_code >= 400 or not envelope.get("success"):
        raise ApiError(method, path, r)
    return envelope.get("data")


@dataclass
class Env:
    url: str
    root_token: str
    mock_url: str

    @property
    def v1(self) -> str:
        return f"{self.url}/v1"


@pytest.fixture(scope="session")
def env() -> Env:
    return Env(
        url=_env("SWITCHBOARD_URL"),
        root_token=_env("SWITCHBOARD_ROOT_TOKEN"),
        mock_url=_env("MOCK_UPSTREAM_URL"),
    )


@pytest.fixture(scope="session")
def admin(env: Env) -> Iterator[httpx.Client]:
    """A management client authenticated as root with the access token."""
    with httpx.Client(base_url=env.url, headers={"Authorization": env.root_token}, timeout=30) as http:
        yield http


def sdk(env: Env, key: str) -> openai.OpenAI:
    """The official client against Switchboard; no SDK retries, so server behaviour shows."""
    return openai.OpenAI(api_key=key, base_url=env.v1, max_retries=0, timeout=30)


# ---------------------------------------------------------------------------------------------
# Channels


@pytest.fixture
def make_channel(admin: httpx.Client, env: Env) -> Iterator[Callable[..., int]]:
    """Creates channels to the mock upstream; deletes them when the test ends."""
    created: list[int] = []

    def make(models: list[str] | str, key: str = "sk-mock-ok", priority: int = 0, weight: int = 1,
             group: str = "default", name: str | None = None, channel_type: int = 1,
             model_mapping: dict[str, str] | None = None, config: dict[str, Any] | None = None) -> int:
        body = {
            "name": name or unique("sdk-e2e"),
            "type": channel_type,
            "key": key,
            "base_url": env.mock_url,
            "models": models if isinstance(models, str) else ",".join(models),
            "group": group,
            "priority": priority,
            "weight": weight,
        }
        if model_mapping:
            body["model_mapping"] = json.dumps(model_mapping)
        if config:
            body["config"] = config
        data = call(admin, "POST", "/api/channel", body)
        assert data["count"] == 1, data
        channel_id = data["ids"][0]
        created.append(channel_id)
        return channel_id

    yield make
    for channel_id in created:
        try:
            call(admin, "DELETE", f"/api/channel/{channel_id}")
        except ApiError as e:
            if e.status != 404:
                raise


@pytest.fixture(scope="session")
def shared_channel(admin: httpx.Client, env: Env) -> Iterator[int]:
    """One healthy channel in `default` for the common models, for the whole session."""
    data = call(admin, "POST", "/api/channel", {
        "name": unique("sdk-e2e-shared"),
        "type": 1,
        "key": "sk-mock-ok",
        "base_url": env.mock_url,
        "models": ",".join(SHARED_MODELS),
        "group": "default",
        "priority": 0,
        "weight": 1,
    })
    channel_id = data["ids"][0]
    yield channel_id
    call(admin, "DELETE", f"/api/channel/{channel_id}")


def channel(admin: httpx.Client, channel_id: int) -> dict:
    return call(admin, "GET", f"/api/channel/{channel_id}")


def all_channels(admin: httpx.Client) -> list[dict]:
    out: list[dict] = []
    page = 1
    while True:
        data = call(admin, "GET", f"/api/channel?page={page}&size=100")
        out.extend(data["data"])
        if len(out) >= data["total_count"] or not data["data"]:
            return out
        page += 1


# ---------------------------------------------------------------------------------------------
# Settings


@pytest.fixture
def set_option(admin: httpx.Client) -> Iterator[Callable[[str, Any], None]]:
    """Changes settings for one test and restores the previous values afterwards."""
    previous: dict[str, Any] = {}

    def set_(key: str, value: Any) -> None:
        if key not in previous:
            current = {o["key"]: o["value"] for o in call(admin, "GET", "/api/option")}
            previous[key] = current[key]
        call(admin, "PUT", "/api/option", {"key": key, "value": value})

    yield set_
    for key, value in previous.items():
        call(admin, "PUT", "/api/option", {"key": key, "value": value})


# ---------------------------------------------------------------------------------------------
# Users and keys


@dataclass
class Key:
    id: int
    key: str
    data: dict


@dataclass
class User:
    id: int
    username: str
    http: httpx.Client
    keys: list[Key] = field(default_factory=list)

    def me(self) -> dict:
        return call(self.http, "GET", "/api/user/self")

    def create_key(self, name: str | None = None, remain_quota: int = 0, unlimited_quota: bool = True,
                   models: str = "", expired_at: int = -1) -> Key:
        data = call(self.http, "POST", "/api/token", {
            "name": name or unique("key"),
            "remain_quota": remain_quota,
            "unlimited_quota": unlimited_quota,
            "models": models,
            "expired_at": expired_at,
        })
        assert data["key"].startswith("sk-"), data
        key = Key(id=data["id"], key=data["key"], data=data)
        self.keys.append(key)
        return key

    def update_key(self, key_id: int, **fields: Any) -> dict:
        return call(self.http, "PUT", "/api/token", {"id": key_id, **fields})

    def key_info(self, key_id: int) -> dict:
        return call(self.http, "GET", f"/api/token/{key_id}")

    def used_quota(self) -> int:
        return self.me()["used_quota"]

    def wait_used_quota(self, expected: int, timeout: float = 5.0) -> dict:
        """Waits until used_quota reaches `expected`, then checks it stays there (billed once)."""
        wait_for(lambda: self.used_quota() >= expected, f"used_quota >= {expected}", timeout)
        time.sleep(0.3)  # several ledger flushes (LEDGER_FLUSH_MS=50)
        me = self.me()
        assert me["used_quota"] == expected, f"used_quota {me['used_quota']}, expected {expected}"
        assert me["quota"] == USER_QUOTA - expected, f"quota {me['quota']}, expected {USER_QUOTA - expected}"
        return me


@pytest.fixture
def make_user(admin: httpx.Client, env: Env) -> Iterator[Callable[..., User]]:
    """Creates users (quota USER_QUOTA, group default) and signs each in with its own session."""
    users: list[User] = []

    def make(quota: int = USER_QUOTA) -> User:
        username = unique("u")[:20]
        password = uuid.uuid4().hex
        created = call(admin, "POST", "/api/user", {"username": username, "password": password, "quota": quota})
        http = httpx.Client(base_url=env.url, timeout=30)
        call(http, "POST", "/api/user/login", {"username": username, "password": password})
        user = User(id=created["id"], username=username, http=http)
        users.append(user)
        return user

    yield make
    for user in users:
        user.http.close()


@pytest.fixture
def user(make_user: Callable[..., User], shared_channel: int) -> User:
    """A fresh user; the shared channel exists."""
    return make_user()


@pytest.fixture
def key(user: User) -> Key:
    """An unlimited key of `user`, allowed every model."""
    return user.create_key()


@pytest.fixture
def client(env: Env, key: Key) -> openai.OpenAI:
    return sdk(env, key.key)
