"""Fixtures of the coding-agent suite (scripts/agents-e2e.sh, `make test-agents`).

The script starts the real Switchboard on a fresh SQLite database and exports SWITCHBOARD_URL
and SWITCHBOARD_ROOT_TOKEN. The validating upstream (upstream.py) runs inside pytest, so the
tests read what it received directly. One channel per kind (Anthropic 14, OpenAI 1, Gemini 25)
points at it; each serves one model per agent, `<agent>-via-<kind>`, so the model an agent asks
for picks the channel.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest

from upstream import KEYS, Upstream

HERE = Path(__file__).resolve().parent
AGENTS = ("claude", "codex", "gemini")
# Channel kind -> (channel type, the protocol the upstream speaks to it).
KINDS = {"anthropic": 14, "openai": 1, "gemini": 25}
USER_QUOTA = 100_000_000


def model_for(agent: str, kind: str) -> str:
    return f"{agent}-via-{kind}"


def _env(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise pytest.UsageError(f"{name} is not set: run these tests with scripts/agents-e2e.sh (make test-agents)")
    return value.rstrip("/")


def call(http: httpx.Client, method: str, path: str, body: Any = None) -> Any:
    r = http.request(method, path, json=body)
    try:
        envelope = r.json()
    except ValueError:
        raise AssertionError(f"{method} {path} -> {r.status_code}: {r.text[:500]}") from None
    if r.status_code >= 400 or not envelope.get("success"):
        raise AssertionError(f"{method} {path} -> {r.status_code}: {envelope}")
    return envelope.get("data")


def wait_for(check: Callable[[], Any], what: str, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        last = check()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")
        time.sleep(0.1)


@dataclass
class Gateway:
    url: str
    admin: httpx.Client


@pytest.fixture(scope="session")
def upstream() -> Iterator[Upstream]:
    up = Upstream().start()
    yield up
    up.stop()


@pytest.fixture(scope="session")
def gateway(upstream: Upstream) -> Iterator[Gateway]:
    url = _env("SWITCHBOARD_URL")
    with httpx.Client(base_url=url, headers={"Authorization": _env("SWITCHBOARD_ROOT_TOKEN")}, timeout=30) as admin:
        models = [model_for(a, k) for a in AGENTS for k in KINDS]
        # Prices small enough that a request's reservation (Claude Code asks max_tokens 32000)
        # fits the user's quota many times.
        call(admin, "POST", "/api/prices/batch", {"prices": [
            {"model": m, "type": "tokens", "channel_type": 1, "input": 0.1, "output": 0.2} for m in models
        ]})
        for kind, channel_type in KINDS.items():
            data = call(admin, "POST", "/api/channel", {
                "name": f"agents-{kind}",
                "type": channel_type,
                "key": KEYS[kind],
                "base_url": upstream.url,
                "models": ",".join(model_for(a, kind) for a in AGENTS),
                "group": "default",
            })
            assert data["count"] == 1, data
        yield Gateway(url=url, admin=admin)


@dataclass
class User:
    id: int
    username: str
    key: str


@pytest.fixture
def user(gateway: Gateway) -> User:
    """A fresh user with one unlimited key: its consume logs are this test's."""
    username = f"a{uuid.uuid4().hex[:12]}"
    password = uuid.uuid4().hex
    created = call(gateway.admin, "POST", "/api/user", {"username": username, "password": password, "quota": USER_QUOTA})
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        call(http, "POST", "/api/user/login", {"username": username, "password": password})
        key = call(http, "POST", "/api/token", {"name": "agents", "remain_quota": 0, "unlimited_quota": True, "models": "", "expired_at": -1})
    return User(id=created["id"], username=username, key=key["key"])


def consume_logs(gateway: Gateway, user: User) -> list[dict]:
    """The user's consume logs (type 2), oldest first."""
    data = call(gateway.admin, "GET", f"/api/log?username={user.username}&type=2&size=100")
    return sorted(data["data"], key=lambda r: (r["created_at"], r["id"]))


def error_logs(gateway: Gateway, user: User) -> list[dict]:
    data = call(gateway.admin, "GET", f"/api/log?username={user.username}&type=5&size=100")
    return data["data"]


def package_versions() -> dict[str, str]:
    lock = json.loads((HERE / "package-lock.json").read_text())
    return {name.removeprefix("node_modules/"): p["version"] for name, p in lock["packages"].items() if name}


# ---------------------------------------------------------------------------------------------
# The matrix at the end of the run: agent x channel kind x case, with each failure's first line.

_matrix: dict[tuple[str, str, str], tuple[str, str]] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "agent" not in params or report.when not in ("setup", "call") or (report.when == "setup" and report.passed):
        return
    reason = ""
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        reason = (crash.message if crash else str(report.longrepr)).removeprefix("AssertionError: ").splitlines()[0]
    _matrix[(params["agent"], params["kind"], params["case"])] = ("pass" if report.passed else "FAIL", reason)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _matrix:
        return
    terminalreporter.section("agents x channel kinds")
    for (agent, kind, case), (result, reason) in sorted(_matrix.items()):
        terminalreporter.write_line(f"{result:4}  {agent:6} {kind:9} {case:6}  {reason}")
