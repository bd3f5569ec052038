"""The official `google-genai` SDK against Switchboard's Gemini endpoint
(`/gemini/{version}/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`,
`:countTokens`, `:batchEmbedContents`), served by Gemini channels of the mock upstream and, for
counting and embeddings, by the shared OpenAI channel.

gemini-2.5-pro's built-in price is 0.625 / 5; the mock reports 11 prompt and 7 candidate tokens
and counts 4242 tokens.
"""

from __future__ import annotations

import math

import pytest
from google import genai
from google.genai import errors, types

from conftest import Env, User, wait_for

CONTENT = "Hello from the mock upstream."
CONTENT_CHUNKS = ["Hello", " from", " the", " mock", " upstream."]
MODEL = "gemini-2.5-pro"
COST = math.ceil(11 * 0.625 + 7 * 5)
assert COST == 42
COUNTED_TOKENS = 4242


def gclient(env: Env, key: str, api_version: str = "v1beta") -> genai.Client:
    """The official client against Switchboard: `{base_url}/{api_version}/models/...`."""
    return genai.Client(
        api_key=key,
        http_options=types.HttpOptions(base_url=f"{env.url}/gemini", api_version=api_version, timeout=30_000),
    )


@pytest.fixture
def gemini_channel(make_channel) -> int:
    return make_channel([MODEL, "gemini-2.0-flash"], key="AIza-mock", channel_type=25)


@pytest.mark.parametrize("api_version", ["v1beta", "v1"])
def test_generate_content(env: Env, key, user: User, gemini_channel: int, api_version: str):
    c = gclient(env, key.key, api_version)  # kept: the client closes its connections when collected
    r = c.models.generate_content(
        model=MODEL,
        contents="Say hello",
        config=types.GenerateContentConfig(system_instruction="Be brief.", max_output_tokens=64, temperature=0.2),
    )
    assert r.text == CONTENT
    assert r.candidates[0].finish_reason == types.FinishReason.STOP
    assert (r.usage_metadata.prompt_token_count, r.usage_metadata.candidates_token_count) == (11, 7)
    user.wait_used_quota(COST)


def test_generate_content_stream(env: Env, key, user: User, gemini_channel: int):
    c = gclient(env, key.key)
    chunks = list(c.models.generate_content_stream(
        model=MODEL, contents="Say hello",
    ))
    assert [c.text for c in chunks] == CONTENT_CHUNKS
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    assert chunks[-1].usage_metadata.candidates_token_count == 7
    user.wait_used_quota(COST)


def test_function_calls(env: Env, key, user: User, gemini_channel: int):
    c = gclient(env, key.key)
    tool = types.Tool(function_declarations=[types.FunctionDeclaration(
        name="lookup",
        description="Looks a word up.",
        parameters=types.Schema(type=types.Type.OBJECT, properties={"query": types.Schema(type=types.Type.STRING)}),
    )])
    config = types.GenerateContentConfig(tools=[tool])
    question = types.Content(role="user", parts=[types.Part(text="Look up mock")])
    r = c.models.generate_content(model=MODEL, contents=[question], config=config)
    call = r.function_calls[0]
    assert (call.name, call.args) == ("lookup", {"query": "mock"})

    answer = types.Content(role="user", parts=[types.Part.from_function_response(name="lookup", response={"result": "found"})])
    r = c.models.generate_content(model=MODEL, contents=[question, r.candidates[0].content, answer], config=config)
    assert r.text == CONTENT
    user.wait_used_quota(2 * COST)


def test_models_list_and_get(env: Env, key, gemini_channel: int):
    c = gclient(env, key.key)
    names = [m.name for m in c.models.list()]
    # Gemini channels' models, and those other channels serve through the chat bridge.
    assert {"models/gemini-2.0-flash", f"models/{MODEL}"} <= set(names), names
    assert names == sorted(names)
    m = c.models.get(model=MODEL)
    assert m.name == f"models/{MODEL}"


def test_errors(env: Env, key, user: User, make_channel, set_option):
    bad = gclient(env, "sk-not-a-key")
    with pytest.raises(errors.ClientError) as e:
        bad.models.generate_content(model=MODEL, contents="hi")
    assert (e.value.code, e.value.status) == (401, "UNAUTHENTICATED")

    c = gclient(env, key.key)

    # A model no channel serves (gpt-4o-mini would be served by the shared OpenAI channel,
    # through the chat bridge).
    with pytest.raises(errors.ClientError) as e:
        c.models.generate_content(model="no-such-model", contents="hi")
    assert (e.value.code, e.value.status) == (404, "NOT_FOUND")

    make_channel([MODEL], key="sk-mock-400", channel_type=25)
    with pytest.raises(errors.ClientError) as e:
        c.models.generate_content(model=MODEL, contents="hi")
    assert (e.value.code, e.value.status) == (400, "INVALID_ARGUMENT")
    assert "input token count" in e.value.message

    set_option("GeminiAPIEnabled", False)
    with pytest.raises(errors.ClientError) as e:
        c.models.generate_content(model=MODEL, contents="hi")
    assert (e.value.code, e.value.status) == (404, "NOT_FOUND")
    assert user.used_quota() == 0


