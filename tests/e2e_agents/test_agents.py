"""Real coding agents against Switchboard: Claude Code (`claude -p`, Anthropic Messages), Codex
(`codex exec`, OpenAI Responses) and Gemini CLI (`gemini -p`, Gemini generateContent), each
through an Anthropic, an OpenAI and a Gemini channel, in three cases:

- plain: a one-line prompt, the agent printing its final answer (claude `--output-format
  json`, codex's plain stdout, gemini `--output-format json`);
- stream: the same prompt with the agent printing events as they come (claude `--output-format
  stream-json --include-partial-messages`: the text deltas; codex `exec --json`: JSONL items;
  gemini `--output-format stream-json`: message deltas). All three agents stream from the API in
  every case; what differs is the agent's own output;
- tool: the agent is asked to read a file; the upstream answers first with a call of the
  agent's file-reading tool, then (given the result) with the file's text.

Each case asserts what the agent printed, that the upstream got the channel's protocol and
accepted every request (it validates like the real API), and that the consume log has one entry
per upstream call with the model and the token counts the upstream reported.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import AGENTS, HERE, KINDS, Gateway, User, consume_logs, error_logs, model_for, wait_for
from upstream import PLAIN_ANSWER, Upstream

BIN = HERE / "node_modules" / ".bin"
TIMEOUT = 180
CASES = ("plain", "stream", "tool")
# The protocol the upstream sees from each kind of channel, per agent.
UPSTREAM_PROTOCOL = {
    "anthropic": "anthropic",
    "gemini": "gemini",
    "openai": "openai-chat",
}


@dataclass
class Run:
    argv: list[str]
    code: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        return f"$ {' '.join(self.argv[:3])} ... exited {self.code}\n--- stdout\n{self.stdout[-4000:]}\n--- stderr\n{self.stderr[-4000:]}"


def base_env(home: Path) -> dict[str, str]:
    """A fresh HOME and nothing of this machine's environment but PATH."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8", "TERM": "dumb", "TMPDIR": str(home / "tmp")}


def claude(gateway: Gateway, key: str, model: str, case: str, prompt: str, home: Path, work: Path) -> Run:
    env = base_env(home) | {
        "ANTHROPIC_BASE_URL": gateway.url,
        "ANTHROPIC_API_KEY": key,
        # Side requests (titles, summaries) would use the small model: the same one here.
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,
        "ANTHROPIC_SMALL_FAST_MODEL": model,
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    fmt = ["--output-format", "stream-json", "--verbose", "--include-partial-messages"] if case == "stream" else ["--output-format", "json"]
    argv = [str(BIN / "claude"), "-p", prompt, "--model", model, *fmt, "--allowedTools", "Read"]
    return run(argv, env, work)


def codex(gateway: Gateway, key: str, model: str, case: str, prompt: str, home: Path, work: Path) -> Run:
    codex_home = home / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        f'model = "{model}"\n'
        'model_provider = "switchboard"\n'
        "check_for_update_on_startup = false\n"
        "[model_providers.switchboard]\n"
        'name = "Switchboard"\n'
        f'base_url = "{gateway.url}/v1"\n'
        'env_key = "SWITCHBOARD_API_KEY"\n'
        'wire_api = "responses"\n'
        "[analytics]\nenabled = false\n"
        "[feedback]\nenabled = false\n"
        '[otel]\nexporter = "none"\n'
        # Plugins and apps would sync catalogs from github.com and chatgpt.com at start-up.
        "[features]\nplugins = false\napps = false\n"
    )
    env = base_env(home) | {"CODEX_HOME": str(codex_home), "SWITCHBOARD_API_KEY": key}
    argv = [str(BIN / "codex"), "exec", "--skip-git-repo-check", "--sandbox", "read-only", *(["--json"] if case == "stream" else []), prompt]
    return run(argv, env, work)


def gemini(gateway: Gateway, key: str, model: str, case: str, prompt: str, home: Path, work: Path) -> Run:
    settings = home / ".gemini"
    settings.mkdir()
    (settings / "settings.json").write_text(json.dumps({
        "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "security": {"auth": {"selectedType": "gemini-api-key"}},
    }))
    env = base_env(home) | {
        "GEMINI_API_KEY": key,
        "GOOGLE_GEMINI_BASE_URL": f"{gateway.url}/gemini",
        "GEMINI_CLI_NO_RELAUNCH": "true",
    }
    fmt = "stream-json" if case == "stream" else "json"
    argv = [str(BIN / "gemini"), "-p", prompt, "-m", model, "--output-format", fmt, "--skip-trust", "--yolo"]
    return run(argv, env, work)


def run(argv: list[str], env: dict[str, str], cwd: Path) -> Run:
    try:
        p = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout or ""
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else e.stderr or ""
        return Run(argv, -1, out, err + f"\n(killed after {TIMEOUT}s)")
    return Run(argv, p.returncode, p.stdout, p.stderr)


RUNNERS = {"claude": claude, "codex": codex, "gemini": gemini}


