"""The official `openai` Python SDK against the real Switchboard, relaying to the mock upstream.

Costs follow from the built-in prices and the mock's fixed usage (default group, ratio 1):
cost = ceil(prompt * input_ratio + completion * output_ratio), at least 1 when tokens were used.
"""

from __future__ import annotations

import math
import struct
import time

import httpx
import openai
import pytest

from conftest import Env, User, all_channels, channel, sdk, unique, wait_for

CONTENT = "Hello from the mock upstream."
CONTENT_CHUNKS = ["Hello", " from", " the", " mock", " upstream."]
TRANSCRIPT = "hello from the mock upstream"


def cost(prompt: int, completion: int, input_ratio: float, output_ratio: float) -> int:
    return max(1, math.ceil(round(prompt * input_ratio + completion * output_ratio, 9)))


# The mock reports 11 prompt + 7 completion tokens for chat; gpt-4o-mini is 0.075 / 0.3.
CHAT_COST = cost(11, 7, 0.075, 0.3)
assert CHAT_COST == 3


def mock_embedding(index: int, dims: int = 8) -> list[float]:
    """The floats the mock returns for input `index` (as f32)."""
    values = [((index * 31 + d * 7) % 97) / 97 - 0.5 for d in range(dims)]
    return [struct.unpack("<f", struct.pack("<f", v))[0] for v in values]


# ---------------------------------------------------------------------------------------------
# Chat completions


def test_chat_non_stream_returns_content_and_charges_the_price(client: openai.OpenAI, user: User, key):
    r = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Say hello"}])
    assert r.choices[0].message.content == CONTENT
    assert r.choices[0].finish_reason == "stop"
    assert r.model == "gpt-4o-mini"
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.total_tokens) == (11, 7, 18)
    me = user.wait_used_quota(CHAT_COST)
    assert me["request_count"] == 1

    # The same request again costs the same again.
    r = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Say hello"}])
    assert r.choices[0].message.content == CONTENT
    user.wait_used_quota(2 * CHAT_COST)
    info = user.key_info(key.id)
    assert info["used_quota"] == 2 * CHAT_COST
    assert info["request_count"] == 2


def test_chat_stream_with_usage(client: openai.OpenAI, user: User):
    stream = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "Say hello"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert pieces == CONTENT_CHUNKS
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    last = chunks[-1]
    assert last.choices == []
    assert (last.usage.prompt_tokens, last.usage.completion_tokens, last.usage.total_tokens) == (11, 7, 18)
    assert all(c.usage is None for c in chunks[:-1])
    user.wait_used_quota(CHAT_COST)


def test_chat_stream_without_usage_is_billed_from_upstream_usage(client: openai.OpenAI, user: User):
    stream = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Say hello"}], stream=True
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == CONTENT
    # Switchboard asks the upstream for usage itself, so the bill is exact.
    user.wait_used_quota(CHAT_COST)


def test_chat_stream_without_include_usage_has_no_usage_chunk(client: openai.OpenAI):
    chunks = list(
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], stream=True)
    )
    # OpenAI sends no usage chunk unless asked; clients commonly read chunk.choices[0].
    assert all(c.choices for c in chunks), [c.model_dump() for c in chunks if not c.choices]
    assert all(c.usage is None for c in chunks)


def test_chat_stream_choices_zero_loop_through_a_spaced_json_upstream(make_channel, client: openai.OpenAI,
                                                                     user: User):
    """Upstreams written in Python (vLLM, LiteLLM, ...) send `"choices": []` with spaces: the
    usage-only chunk Switchboard asked for must still be held back from a client that did not."""
    make_channel(["gpt-4.1-nano"], key="sk-mock-spaced")
    stream = client.chat.completions.create(
        model="gpt-4.1-nano", messages=[{"role": "user", "content": "Say hello"}], stream=True,
    )
    text = ""
    for chunk in stream:
        # The loop found in countless scripts: IndexError on a chunk without choices.
        text += chunk.choices[0].delta.content or ""
        assert chunk.usage is None
    assert text == CONTENT
    # The usage was read all the same (gpt-4.1-nano: 0.05 / 0.2).
    user.wait_used_quota(cost(11, 7, 0.05, 0.2))

    # A client that asks for the usage chunk gets it, spaces and all.
    chunks = list(client.chat.completions.create(
        model="gpt-4.1-nano", messages=[{"role": "user", "content": "Say hello"}], stream=True,
        stream_options={"include_usage": True},
    ))
    assert chunks[-1].choices == []
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (11, 7)


# ---------------------------------------------------------------------------------------------
# Other endpoints


