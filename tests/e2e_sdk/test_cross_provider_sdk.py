"""Official SDKs against channels of other protocols, through the real Switchboard and the mock
upstream:

- the `openai` SDK against Anthropic (14), Gemini (25), AWS Bedrock (32) and Vertex AI (42)
  channels: the same request
  gets an equivalent answer (translated into OpenAI's shape), streams included, usage billed;
- the `anthropic` SDK against Switchboard's `/claude/v1/messages` and `/v1/messages`.

Costs follow from the built-in prices and the mock's fixed usage (default group, ratio 1):
cost = ceil(prompt * input_ratio + completion * output_ratio).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import anthropic
import openai
import pydantic
import pytest
from openai.lib._parsing._completions import type_to_response_format_param

from conftest import Env, User, sdk

CONTENT = "Hello from the mock upstream."
CONTENT_CHUNKS = ["Hello", " from", " the", " mock", " upstream."]

# The SDK warns about this (old) model name; the relay does not care.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

CLAUDE = "claude-sonnet-4-0"
GEMINI = "gemini-2.5-pro"


def cost(prompt: int, completion: int, input_ratio: float, output_ratio: float) -> int:
    return max(1, math.ceil(round(prompt * input_ratio + completion * output_ratio, 9)))


# The mock reports 11 input + 7 output tokens for both protocols.
CLAUDE_COST = cost(11, 7, 1.5, 7.5)
GEMINI_COST = cost(11, 7, 0.625, 5)
assert (CLAUDE_COST, GEMINI_COST) == (69, 42)

TOOLS = [{
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Looks a word up.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
}]


VERTEX_KEY = Path(__file__).resolve().parents[2] / "crates/relay/tests/fixtures/vertex/service_account.json"


def vertex_key(env: Env) -> str:
    """The test service-account key, its token URI on the mock."""
    key = json.loads(VERTEX_KEY.read_text())
    key["token_uri"] = f"{env.mock_url}/token"
    return json.dumps(key)


@pytest.fixture(params=["anthropic", "gemini", "bedrock", "vertex-gemini", "vertex-claude"])
def translated(request, make_channel, env: Env) -> tuple[str, int]:
    """A channel of the mock whose protocol is not OpenAI's; (model, cost of one chat)."""
    kind = request.param
    if kind == "anthropic":
        make_channel([CLAUDE], key="sk-mock-ok", channel_type=14)
    elif kind == "gemini":
        make_channel([GEMINI], key="sk-mock-ok", channel_type=25)
    elif kind == "bedrock":
        make_channel([CLAUDE], key="AKIDSDKE2E|secret|us-east-1", channel_type=32,
                     model_mapping={CLAUDE: "anthropic.claude-sonnet-4-20250514-v1:0"})
    elif kind == "vertex-gemini":
        make_channel([GEMINI], key=vertex_key(env), channel_type=42)
    else:
        make_channel([CLAUDE], key=vertex_key(env), channel_type=42,
                     model_mapping={CLAUDE: "claude-sonnet-4@20250514"})
    return (GEMINI, GEMINI_COST) if "gemini" in kind else (CLAUDE, CLAUDE_COST)


# ---------------------------------------------------------------------------------------------
# The OpenAI SDK against Anthropic and Gemini channels


def test_openai_sdk_chat_through_a_translated_channel(client: openai.OpenAI, user: User, translated):
    model, price = translated
    r = client.chat.completions.create(
        model=model,
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello"}],
        max_tokens=64,
    )
    assert r.object == "chat.completion"
    assert r.choices[0].message.role == "assistant"
    assert r.choices[0].message.content == CONTENT
    assert r.choices[0].finish_reason == "stop"
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.total_tokens) == (11, 7, 18)
    user.wait_used_quota(price)