def jsonl(text: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def agent_error(agent: str, r: Run) -> str:
    """The agent's own words about a failure (or its last line), for the one-line summary."""
    if agent == "claude":
        results = [e for e in jsonl(r.stdout) if e.get("type") == "result"]
        if results:
            return str(results[-1].get("result", ""))[:200]
    lines = [line.strip() for line in (r.stderr + "\n" + r.stdout).splitlines() if line.strip()]
    for line in lines:
        named = re.search(r"\b(\w+Error: .*)$", line)
        if named:
            return named.group(1)[:200]
        if line.startswith(("ERROR:", "Error")):
            return line[:200]
    return lines[-1][:200] if lines else ""


def printed_answer(agent: str, case: str, r: Run) -> str:
    """The agent's final answer as it printed it; for the stream case, the streamed pieces
    joined (and there must be more than one)."""
    if agent == "claude":
        if case == "stream":
            events = jsonl(r.stdout)
            deltas = [e["event"]["delta"]["text"] for e in events if e.get("type") == "stream_event"
                      and e["event"].get("type") == "content_block_delta" and e["event"]["delta"].get("type") == "text_delta"]
            assert len(deltas) > 1, f"no streamed text deltas\n{r.describe()}"
            result = [e for e in events if e.get("type") == "result"]
            assert result and not result[-1].get("is_error"), r.describe()
            return "".join(deltas)
        result = json.loads(r.stdout)
        assert not result.get("is_error"), r.describe()
        return result["result"]
    if agent == "codex":
        if case == "stream":
            events = jsonl(r.stdout)
            assert any(e.get("type") == "turn.completed" for e in events), r.describe()
            return "\n".join(e["item"]["text"] for e in events if e.get("type") == "item.completed" and e["item"].get("type") == "agent_message")
        return r.stdout
    if case == "stream":
        events = jsonl(r.stdout)
        deltas = [e["content"] for e in events if e.get("type") == "message" and e.get("role") == "assistant"]
        assert len(deltas) > 1, f"no streamed message deltas\n{r.describe()}"
        assert any(e.get("type") == "result" and e.get("status") == "success" for e in events), r.describe()
        return "".join(deltas)
    return json.loads(r.stdout)["response"]


def upstream_model(record: dict) -> str:
    if record["protocol"] == "gemini":
        return record["path"].split("/models/", 1)[1].split(":", 1)[0]
    return record["body"]["model"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("agent", AGENTS)
def test_agent(agent: str, kind: str, case: str, gateway: Gateway, upstream: Upstream, user: User, tmp_path: Path) -> None:
    model = model_for(agent, kind)
    home, work = tmp_path / "home", tmp_path / "work"
    for d in (home, work, home / "tmp"):
        d.mkdir()
    secret = f"SWITCHBOARD-FILE-{uuid.uuid4().hex[:12]}"
    notes = work / "notes.txt"
    notes.write_text(secret + "\n")
    prompt = f"Read the file READ_FILE:{notes} and tell me what it says." if case == "tool" else "Answer with one sentence."
    expected = secret if case == "tool" else PLAIN_ANSWER

    upstream.clear()
    r = RUNNERS[agent](gateway, user.key, model, case, prompt, home, work)
    received = upstream.received()
    refused = [f"{x['method']} {x['path']} -> {x['status']}: {x['error']}" for x in received if x["status"] != 200]
    errors = [e.get("content") for e in error_logs(gateway, user)]
    summary = (f"{agent} via {kind} ({case}): exit {r.code}, said {agent_error(agent, r)!r}; upstream got {len(received)} "
               f"request(s), {len(refused)} refused{' (' + refused[0] + ')' if refused else ''}; gateway error logs: {errors[:1] or 'none'}")
    seen = "".join(f"\n  {x['method']} {x['path']} {x['query']} -> {x['status']} {x['error'] or ''}"
                   f" anthropic-beta={x['headers'].get('anthropic-beta')!r}" for x in received)
    context = (f"{summary}\n{r.describe()}\n--- upstream received {len(received)} request(s):{seen}\n--- refused: {refused}"
               f"\n--- gateway error logs: {errors}")

    # What the agent printed.
    assert r.code == 0, context
    answer = printed_answer(agent, case, r)
    assert expected in answer, f"the answer {answer!r} lacks {expected!r}\n{context}"

    # What the upstream received: the channel's protocol, every request valid.
    assert received, context
    assert not refused, context
    protocol = "openai-responses" if (agent, kind) == ("codex", "openai") else UPSTREAM_PROTOCOL[kind]
    assert {x["protocol"] for x in received} == {protocol}, context
    assert {upstream_model(x) for x in received} == {model}, context
    if (agent, kind) == ("claude", "anthropic"):
        # Claude Code's beta flags reach Anthropic (its body uses fields they enable).
        for x in received:
            assert "context-management-2025-06-27" in x["headers"].get("anthropic-beta", ""), context
    # Gemini CLI counts tokens (`:countTokens`) only for media parts; those calls are checked
    # for validity above but answer no turn and are not billed.
    turns = [x for x in received if not x["path"].endswith(":countTokens")]
    answers = [x["answer"] for x in turns]
    if case == "tool":
        assert answers[0]["call"] is not None, context
        assert answers[-1]["call"] is None and secret in answers[-1]["text"], context
        assert len(turns) == 2, context
    else:
        assert [a["text"] for a in answers] == [PLAIN_ANSWER], context

    # The consume log: one entry per upstream call, with the tokens the upstream reported.
    reported = sorted((model, *x["usage"]) for x in turns)
    wait_for(lambda: len(consume_logs(gateway, user)) >= len(reported), f"{len(reported)} consume log(s)")
    logs = consume_logs(gateway, user)
    logged = sorted((e["model_name"], e["prompt_tokens"], e["completion_tokens"]) for e in logs)
    assert logged == reported, f"consume logs {logged}, upstream reported {reported}\n{context}"

