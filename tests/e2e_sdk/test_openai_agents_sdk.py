"""openai-agents (the OpenAI Agents SDK, which speaks the Responses API) with a Claude and a
Gemini model behind Switchboard: the agent's tool loop runs through the Responses bridge
(docs/providers.md, "Responses API") onto Anthropic's and Gemini's protocols, plain and
streamed, each upstream call billed.

The mock answers a request with tools whose last message is not a tool result with a call of
the first function (`{"query": "mock"}`), then, given the result, with CONTENT.
"""

from __future__ import annotations

import asyncio

import openai
import pytest
from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

from conftest import Env, User
from test_cross_provider_sdk import CLAUDE, CLAUDE_COST, CONTENT, GEMINI, GEMINI_COST

set_tracing_disabled(True)

looked_up: list[str] = []


@function_tool
def lookup(query: str) -> str:
    """Looks a word up."""
    looked_up.append(query)
    return f"{query}: a thing that imitates"


def agent_for(env: Env, key: str, model: str) -> Agent:
    client = openai.AsyncOpenAI(base_url=f"{env.url}/v1", api_key=key, max_retries=0)
    return Agent(
        name="librarian",
        instructions="Answer with what the lookup tool says.",
        model=OpenAIResponsesModel(model=model, openai_client=client),
        tools=[lookup],
    )


@pytest.mark.parametrize(
    ("channel_type", "model", "cost"),
    [(14, CLAUDE, CLAUDE_COST), (25, GEMINI, GEMINI_COST)],
    ids=["anthropic", "gemini"],
)
def test_an_agents_tool_loop_through_the_responses_bridge(env: Env, key, user: User, make_channel,
                                                          channel_type: int, model: str, cost: int):
    make_channel([model], key="sk-mock-ok", channel_type=channel_type)
    looked_up.clear()
    result = Runner.run_sync(agent_for(env, key.key, model), "Look up mock")
    assert result.final_output == CONTENT
    assert looked_up == ["mock"], "the tool ran once, with the model's arguments"
    calls = [i for i in result.new_items if i.type == "tool_call_item"]
    outputs = [i for i in result.new_items if i.type == "tool_call_output_item"]
    assert len(calls) == 1 and len(outputs) == 1

    async def streamed() -> tuple[str, list[str]]:
        run = Runner.run_streamed(agent_for(env, key.key, model), "Look up mock")
        deltas = []
        async for event in run.stream_events():
            if event.type == "raw_response_event" and event.data.type == "response.output_text.delta":
                deltas.append(event.data.delta)
        return run.final_output, deltas

    final, deltas = asyncio.run(streamed())
    assert final == CONTENT
    assert "".join(deltas) == CONTENT
    # Two upstream calls a run (the tool call, then the answer), each billed.
    user.wait_used_quota(4 * cost)