def test_count_tokens(env: Env, key, user: User, gemini_channel: int):
    c = gclient(env, key.key)
    # A Gemini channel counts upstream.
    assert c.models.count_tokens(model=MODEL, contents="Say hello").total_tokens == COUNTED_TOKENS
    # gpt-4o-mini (the shared OpenAI channel): the tokenizer counts.
    n = c.models.count_tokens(model="gpt-4o-mini", contents="Say hello").total_tokens
    assert 0 < n < 100
    with pytest.raises(errors.ClientError) as e:
        c.models.count_tokens(model="gemini-without-channel", contents="hi")
    assert (e.value.code, e.value.status) == (404, "NOT_FOUND")
    assert user.used_quota() == 0, "counting is free"


@pytest.mark.parametrize(("model", "embeddings"), [("text-embedding-3-small", 2), (MODEL, 1)])
def test_embed_content(env: Env, key, user: User, gemini_channel: int, model: str, embeddings: int):
    """On the shared OpenAI channel (`/v1/embeddings`) and on a Gemini channel. The SDK sends
    the texts as contents of their own (`batchEmbedContents`), except to models it takes for
    multimodal Gemini embedding models (`gemini` in the name), where they are the parts of one
    content."""
    c = gclient(env, key.key)
    r = c.models.embed_content(
        model=model,
        contents=["first text", "second text"],
        config=types.EmbedContentConfig(output_dimensionality=4, task_type="RETRIEVAL_DOCUMENT"),
    )
    assert len(r.embeddings) == embeddings
    assert all(len(e.values) == 4 for e in r.embeddings)
    wait_for(lambda: user.used_quota() > 0, "billed as embeddings")
    with pytest.raises(errors.ClientError) as e:
        c.models.embed_content(model=model, contents=[types.Part.from_bytes(data=b"x", mime_type="image/png")])
    assert (e.value.code, e.value.status) == (400, "INVALID_ARGUMENT")


# ---------------------------------------------------------------------------------------------
# Gemini clients on channels of other protocols: through the chat bridge (docs/providers.md,
# "Clients of another protocol"), billed at the model's own price from the channel's usage.

@pytest.mark.parametrize(
    ("channel_type", "model", "cost"),
    [(1, "gpt-4.1-mini", math.ceil(11 * 0.2 + 7 * 0.8)), (14, "claude-sonnet-4-0", math.ceil(11 * 1.5 + 7 * 7.5))],
    ids=["openai", "anthropic"],
)
def test_generate_content_on_other_channels(env: Env, key, user: User, make_channel, channel_type: int, model: str,
                                            cost: int):
    make_channel([model], key="sk-mock-ok", channel_type=channel_type)
    c = gclient(env, key.key)
    r = c.models.generate_content(
        model=model,
        contents="Say hello",
        config=types.GenerateContentConfig(system_instruction="Be brief.", max_output_tokens=64),
    )
    assert r.text == CONTENT
    assert r.candidates[0].finish_reason == types.FinishReason.STOP
    assert (r.usage_metadata.prompt_token_count, r.usage_metadata.candidates_token_count) == (11, 7)

    chunks = list(c.models.generate_content_stream(model=model, contents="Say hello"))
    assert "".join(ch.text or "" for ch in chunks) == CONTENT
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    assert chunks[-1].usage_metadata.candidates_token_count == 7

    # The model is listed for Gemini clients too.
    assert any(m.name == f"models/{model}" for m in c.models.list())
    user.wait_used_quota(2 * cost)


def test_function_calls_on_an_openai_channel(env: Env, key, user: User, make_channel):
    make_channel(["gpt-4.1-mini"], key="sk-mock-ok", channel_type=1)
    c = gclient(env, key.key)
    tool = types.Tool(function_declarations=[types.FunctionDeclaration(
        name="lookup",
        description="Looks a word up.",
        parameters=types.Schema(type=types.Type.OBJECT, properties={"query": types.Schema(type=types.Type.STRING)}),
    )])
    config = types.GenerateContentConfig(tools=[tool], automatic_function_calling=types.AutomaticFunctionCallingConfig(
        disable=True))
    r = c.models.generate_content(model="gpt-4.1-mini", contents="Look up mock", config=config)
    call = r.candidates[0].content.parts[0].function_call
    assert call.name == "lookup" and call.args == {"query": "mock"}
    # The answer to the call goes back as a tool message paired with it.
    contents = [
        types.Content(role="user", parts=[types.Part(text="Look up mock")]),
        r.candidates[0].content,
        types.Content(role="user", parts=[types.Part.from_function_response(name="lookup", response={"meaning": "x"})]),
    ]
    r = c.models.generate_content(model="gpt-4.1-mini", contents=contents, config=config)
    assert r.text == CONTENT