def test_completions(client: openai.OpenAI, user: User):
    r = client.completions.create(model="gpt-4o-mini", prompt="Say hello")
    assert r.choices[0].text == CONTENT
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (5, 7)
    user.wait_used_quota(cost(5, 7, 0.075, 0.3))


def test_embeddings_with_the_sdk_default_base64_encoding(client: openai.OpenAI, user: User):
    r = client.embeddings.create(model="text-embedding-3-small", input=["first text", "second text"])
    assert [d.index for d in r.data] == [0, 1]
    for i, d in enumerate(r.data):
        assert len(d.embedding) == 8
        assert d.embedding == pytest.approx(mock_embedding(i), abs=1e-7)
    assert (r.usage.prompt_tokens, r.usage.total_tokens) == (6, 6)
    user.wait_used_quota(cost(6, 0, 0.01, 0.01))


def test_embeddings_as_floats(client: openai.OpenAI):
    r = client.embeddings.create(model="text-embedding-3-small", input="one text", encoding_format="float")
    assert len(r.data) == 1
    assert r.data[0].embedding == pytest.approx(mock_embedding(0), abs=1e-7)


def test_models_list_is_what_the_key_may_use(env: Env, admin: httpx.Client, user: User, client: openai.OpenAI):
    expected: set[str] = set()
    for ch in all_channels(admin):
        if ch["status"] == 1 and "default" in [g.strip() for g in ch["group"].split(",")]:
            expected.update(m.strip() for m in ch["models"].split(",") if m.strip())
    assert {"gpt-4o-mini", "text-embedding-3-small"} <= expected
    ids = [m.id for m in client.models.list()]
    assert len(ids) == len(set(ids)), f"duplicates in {ids}"
    assert set(ids) == expected

    # A key with a model allow-list sees only those models (and only ones a channel serves).
    limited = user.create_key(models="gpt-4o-mini,text-embedding-3-small,not-served-anywhere")
    ids = [m.id for m in sdk(env, limited.key).models.list()]
    assert sorted(ids) == ["gpt-4o-mini", "text-embedding-3-small"]
    assert sdk(env, limited.key).models.retrieve("gpt-4o-mini").id == "gpt-4o-mini"
    with pytest.raises(openai.NotFoundError):
        sdk(env, limited.key).models.retrieve("gpt-4o")


def test_images(client: openai.OpenAI, user: User):
    r = client.images.generate(model="dall-e-3", prompt="a lighthouse at dawn")
    assert len(r.data) == 1
    assert r.data[0].url == "https://images.example.invalid/1.png"
    assert "a lighthouse at dawn" in r.data[0].revised_prompt
    # dall-e-3 is priced per call: 20 * 1000 quota.
    user.wait_used_quota(20_000)

    r = client.images.generate(model="dall-e-3", prompt="a lighthouse", response_format="b64_json")
    assert r.data[0].b64_json


def test_audio_speech(client: openai.OpenAI, user: User):
    r = client.audio.speech.create(model="tts-1", voice="alloy", input="Hello there, this is a test.")
    audio = r.read()
    assert audio.startswith(b"ID3")
    assert len(audio) > 10
    # TTS is billed from the input (the upstream reports no usage).
    wait_for(lambda: user.used_quota() > 0, "a charge for the speech request")


def test_audio_transcription(client: openai.OpenAI, user: User):
    fake_mp3 = b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(256)
    r = client.audio.transcriptions.create(model="whisper-1", file=("hello.mp3", fake_mp3, "audio/mpeg"))
    assert r.text == TRANSCRIPT
    # whisper-1 is priced per call: 3 * 1000 quota.
    user.wait_used_quota(3_000)


def test_audio_transcription_as_text(client: openai.OpenAI):
    r = client.audio.transcriptions.create(
        model="whisper-1", file=("hello.mp3", b"ID3" + bytes(64), "audio/mpeg"), response_format="text"
    )
    assert r.strip() == TRANSCRIPT


def test_moderations(client: openai.OpenAI):
    r = client.moderations.create(model="omni-moderation-latest", input="I want to pet a kitten.")
    assert r.model == "omni-moderation-latest"
    assert len(r.results) == 1
    assert r.results[0].flagged is False


def test_responses_api(client: openai.OpenAI, user: User):
    r = client.responses.create(model="gpt-4o-mini", input="Say hello")
    assert r.output_text == CONTENT
    assert (r.usage.input_tokens, r.usage.output_tokens) == (9, 4)
    user.wait_used_quota(cost(9, 4, 0.075, 0.3))


def test_responses_api_stream(client: openai.OpenAI, user: User):
    events = list(client.responses.create(model="gpt-4o-mini", input="Say hello", stream=True))
    types = [e.type for e in events]
    assert types == ["response.created", "response.output_text.delta", "response.output_text.delta", "response.completed"]
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == CONTENT
    assert events[-1].response.usage.total_tokens == 13
    user.wait_used_quota(cost(9, 4, 0.075, 0.3))


