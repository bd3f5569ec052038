"""The `openai` SDK's Responses API (`client.responses.create` and `.stream`) on channels without
a Responses API of their own, through the real Switchboard and the mock upstream: the request is
bridged onto chat completions (docs/providers.md, "Responses API"), the answer and the stream
come back in the Responses shape, billed from the chat usage, and `previous_response_id`
continues a conversation the gateway kept.

The mock answers chat with 11 input + 7 output tokens whatever the protocol (its native
`/v1/responses` reports 9 + 4, which tells a bridged OpenAI channel from a native one).
"""

from __future__ import annotations

import json

import openai
import pytest

from conftest import Env, User, sdk
from test_cross_provider_sdk import CLAUDE, CLAUDE_COST, CONTENT, CONTENT_CHUNKS, cost

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

LOOKUP = {
    "type": "function",
    "name": "lookup",
    "description": "Looks a word up.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    "strict": False,
}


@pytest.fixture
def claude(make_channel) -> str:
    make_channel([CLAUDE], key="sk-mock-ok", channel_type=14)
    return CLAUDE


def test_responses_create_through_an_anthropic_channel(client: openai.OpenAI, user: User, claude: str):
    r = client.responses.create(model=claude, instructions="Be brief.", input="Say hello", max_output_tokens=64)
    assert r.object == "response"
    assert r.id.startswith("resp_")
    assert r.status == "completed"
    assert r.output_text == CONTENT
    message = [o for o in r.output if o.type == "message"][0]
    assert message.role == "assistant" and message.status == "completed"
    assert message.content[0].type == "output_text"
    assert (r.usage.input_tokens, r.usage.output_tokens, r.usage.total_tokens) == (11, 7, 18)
    assert r.instructions == "Be brief."
    user.wait_used_quota(CLAUDE_COST)


def test_responses_stream_through_an_anthropic_channel(client: openai.OpenAI, user: User, claude: str):
    with client.responses.stream(model=claude, input="Say hello", max_output_tokens=64) as stream:
        events = list(stream)
        final = stream.get_final_response()
    types = [e.type for e in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert [e.delta for e in events if e.type == "response.output_text.delta"] == CONTENT_CHUNKS
    for t in ["response.output_item.added", "response.content_part.added", "response.output_text.done",
              "response.content_part.done", "response.output_item.done"]:
        assert types.count(t) == 1, (t, types)
    assert final.output_text == CONTENT
    assert final.usage.input_tokens == 11 and final.usage.output_tokens == 7
    user.wait_used_quota(CLAUDE_COST)


def test_function_calls_and_previous_response_id(client: openai.OpenAI, user: User, claude: str):
    r = client.responses.create(model=claude, input="Look up mock", tools=[LOOKUP], max_output_tokens=64)
    calls = [o for o in r.output if o.type == "function_call"]
    assert len(calls) == 1
    call = calls[0]
    assert call.name == "lookup" and json.loads(call.arguments) == {"query": "mock"}
    assert call.id.startswith("fc_") and call.status == "completed"

    # The conversation continues from the kept response: only the call's output is sent.
    r2 = client.responses.create(
        model=claude, previous_response_id=r.id, tools=[LOOKUP], max_output_tokens=64,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "found"}],
    )
    assert r2.output_text == CONTENT

    # store: false with the whole conversation sent again (Codex's way) works the same, and is
    # not kept: continuing from it is refused.
    r3 = client.responses.create(
        model=claude, store=False, tools=[LOOKUP], max_output_tokens=64,
        input=[{"role": "user", "content": "Look up mock"},
               {"type": "function_call", "call_id": call.call_id, "name": "lookup", "arguments": call.arguments},
               {"type": "function_call_output", "call_id": call.call_id, "output": "found"}],
    )
    assert r3.output_text == CONTENT
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(model=claude, previous_response_id=r3.id, input="And?")
    assert "not found" in str(e.value)
    user.wait_used_quota(3 * CLAUDE_COST)


def test_streamed_function_call_arguments(client: openai.OpenAI, user: User, claude: str):
    with client.responses.stream(model=claude, input="Look up mock", tools=[LOOKUP], max_output_tokens=64) as s:
        events = list(s)
        final = s.get_final_response()
    deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert json.loads(deltas) == {"query": "mock"}
    done = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert len(done) == 1 and json.loads(done[0].arguments) == {"query": "mock"}
    call = [o for o in final.output if o.type == "function_call"][0]
    assert call.name == "lookup"
    user.wait_used_quota(CLAUDE_COST)


def test_custom_tools_come_back_as_custom_tool_calls(client: openai.OpenAI, user: User, claude: str):
    patch = {"type": "custom", "name": "apply_patch", "description": "Edits files.",
             "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}}
    r = client.responses.create(model=claude, input="Patch it", tools=[patch], max_output_tokens=64)
    calls = [o for o in r.output if o.type == "custom_tool_call"]
    assert len(calls) == 1
    assert calls[0].name == "apply_patch"
    # The mock calls the first function with {"query": "mock"}, which has no "input": the
    # arguments are taken as the custom tool's input as they came.
    assert calls[0].input == '{"query":"mock"}'
    user.wait_used_quota(CLAUDE_COST)


def test_unknown_and_foreign_previous_responses_are_not_found(client: openai.OpenAI, env: Env, make_user,
                                                             claude: str, user: User):
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(model=claude, previous_response_id="resp_nothing", input="Hi")
    assert e.value.status_code == 400
    r = client.responses.create(model=claude, input="Say hello", max_output_tokens=64)
    other = make_user()
    other_client = sdk(env, other.create_key().key)
    with pytest.raises(openai.BadRequestError) as e:
        other_client.responses.create(model=claude, previous_response_id=r.id, input="Hi")
    assert "not found" in str(e.value)


def test_hosted_tools_are_refused_and_web_search_dropped(client: openai.OpenAI, user: User, claude: str):
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(model=claude, input="Find it",
                                tools=[{"type": "file_search", "vector_store_ids": ["vs_1"]}])
    assert "file_search" in str(e.value)
    # Codex's default web search is left out; the answer comes as without it.
    r = client.responses.create(model=claude, input="Say hello", max_output_tokens=64,
                                tools=[{"type": "web_search", "external_web_access": False}])
    assert r.output_text == CONTENT


def test_openai_channels_bridged_by_their_setting(client: openai.OpenAI, make_channel, user: User):
    """An OpenAI-compatible channel set to `responses: chat` answers from its chat completions
    (11 + 7 tokens), where a native one answers from its Responses API (9 + 4)."""
    make_channel(["gpt-4.1-mini"], channel_type=1, config={"responses": "chat"})
    r = client.responses.create(model="gpt-4.1-mini", input="Say hello")
    assert r.output_text == CONTENT
    assert (r.usage.input_tokens, r.usage.output_tokens) == (11, 7)
    native = client.responses.create(model="gpt-4o-mini", input="Say hello")
    assert (native.usage.input_tokens, native.usage.output_tokens) == (9, 4)
    user.wait_used_quota(cost(11, 7, 0.2, 0.8) + cost(9, 4, 0.075, 0.3))