def test_openai_sdk_stream_through_a_translated_channel(client: openai.OpenAI, user: User, translated):
    model, price = translated
    stream = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": "Say hello"}],
        max_tokens=64,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert pieces == CONTENT_CHUNKS
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    last = chunks[-1]
    assert last.choices == []
    assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (11, 7)

    # Without include_usage: no usage chunk, billed all the same.
    chunks = list(client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Say hello"}], max_tokens=64, stream=True,
    ))
    assert all(c.usage is None for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == CONTENT
    user.wait_used_quota(2 * price)


def test_openai_sdk_tool_calls_through_a_translated_channel(client: openai.OpenAI, user: User, translated):
    model, price = translated
    messages = [{"role": "user", "content": "Look up mock"}]
    r = client.chat.completions.create(model=model, messages=messages, tools=TOOLS, max_tokens=64)
    assert r.choices[0].finish_reason == "tool_calls"
    call = r.choices[0].message.tool_calls[0]
    assert call.type == "function"
    assert call.function.name == "lookup"
    assert json.loads(call.function.arguments) == {"query": "mock"}

    # Streamed, the call's pieces add up to the same arguments.
    chunks = list(client.chat.completions.create(
        model=model, messages=messages, tools=TOOLS, max_tokens=64, stream=True,
    ))
    deltas = [t for c in chunks if c.choices for t in (c.choices[0].delta.tool_calls or [])]
    assert deltas[0].function.name == "lookup"
    assert json.loads("".join(d.function.arguments or "" for d in deltas)) == {"query": "mock"}
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["tool_calls"]

    # The tool's result goes back; the model answers in text.
    messages += [
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
        {"role": "tool", "tool_call_id": call.id, "content": "found"},
    ]
    r = client.chat.completions.create(model=model, messages=messages, tools=TOOLS, max_tokens=64)
    assert r.choices[0].message.content == CONTENT
    assert r.choices[0].finish_reason == "stop"
    user.wait_used_quota(3 * price)


def test_openai_sdk_gets_the_same_answer_from_every_protocol(client: openai.OpenAI, make_channel, user: User):
    """One request, three upstream protocols, one answer."""
    make_channel([CLAUDE], channel_type=14)
    make_channel([GEMINI], channel_type=25)
    answers = []
    for model in ["gpt-4o-mini", CLAUDE, GEMINI]:
        r = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Say hello"}])
        answers.append((r.choices[0].message.content, r.choices[0].finish_reason,
                        r.usage.prompt_tokens, r.usage.completion_tokens))
    assert answers == [(CONTENT, "stop", 11, 7)] * 3
    user.wait_used_quota(cost(11, 7, 0.075, 0.3) + CLAUDE_COST + GEMINI_COST)


class CalendarEvent(pydantic.BaseModel):
    name: str
    date: str
    participants: list[str]
    attendees: int


def test_openai_sdk_structured_output_through_a_translated_channel(client: openai.OpenAI, user: User, translated):
    """`chat.completions.parse` with a pydantic model (`response_format` json_schema, strict):
    Anthropic models answer through a forced tool, Gemini with responseJsonSchema; either way
    the SDK gets JSON content it parses into the model."""
    model, price = translated
    messages = [{"role": "system", "content": "Extract the event."},
                {"role": "user", "content": "Alice and Bob are going to a science fair on Friday."}]
    r = client.chat.completions.parse(model=model, messages=messages, response_format=CalendarEvent, max_tokens=256)
    assert r.choices[0].finish_reason == "stop"
    event = r.choices[0].message.parsed
    # The mock fills every field from the schema it received: the schema reached it whole.
    assert event == CalendarEvent(name="mock", date="mock", participants=["mock"], attendees=7)
    assert r.choices[0].message.tool_calls in (None, [])

    # json_object: a JSON object as content.
    r = client.chat.completions.create(model=model, messages=messages, response_format={"type": "json_object"},
                                       max_tokens=256)
    assert isinstance(json.loads(r.choices[0].message.content), dict)
    assert r.choices[0].finish_reason == "stop"

    # Streamed, the content pieces add up to the same object.
    chunks = list(client.chat.completions.create(
        model=model, messages=messages, max_tokens=256, stream=True,
        response_format=type_to_response_format_param(CalendarEvent),
    ))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert CalendarEvent.model_validate_json(text).attendees == 7
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    user.wait_used_quota(3 * price)


def test_openai_sdk_structured_output_with_tools_is_refused_on_anthropic(client: openai.OpenAI, make_channel):
    """Never silently dropped: what the forced-tool mapping cannot keep is a 400 that says why."""
    make_channel([CLAUDE], channel_type=14)
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=CLAUDE, messages=[{"role": "user", "content": "hi"}],
                                       response_format=type_to_response_format_param(CalendarEvent), tools=TOOLS)
    assert "cannot be combined with tools" in e.value.message