# ---------------------------------------------------------------------------------------------
# Keys


def test_invalid_key_is_rejected(env: Env, shared_channel: int):
    bad = sdk(env, "sk-" + "x" * 48)
    with pytest.raises(openai.AuthenticationError) as e:
        bad.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert e.value.status_code == 401
    assert e.value.code == "invalid_api_key"


def test_missing_key_is_rejected(env: Env, shared_channel: int):
    http = httpx.post(f"{env.v1}/chat/completions", json={"model": "gpt-4o-mini", "messages": []})
    assert http.status_code == 401
    assert http.json()["error"]["code"] == "missing_api_key"


def test_exhausted_key_gets_402(env: Env, user: User):
    empty = user.create_key(remain_quota=0, unlimited_quota=False)
    with pytest.raises(openai.APIStatusError) as e:
        sdk(env, empty.key).chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert e.value.status_code == 402
    assert e.value.code == "insufficient_token_quota"
    time.sleep(0.2)
    assert user.used_quota() == 0


def test_disabled_key_gets_401(env: Env, user: User):
    k = user.create_key()
    c = sdk(env, k.key)
    assert c.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]).choices
    user.update_key(k.id, status=2)
    with pytest.raises(openai.AuthenticationError) as e:
        c.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert e.value.status_code == 401
    assert e.value.code == "token_disabled"


def test_model_not_allowed_for_the_key_gets_403(env: Env, user: User):
    k = user.create_key(models="gpt-4o-mini")
    c = sdk(env, k.key)
    assert c.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]).choices
    with pytest.raises(openai.PermissionDeniedError) as e:
        c.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert e.value.status_code == 403
    assert e.value.code == "model_not_allowed"


def test_model_without_channel_gets_404(client: openai.OpenAI, user: User):
    # gpt-4-turbo has a built-in price but no channel serves it.
    with pytest.raises(openai.NotFoundError) as e:
        client.chat.completions.create(model="gpt-4-turbo", messages=[{"role": "user", "content": "hi"}])
    assert e.value.status_code == 404
    assert e.value.code == "model_not_found"
    time.sleep(0.2)
    assert user.used_quota() == 0


def test_unknown_model_without_price_gets_404(client: openai.OpenAI):
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model=unique("no-such-model"), messages=[{"role": "user", "content": "hi"}])


# ---------------------------------------------------------------------------------------------
# Retries and channel health


def test_upstream_500_retries_on_the_next_channel_and_bills_once(
    env: Env, admin: httpx.Client, make_channel, make_user, set_option
):
    model = "gpt-4.1-nano"  # used by no other test
    set_option("RetryCooldownSeconds", 0)
    set_option("RetryTimes", 0)
    failing = make_channel([model], key="sk-mock-500", priority=10)
    healthy = make_channel([model], key="sk-mock-ok", priority=0)
    user = make_user()
    c = sdk(env, user.create_key().key)

    # Without retries the higher-priority (failing) channel answers.
    with pytest.raises(openai.InternalServerError) as e:
        c.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])
    assert e.value.status_code == 500
    time.sleep(0.2)
    assert user.used_quota() == 0, "a failed request must not be billed"

    set_option("RetryTimes", 2)
    r = c.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])
    assert r.choices[0].message.content == CONTENT
    user.wait_used_quota(cost(11, 7, 0.05, 0.2))
    # A server error does not disable the channel.
    assert channel(admin, failing)["status"] == 1
    assert channel(admin, healthy)["status"] == 1


def test_upstream_401_disables_the_channel_and_the_request_still_succeeds(
    env: Env, admin: httpx.Client, make_channel, make_user, set_option
):
    model = "gpt-4.1-mini"  # used by no other test
    set_option("AutomaticDisableChannelEnabled", True)
    set_option("RetryTimes", 1)
    set_option("RetryCooldownSeconds", 0)
    broken = make_channel([model], key="sk-mock-401", priority=10)
    healthy = make_channel([model], key="sk-mock-ok", priority=0)
    user = make_user()
    c = sdk(env, user.create_key().key)

    r = c.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])
    assert r.choices[0].message.content == CONTENT
    assert wait_for(lambda: channel(admin, broken)["status"] == 3, "the channel to be disabled automatically")
    assert channel(admin, healthy)["status"] == 1
    user.wait_used_quota(cost(11, 7, 0.2, 0.8))

    # The disabled channel is no longer tried.
    set_option("RetryTimes", 0)
    r = c.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])
    assert r.choices[0].message.content == CONTENT
