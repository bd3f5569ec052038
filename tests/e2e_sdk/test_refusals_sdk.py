"""Refusals as the official SDKs see them (issue 11's client gaps 1, 4 and 5):

- an upstream 429 reaches the openai, anthropic and google-genai clients with its `Retry-After`
  (the SDKs' back-off reads it) and the upstream's own error type;
- a model whose only channel answered 429 (and is frozen for `RetryCooldownSeconds`) is tried
  again: the next call gets the upstream's 429 again, not a 503 "no channel";
- `messages.count_tokens` of the anthropic SDK is served (natively by Anthropic channels, by the
  tokenizer otherwise), and an Anthropic route Switchboard does not serve answers in Anthropic's
  shape (the SDK raises NotFoundError with the error type, not a parse failure).

The mock upstream answers `sk-mock-429` with 429 and `Retry-After: 20` (Gemini: a RetryInfo of
20s) and `/v1/messages/count_tokens` with 4242.
"""

from __future__ import annotations

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors, types

from conftest import Env, User, sdk

CLAUDE = "claude-sonnet-4-0"
GEMINI = "gemini-2.5-pro"
COUNTED_TOKENS = 4242

# The SDK warns about this (old) model name; the relay does not care.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")


def claude(env: Env, key: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=key, base_url=env.url, max_retries=0, timeout=30)


def test_openai_sdk_rate_limit_keeps_retry_after_and_type_and_is_tried_again(
        env: Env, key, user: User, make_channel):
    make_channel(["gpt-4.1"], key="sk-mock-429")
    client = sdk(env, key.key)
    # Twice: the second call finds the only channel frozen by the first 429 and still tries it.
    for _ in range(2):
        with pytest.raises(openai.RateLimitError) as e:
            client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
        assert e.value.status_code == 429
        assert e.value.response.headers.get("retry-after") == "20"
        assert e.value.type == "requests", "the upstream's error type"
        assert e.value.code == "rate_limit_exceeded"
    assert user.used_quota() == 0


def test_anthropic_sdk_rate_limit_keeps_retry_after(env: Env, key, make_channel):
    make_channel([CLAUDE], key="sk-mock-429", channel_type=14)
    with pytest.raises(anthropic.RateLimitError) as e:
        claude(env, key.key).messages.create(
            model=CLAUDE, max_tokens=8, messages=[{"role": "user", "content": "hi"}],
        )
    assert e.value.response.headers.get("retry-after") == "20"
    assert e.value.body["error"]["type"] == "rate_limit_error"


def test_google_genai_rate_limit_keeps_retry_after(env: Env, key, make_channel):
    make_channel([GEMINI], key="sk-mock-429", channel_type=25)
    c = genai.Client(
        api_key=key.key,
        http_options=types.HttpOptions(base_url=f"{env.url}/gemini", api_version="v1beta", timeout=30_000),
    )
    with pytest.raises(errors.ClientError) as e:
        c.models.generate_content(model=GEMINI, contents="hi")
    assert e.value.code == 429
    assert e.value.status == "RESOURCE_EXHAUSTED"
    assert e.value.response.headers.get("retry-after") == "20"


def test_anthropic_sdk_counts_tokens(env: Env, key, user: User, make_channel):
    make_channel([CLAUDE], key="sk-mock-ok", channel_type=14)
    c = claude(env, key.key)
    messages = [{"role": "user", "content": "Say hello"}]
    # An Anthropic channel counts natively.
    assert c.messages.count_tokens(model=CLAUDE, messages=messages).input_tokens == COUNTED_TOKENS
    # gpt-4o-mini (the shared OpenAI channel): the tokenizer counts.
    n = c.messages.count_tokens(model="gpt-4o-mini", system="Be brief.", messages=messages).input_tokens
    assert 0 < n < 100
    with pytest.raises(anthropic.NotFoundError) as e:
        c.messages.count_tokens(model="claude-without-channel", messages=messages)
    assert e.value.body["error"]["type"] == "not_found_error"
    with pytest.raises(anthropic.BadRequestError) as e:
        c.messages.count_tokens(model=CLAUDE, messages="not a list")  # type: ignore[arg-type]
    assert e.value.body["type"] == "error"
    assert user.used_quota() == 0, "counting is free"


def test_anthropic_sdk_unserved_route_is_an_anthropic_not_found(env: Env, key):
    with pytest.raises(anthropic.NotFoundError) as e:
        claude(env, key.key).messages.batches.create(requests=[{
            "custom_id": "a",
            "params": {"model": CLAUDE, "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]},
        }])
    assert e.value.body["type"] == "error"
    assert e.value.body["error"]["type"] == "not_found_error"