def test_openai_sdk_sees_anthropic_upstream_errors_as_openai_errors(client: openai.OpenAI, make_channel):
    make_channel([CLAUDE], key="sk-mock-400", channel_type=14)
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=CLAUDE, messages=[{"role": "user", "content": "hi"}])
    assert e.value.status_code == 400
    assert "prompt is too long" in e.value.message
    assert e.value.code == "invalid_request_error"


# ---------------------------------------------------------------------------------------------
# The Anthropic SDK against /claude/v1/messages and /v1/messages


def claude(env: Env, key: str, prefix: str = "/claude") -> anthropic.Anthropic:
    """The official Anthropic client; it posts to `{base_url}/v1/messages`."""
    return anthropic.Anthropic(api_key=key, base_url=f"{env.url}{prefix}", max_retries=0, timeout=30)


@pytest.fixture
def claude_channel(make_channel) -> int:
    return make_channel([CLAUDE], key="sk-mock-ok", channel_type=14)


@pytest.mark.parametrize("prefix", ["/claude", ""], ids=["claude-v1-messages", "v1-messages"])
def test_anthropic_sdk_messages(env: Env, key, user: User, claude_channel: int, prefix: str):
    c = claude(env, key.key, prefix)
    r = c.messages.create(
        model=CLAUDE,
        max_tokens=64,
        system="Be brief.",
        messages=[{"role": "user", "content": "Say hello"}],
    )
    assert r.type == "message"
    assert r.role == "assistant"
    assert r.model == CLAUDE
    assert [b.type for b in r.content] == ["text"]
    assert r.content[0].text == CONTENT
    assert r.stop_reason == "end_turn"
    assert (r.usage.input_tokens, r.usage.output_tokens) == (11, 7)
    user.wait_used_quota(CLAUDE_COST)


def test_anthropic_sdk_stream(env: Env, key, user: User, claude_channel: int):
    c = claude(env, key.key)
    with c.messages.stream(model=CLAUDE, max_tokens=64, messages=[{"role": "user", "content": "Say hello"}]) as s:
        pieces = list(s.text_stream)
        final = s.get_final_message()
    assert pieces == CONTENT_CHUNKS
    assert final.content[0].text == CONTENT
    assert final.stop_reason == "end_turn"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (11, 7)

    # The raw event stream (stream=True) has Anthropic's event sequence.
    events = list(c.messages.create(
        model=CLAUDE, max_tokens=64, messages=[{"role": "user", "content": "Say hello"}], stream=True,
    ))
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start"
    assert kinds[-1] == "message_stop"
    assert "message_delta" in kinds
    user.wait_used_quota(2 * CLAUDE_COST)


def test_anthropic_sdk_tool_use(env: Env, key, user: User, claude_channel: int):
    c = claude(env, key.key)
    tools = [{
        "name": "lookup",
        "description": "Looks a word up.",
        "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    }]
    messages: list[dict] = [{"role": "user", "content": "Look up mock"}]
    r = c.messages.create(model=CLAUDE, max_tokens=64, tools=tools, messages=messages)
    assert r.stop_reason == "tool_use"
    use = r.content[0]
    assert (use.type, use.name, use.input) == ("tool_use", "lookup", {"query": "mock"})

    # Streamed: the input arrives as partial JSON and adds up.
    with c.messages.stream(model=CLAUDE, max_tokens=64, tools=tools, messages=messages) as s:
        final = s.get_final_message()
    assert final.stop_reason == "tool_use"
    assert final.content[0].input == {"query": "mock"}

    messages += [
        {"role": "assistant", "content": [b.model_dump() for b in r.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "found"}]},
    ]
    r = c.messages.create(model=CLAUDE, max_tokens=64, tools=tools, messages=messages)
    assert r.stop_reason == "end_turn"
    assert r.content[0].text == CONTENT
    user.wait_used_quota(3 * CLAUDE_COST)


def test_anthropic_sdk_cache_tokens_are_billed_at_cache_prices(env: Env, key, user: User, make_channel):
    make_channel([CLAUDE], key="sk-mock-cache", channel_type=14)
    r = claude(env, key.key).messages.create(
        model=CLAUDE, max_tokens=64, messages=[{"role": "user", "content": "Say hello"}],
    )
    assert (r.usage.cache_read_input_tokens, r.usage.cache_creation_input_tokens) == (1000, 200)
    # 11 input + 1000 reads at 0.1 + 200 writes at 1.25, all at the input ratio 1.5; 7 output.
    user.wait_used_quota(math.ceil(round((11 + 1000 * 0.1 + 200 * 1.25) * 1.5 + 7 * 7.5, 9)))


def test_anthropic_sdk_errors(env: Env, key, user: User, make_channel):
    with pytest.raises(anthropic.AuthenticationError) as e:
        claude(env, "sk-not-a-key").messages.create(
            model=CLAUDE, max_tokens=8, messages=[{"role": "user", "content": "hi"}],
        )
    assert e.value.status_code == 401
    assert e.value.body["type"] == "error"

    with pytest.raises(anthropic.NotFoundError) as e:
        claude(env, key.key).messages.create(
            model="claude-without-channel", max_tokens=8, messages=[{"role": "user", "content": "hi"}],
        )
    assert "claude-without-channel" in e.value.body["error"]["message"]

    make_channel([CLAUDE], key="sk-mock-429", channel_type=14)
    with pytest.raises(anthropic.RateLimitError) as e:
        claude(env, key.key).messages.create(
            model=CLAUDE, max_tokens=8, messages=[{"role": "user", "content": "hi"}],
        )
    assert e.value.body["error"]["type"] == "rate_limit_error"
    assert user.used_quota() == 0


# ---------------------------------------------------------------------------------------------
# The Anthropic SDK for a model only an OpenAI channel offers (translated both ways)

OPENAI_MODEL = "gpt-4.1-mini"
OPENAI_COST = cost(11, 7, 0.2, 0.8)


def test_anthropic_sdk_on_an_openai_channel(env: Env, key, user: User, make_channel):
    make_channel([OPENAI_MODEL], key="sk-mock-ok", channel_type=1)
    c = claude(env, key.key)
    r = c.messages.create(
        model=OPENAI_MODEL, max_tokens=64, system="Be brief.", messages=[{"role": "user", "content": "Say hello"}],
    )
    assert r.type == "message"
    assert r.content[0].text == CONTENT
    assert r.stop_reason == "end_turn"
    assert (r.usage.input_tokens, r.usage.output_tokens) == (11, 7)

    with c.messages.stream(model=OPENAI_MODEL, max_tokens=64, messages=[{"role": "user", "content": "Say hello"}]) as s:
        pieces = list(s.text_stream)
        final = s.get_final_message()
    assert pieces == CONTENT_CHUNKS
    assert final.content[0].text == CONTENT
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 7
    user.wait_used_quota(2 * OPENAI_COST)


def test_anthropic_sdk_tool_use_on_an_openai_channel(env: Env, key, user: User, make_channel):
    make_channel([OPENAI_MODEL], key="sk-mock-ok", channel_type=1)
    c = claude(env, key.key)
    tools = [{"name": "lookup", "description": "Looks a word up.",
              "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}}]
    messages: list[dict] = [{"role": "user", "content": "Look up mock"}]
    r = c.messages.create(model=OPENAI_MODEL, max_tokens=64, tools=tools, messages=messages)
    assert r.stop_reason == "tool_use"
    use = r.content[0]
    assert (use.type, use.name, use.input) == ("tool_use", "lookup", {"query": "mock"})

    with c.messages.stream(model=OPENAI_MODEL, max_tokens=64, tools=tools, messages=messages) as s:
        final = s.get_final_message()
    assert final.stop_reason == "tool_use"
    assert final.content[0].input == {"query": "mock"}

    messages += [
        {"role": "assistant", "content": [b.model_dump() for b in r.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "found"}]},
    ]
    r = c.messages.create(model=OPENAI_MODEL, max_tokens=64, tools=tools, messages=messages)
    assert r.content[0].text == CONTENT
    user.wait_used_quota(3 * OPENAI_COST)
