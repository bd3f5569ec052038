"""A validating upstream for the coding-agent suite: Anthropic Messages, OpenAI chat completions
and Responses, and Gemini generateContent, each as strict as the real API about what it accepts.

- Anthropic (`POST /v1/messages`): `x-api-key` and `anthropic-version` required; unknown
  top-level fields refused ("X: Extra inputs are not permitted") unless the `anthropic-beta`
  header carries the flag that enables them (BETA_FIELDS); model, max_tokens and messages
  required; roles user/assistant (and system between the turns); every `tool_result` answers a `tool_use` of the previous
  assistant turn and every `tool_use` is answered in the next user turn.
- OpenAI chat (`POST /v1/chat/completions`): unknown fields refused ("Unrecognized request
  argument supplied: X"); roles system/developer/user/assistant/tool; each tool message answers a
  tool call of the preceding assistant message, and every tool call is answered; usage in a
  stream only with `stream_options.include_usage`.
- OpenAI Responses (`POST /v1/responses`): unknown fields refused; every
  `function_call_output` answers an earlier `function_call`.
- Gemini (`POST /v1beta/models/{m}:generateContent`, `:streamGenerateContent[?alt=sse]`,
  `:countTokens`): API key required; unknown fields refused ('Invalid JSON payload received.
  Unknown name "X"'), down to the parts and the `parameters` schemas (Google's OpenAPI subset:
  no `additionalProperties`, `$schema`, ...); roles user/model; a functionResponse turn directly follows a functionCall
  turn with as many parts.

Answers are scripted: when the request offers tools, the latest user text asks for
`READ_FILE:<path>` and the last turn is not a tool result, the answer calls the agent's
file-reading tool (found among the offered tools by its schema) for that path; when the last
turn is a tool result, the answer is that result's text; otherwise PLAIN_ANSWER. Requests that
ask for JSON (Gemini's responseMimeType) get a value of the asked schema.

Every request is recorded (headers, body, the answer's status and the usage reported) for the
tests; `python3 upstream.py [PORT]` runs it alone for trying an agent against it directly.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PLAIN_ANSWER = "Switchboard relayed this answer."
READ_MARKER = re.compile(r"READ_FILE:(\S+)")

# The keys the channels are created with; anything else is refused as the real APIs would.
KEYS = {
    "anthropic": "sk-ant-upstream-agents",
    "openai": "sk-openai-upstream-agents",
    "gemini": "gemini-upstream-agents",
}

ANTHROPIC_FIELDS = {
    "model", "messages", "max_tokens", "system", "metadata", "stop_sequences", "stream",
    "temperature", "top_k", "top_p", "tools", "tool_choice", "thinking", "service_tier",
    "container", "output_config",
}
# Fields the Messages API accepts only with one of these `anthropic-beta` flags.
BETA_FIELDS = {
    "context_management": {"context-management-2025-06-27"},
    "mcp_servers": {"mcp-client-2025-04-04", "mcp-client-2025-11-20"},
    "output_format": {"structured-outputs-2025-11-13"},
}
# A custom tool's fields, and those it takes only under a beta flag (tool search, examples,
# fine-grained streaming of its input).
TOOL_FIELDS = {"type", "name", "description", "input_schema", "cache_control", "strict"}
TOOL_BETA_FIELDS = {
    "defer_loading": {"advanced-tool-use-2025-11-20"},
    "input_examples": {"advanced-tool-use-2025-11-20"},
    "allowed_callers": {"advanced-tool-use-2025-11-20"},
    "eager_input_streaming": {"fine-grained-tool-streaming-2025-05-14"},
}
CHAT_FIELDS = {
    "messages", "model", "audio", "frequency_penalty", "function_call", "functions", "logit_bias",
    "logprobs", "max_completion_tokens", "max_tokens", "metadata", "modalities", "n",
    "parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key",
    "prompt_cache_retention", "reasoning_effort", "response_format", "safety_identifier", "seed",
    "service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice",
    "tools", "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
}
RESPONSES_FIELDS = {
    "model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "store",
    "stream", "stream_options", "include", "reasoning", "text", "max_output_tokens",
    "max_tool_calls", "metadata", "previous_response_id", "prompt", "prompt_cache_key",
    "prompt_cache_retention", "safety_identifier", "service_tier", "temperature", "top_p",
    "top_logprobs", "truncation", "user", "background", "conversation", "client_metadata",
}
GEMINI_FIELDS = {
    "model", "contents", "tools", "toolConfig", "safetySettings", "systemInstruction",
    "generationConfig", "cachedContent",
}
GEMINI_TOOL_FIELDS = {
    "functionDeclarations", "googleSearchRetrieval", "codeExecution", "googleSearch",
    "urlContext", "computerUse", "fileSearch", "googleMaps",
}
GEMINI_FUNCTION_FIELDS = {
    "name", "description", "behavior", "parameters", "parametersJsonSchema", "response",
    "responseJsonSchema",
}
GEMINI_SCHEMA_FIELDS = {
    "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
    "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
    "pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum",
}
GEMINI_PART_FIELDS = {
    "text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode",
    "codeExecutionResult", "thought", "thoughtSignature", "videoMetadata", "mediaResolution",
    "partMetadata",
}
GEMINI_GENERATION_FIELDS = {
    "stopSequences", "responseMimeType", "responseSchema", "responseJsonSchema",
    "responseModalities", "candidateCount", "maxOutputTokens", "temperature", "topP", "topK",
    "seed", "presencePenalty", "frequencyPenalty", "responseLogprobs", "logprobs",
    "enableEnhancedCivicAnswers", "speechConfig", "thinkingConfig", "mediaResolution",
    "imageConfig",
}


class Refused(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Turn:
    """What the scripted answer depends on, read the same way from every protocol."""

    tools: dict[str, dict] = field(default_factory=dict)  # offered name -> JSON schema
    user_text: str = ""  # the latest user message's text (not a tool result)
    tool_result: str | None = None  # the last turn's tool result, when it is one
    json_schema: Any = None  # the schema of an answer asked for as JSON


@dataclass
class Answer:
    text: str = ""
    call: tuple[str, dict] | None = None  # (tool name, arguments)
    call_id: str = ""
    data: Any = None  # a JSON answer


def decide(turn: Turn) -> Answer:
    if turn.json_schema is not None:
        return Answer(text=json.dumps(sample(turn.json_schema)))
    if turn.tool_result is not None:
        return Answer(text=f"The file says: {turn.tool_result.strip()}")
    m = READ_MARKER.search(turn.user_text)
    if m and turn.tools:
        call = read_call(turn.tools, m.group(1))
        if call:
            return Answer(call=call, call_id="call_" + uuid.uuid4().hex[:16])
    return Answer(text=PLAIN_ANSWER)


def read_call(tools: dict[str, dict], path: str) -> tuple[str, dict] | None:
    """A call of the offered tool that reads `path`: a file-reading tool filled through its
    required path argument, else a shell tool running `cat`."""
    for name, schema in tools.items():
        props = (schema or {}).get("properties") or {}
        if "read" not in name.lower():
            continue
        required = (schema or {}).get("required") or list(props)
        for arg in required:
            if "path" in arg.lower() or arg.lower() in ("file", "filename"):
                return name, {arg: path}
    for name, schema in tools.items():
        props = (schema or {}).get("properties") or {}
        for arg in ("command", "cmd"):
            if arg in props:
                if props[arg].get("type") == "array":
                    return name, {arg: ["cat", path]}
                return name, {arg: f"cat {path}"}
    return None


def sample(schema: Any) -> Any:
    """A small value of a JSON schema (Gemini CLI's side requests, e.g. the next-speaker check,
    ask for JSON): enums prefer "user" (the model has finished its turn)."""
    if not isinstance(schema, dict):
        return None
    kind = str(schema.get("type", "object")).lower()
    if "enum" in schema:
        values = schema["enum"]
        return "user" if "user" in values else values[0]
    if kind == "object":
        return {k: sample(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return "ok"


def usage_for(body: bytes, answer: Answer) -> tuple[int, int]:
    """Deterministic but request-dependent token counts, so the consume log can be compared."""
    prompt = 100 + len(body) % 997
    completion = 5 + len((answer.text or json.dumps(answer.call)).split())
    return prompt, completion


def camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


# ------------------------------------------------------------------------------------------
# Anthropic Messages


def anthropic_turn(headers: dict, body: dict) -> Turn:
    if headers.get("x-api-key") != KEYS["anthropic"] and headers.get("authorization") != f"Bearer {KEYS['anthropic']}":
        raise Refused(401, "authentication_error:invalid x-api-key")
    if not headers.get("anthropic-version"):
        raise Refused(400, "anthropic-version: header is required")
    betas = {b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()}
    for key in body:
        if key in ANTHROPIC_FIELDS:
            continue
        if key in BETA_FIELDS and betas & BETA_FIELDS[key]:
            continue
        raise Refused(400, f"{key}: Extra inputs are not permitted")
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            raise Refused(400, f"{key}: Field required")
    turn = Turn()
    for i, tool in enumerate(body.get("tools") or []):
        if tool.get("type", "custom") != "custom":
            continue  # a server or client tool of Anthropic's own (web search, bash, ...)
        for key in tool:
            if key not in TOOL_FIELDS and not (key in TOOL_BETA_FIELDS and betas & TOOL_BETA_FIELDS[key]):
                raise Refused(400, f"tools.{i}.custom.{key}: Extra inputs are not permitted")
        for key in ("name", "input_schema"):
            if key not in tool:
                raise Refused(400, f"tools.{i}.custom.{key}: Field required")
        if (tool["input_schema"] or {}).get("type") != "object":
            raise Refused(400, f"tools.{i}.custom.input_schema.type: Input should be 'object'")
        turn.tools[tool["name"]] = tool["input_schema"]
    messages = body["messages"]
    if not messages:
        raise Refused(400, "messages: at least one message is required")
    previous_uses: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "system":
            # System messages between the turns: Claude Code sends them without a beta flag
            # (and, refused, resends the conversation without them).
            continue
        if role not in ("user", "assistant"):
            raise Refused(400, f"messages.{i}.role: Input should be 'user' or 'assistant'")
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if role == "user":
            stray = [r for r in results if r not in previous_uses]
            if stray:
                raise Refused(400, f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: {stray[0]}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.")
            missing = previous_uses - set(results)
            if missing:
                raise Refused(400, f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {sorted(missing)[0]}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.")
            previous_uses = set()
            texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
            if results:
                turn.tool_result = "\n".join(block_text(b.get("content")) for b in blocks if b.get("type") == "tool_result")
            else:
                turn.tool_result = None
                if texts:
                    turn.user_text = "\n".join(texts)
        else:
            if previous_uses:
                raise Refused(400, f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {sorted(previous_uses)[0]}")
            previous_uses = {b.get("id") for b in blocks if b.get("type") == "tool_use"}
            turn.tool_result = None
    if messages[-1].get("role") != "user":
        turn.tool_result = None
    return turn


def block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block_text(c.get("text", "")) if isinstance(c, dict) else str(c) for c in content)
    return ""


def anthropic_answer(body: dict, answer: Answer, usage: tuple[int, int]) -> dict:
    content: list[dict] = []
    if answer.call:
        content.append({"type": "tool_use", "id": "toolu_" + answer.call_id[5:], "name": answer.call[0], "input": answer.call[1]})
    else:
        content.append({"type": "text", "text": answer.text})
    return {
        "id": "msg_" + uuid.uuid4().hex[:20], "type": "message", "role": "assistant",
        "model": body["model"], "content": content,
        "stop_reason": "tool_use" if answer.call else "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1],
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }


def anthropic_events(message: dict) -> list[tuple[str, dict]]:
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    events = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}))
            words = block["text"].split(" ")
            for j, word in enumerate(words):
                piece = word if j == 0 else " " + word
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": piece}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": dict(block, input={})}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}, "usage": {"output_tokens": message["usage"]["output_tokens"]}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


# ------------------------------------------------------------------------------------------
# OpenAI chat completions


def bearer(headers: dict, key: str) -> None:
    if headers.get("authorization") != f"Bearer {key}":
        raise Refused(401, "Incorrect API key provided.")


def chat_turn(headers: dict, body: dict) -> Turn:
    bearer(headers, KEYS["openai"])
    for key in body:
        if key not in CHAT_FIELDS:
            raise Refused(400, f"Unrecognized request argument supplied: {key}")
    for key in ("model", "messages"):
        if key not in body:
            raise Refused(400, f"Missing required parameter: '{key}'.")
    turn = Turn()
    for tool in body.get("tools") or []:
        fn = tool.get("function") or {}
        if tool.get("type") != "function" or "name" not in fn:
            raise Refused(400, "Missing required parameter: 'tools[0].function'.")
        turn.tools[fn["name"]] = fn.get("parameters") or {}
    pending: set[str] = set()
    for i, msg in enumerate(body["messages"]):
        role = msg.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise Refused(400, f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function' and 'developer'.")
        if role == "tool":
            if msg.get("tool_call_id") not in pending:
                raise Refused(400, f"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
            pending.discard(msg["tool_call_id"])
            turn.tool_result = (turn.tool_result + "\n" if turn.tool_result else "") + chat_text(msg.get("content"))
            continue
        if pending:
            raise Refused(400, f"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {sorted(pending)[0]}")
        turn.tool_result = None
        if role == "assistant":
            pending = {c.get("id") for c in msg.get("tool_calls") or []}
        elif role == "user":
            turn.user_text = chat_text(msg.get("content"))
    if pending:
        raise Refused(400, f"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {sorted(pending)[0]}")
    return turn


def chat_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def chat_message(answer: Answer) -> dict:
    if answer.call:
        return {"role": "assistant", "content": None, "tool_calls": [{"id": answer.call_id, "type": "function", "function": {"name": answer.call[0], "arguments": json.dumps(answer.call[1])}}]}
    return {"role": "assistant", "content": answer.text}


def chat_usage(usage: tuple[int, int]) -> dict:
    return {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}


# ------------------------------------------------------------------------------------------
# OpenAI Responses


def responses_turn(headers: dict, body: dict) -> Turn:
    bearer(headers, KEYS["openai"])
    for key in body:
        if key not in RESPONSES_FIELDS:
            raise Refused(400, f"Unknown parameter: '{key}'.")
    if "model" not in body:
        raise Refused(400, "Missing required parameter: 'model'.")
    turn = Turn()
    for tool in body.get("tools") or []:
        if tool.get("type") == "function" and "name" in tool:
            turn.tools[tool["name"]] = tool.get("parameters") or {}
    items = body.get("input") or []
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    calls: set[str] = set()
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role not in ("user", "assistant", "system", "developer"):
                raise Refused(400, f"Invalid value: '{role}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.")
            turn.tool_result = None
            if role == "user":
                turn.user_text = responses_text(item.get("content"))
        elif kind == "function_call":
            calls.add(item.get("call_id"))
            turn.tool_result = None
        elif kind == "function_call_output":
            if item.get("call_id") not in calls:
                raise Refused(400, f"No tool call found for function call output with call_id {item.get('call_id')}.")
            output = item.get("output")
            turn.tool_result = output if isinstance(output, str) else responses_text(output)
        else:
            turn.tool_result = None
    return turn


def responses_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def responses_output(answer: Answer) -> list[dict]:
    if answer.call:
        return [{"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:16], "call_id": answer.call_id, "name": answer.call[0], "arguments": json.dumps(answer.call[1]), "status": "completed"}]
    return [{"type": "message", "id": "msg_" + uuid.uuid4().hex[:16], "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": answer.text, "annotations": []}]}]


def responses_object(body: dict, answer: Answer, usage: tuple[int, int], status: str) -> dict:
    return {
        "id": "resp_" + uuid.uuid4().hex[:20], "object": "response", "created_at": int(time.time()),
        "status": status, "model": body["model"], "output": responses_output(answer) if status == "completed" else [],
        "usage": {"input_tokens": usage[0], "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": usage[1], "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": sum(usage)} if status == "completed" else None,
    }


def responses_events(body: dict, answer: Answer, usage: tuple[int, int]) -> list[tuple[str, dict]]:
    done = responses_object(body, answer, usage, "completed")
    started = dict(done, status="in_progress", output=[], usage=None)
    events: list[tuple[str, dict]] = [("response.created", {"response": started}), ("response.in_progress", {"response": started})]
    for i, item in enumerate(done["output"]):
        if item["type"] == "message":
            events.append(("response.output_item.added", {"output_index": i, "item": dict(item, status="in_progress", content=[])}))
            events.append(("response.content_part.added", {"item_id": item["id"], "output_index": i, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}))
            text = item["content"][0]["text"]
            for j, word in enumerate(text.split(" ")):
                events.append(("response.output_text.delta", {"item_id": item["id"], "output_index": i, "content_index": 0, "delta": word if j == 0 else " " + word}))
            events.append(("response.output_text.done", {"item_id": item["id"], "output_index": i, "content_index": 0, "text": text}))
            events.append(("response.content_part.done", {"item_id": item["id"], "output_index": i, "content_index": 0, "part": item["content"][0]}))
        else:
            events.append(("response.output_item.added", {"output_index": i, "item": dict(item, status="in_progress", arguments="")}))
            events.append(("response.function_call_arguments.delta", {"item_id": item["id"], "output_index": i, "delta": item["arguments"]}))
            events.append(("response.function_call_arguments.done", {"item_id": item["id"], "output_index": i, "arguments": item["arguments"]}))
        events.append(("response.output_item.done", {"output_index": i, "item": item}))
    events.append(("response.completed", {"response": done}))
    return [(name, dict({"type": name, "sequence_number": n}, **data)) for n, (name, data) in enumerate(events)]


# ------------------------------------------------------------------------------------------
# Gemini


def gemini_normalize(value: Any, fields: set[str], where: str) -> dict:
    """`value` with its keys in camelCase (Google accepts both spellings); a key that is not a
    field of the message at `where` is refused as Google refuses it."""
    if not isinstance(value, dict):
        raise Refused(400, f"Invalid JSON payload received. Expected an object at '{where or 'request'}'.")
    out = {}
    for key, v in value.items():
        name = camel(key)
        if name not in fields:
            raise Refused(400, f'Invalid JSON payload received. Unknown name "{key}" at \'{where or "request"}\': Cannot find field.')
        out[name] = v
    return out


def gemini_schema(schema: Any, where: str) -> None:
    """`parameters` is Google's OpenAPI Schema subset (JSON Schema goes in parametersJsonSchema)."""
    schema = gemini_normalize(schema, GEMINI_SCHEMA_FIELDS, where)
    kind = schema.get("type")
    if isinstance(kind, list):
        raise Refused(400, f"Invalid JSON payload received. Proto field is not repeating, cannot start list at '{where}.type'.")
    if kind is not None and str(kind).upper() not in ("STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"):
        raise Refused(400, f"Invalid value at '{where}.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), \"{kind}\"")
    for name, sub in (schema.get("properties") or {}).items():
        gemini_schema(sub, f"{where}.properties[{name!r}].value")
    if "items" in schema:
        gemini_schema(schema["items"], f"{where}.items")
    for i, sub in enumerate(schema.get("anyOf") or []):
        gemini_schema(sub, f"{where}.any_of[{i}]")


def gemini_turn(headers: dict, query: dict, body: dict) -> Turn:
    key = headers.get("x-goog-api-key") or (query.get("key") or [""])[0]
    if key != KEYS["gemini"]:
        raise Refused(400, "API key not valid. Please pass a valid API key.")
    body = gemini_normalize(body, GEMINI_FIELDS, "")
    generation = gemini_normalize(body.get("generationConfig") or {}, GEMINI_GENERATION_FIELDS, "generation_config")
    turn = Turn()
    if generation.get("responseMimeType") == "application/json":
        turn.json_schema = generation.get("responseJsonSchema") or generation.get("responseSchema") or {}
    for i, tool in enumerate(body.get("tools") or []):
        tool = gemini_normalize(tool, GEMINI_TOOL_FIELDS, f"tools[{i}]")
        for j, fn in enumerate(tool.get("functionDeclarations") or []):
            at = f"tools[{i}].function_declarations[{j}]"
            fn = gemini_normalize(fn, GEMINI_FUNCTION_FIELDS, at)
            if "parameters" in fn:
                gemini_schema(fn["parameters"], f"{at}.parameters")
            turn.tools[fn["name"]] = fn.get("parametersJsonSchema") or fn.get("parameters") or {}
    contents = body.get("contents") or []
    if not contents:
        raise Refused(400, "* GenerateContentRequest.contents: contents is not specified")
    calls = 0
    for i, content in enumerate(contents):
        content = gemini_normalize(content, {"role", "parts"}, f"contents[{i}]")
        role = content.get("role", "user")
        if role not in ("user", "model"):
            raise Refused(400, "Please use a valid role: user, model.")
        parts = [gemini_normalize(p, GEMINI_PART_FIELDS, f"contents[{i}].parts[{j}]") for j, p in enumerate(content.get("parts") or [])]
        if not parts:
            raise Refused(400, f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.")
        responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
        if responses:
            if len(responses) != calls:
                raise Refused(400, "Please ensure that function response turn comes immediately after a function call turn. And the number of function response parts should be equal to number of function call parts of the function call turn.")
            turn.tool_result = "\n".join(json.dumps(r.get("response")) for r in responses)
        else:
            turn.tool_result = None
            if role == "user":
                text = "\n".join(p.get("text", "") for p in parts if "text" in p)
                if text:
                    turn.user_text = text
        calls = len([p for p in parts if "functionCall" in p]) if role == "model" else 0
    return turn


def gemini_answer(model: str, answer: Answer, usage: tuple[int, int]) -> dict:
    part = {"functionCall": {"name": answer.call[0], "args": answer.call[1]}} if answer.call else {"text": answer.text}
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": usage[0], "candidatesTokenCount": usage[1], "totalTokenCount": sum(usage)},
        "modelVersion": model, "responseId": uuid.uuid4().hex[:20],
    }


def gemini_chunks(model: str, answer: Answer, usage: tuple[int, int]) -> list[dict]:
    if answer.call:
        return [gemini_answer(model, answer, usage)]
    words = answer.text.split(" ")
    chunks = []
    for j, word in enumerate(words):
        chunk = gemini_answer(model, Answer(text=word if j == 0 else " " + word), usage)
        if j < len(words) - 1:
            del chunk["candidates"][0]["finishReason"]
            chunk["usageMetadata"] = {"promptTokenCount": usage[0], "totalTokenCount": usage[0]}
        chunks.append(chunk)
    return chunks


# ------------------------------------------------------------------------------------------
# The server


class Upstream:
    """The server on a free port of 127.0.0.1 in a thread, and what it received."""

    def __init__(self, port: int = 0):
        self.records: list[dict] = []
        self.lock = threading.Lock()
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                upstream.handle(self)

            def do_GET(self) -> None:
                upstream.handle(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> "Upstream":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def clear(self) -> None:
        with self.lock:
            self.records.clear()

    def received(self) -> list[dict]:
        with self.lock:
            return list(self.records)

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        url = urlsplit(h.path)
        query = parse_qs(url.query)
        headers = {k.lower(): v for k, v in h.headers.items()}
        raw = h.rfile.read(int(headers.get("content-length") or 0))
        record: dict[str, Any] = {"method": h.command, "path": url.path, "query": url.query, "headers": headers, "protocol": None, "status": 200, "error": None, "usage": None, "answer": None}
        try:
            record["body"] = json.loads(raw) if raw else None
        except ValueError:
            record["body"] = raw.decode("utf-8", "replace")
        with self.lock:
            self.records.append(record)
        try:
            if not isinstance(record["body"], dict) and h.command == "POST":
                raise Refused(400, "the body is not a JSON object")
            self.route(h, url.path, query, headers, raw, record)
        except Refused as e:
            record["status"], record["error"] = e.status, e.message
            self.refuse(h, record["protocol"], e)
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:  # a fault of this upstream: recorded, so that no test passes on it
            record["status"], record["error"] = 500, f"upstream.py failed: {e!r}"
            self.json(h, 500, {"error": {"message": record["error"]}})

    def route(self, h, path: str, query: dict, headers: dict, raw: bytes, record: dict) -> None:
        body = record["body"]
        stream = bool(isinstance(body, dict) and body.get("stream"))
        if h.command == "POST" and path == "/v1/messages":
            record["protocol"] = "anthropic"
            answer = decide(anthropic_turn(headers, body))
            usage = usage_for(raw, answer)
            record.update(usage=usage, answer=answer.__dict__)
            message = anthropic_answer(body, answer, usage)
            if stream:
                self.sse(h, [(f"event: {n}\ndata: {json.dumps(d)}\n\n") for n, d in anthropic_events(message)])
            else:
                self.json(h, 200, message)
        elif h.command == "POST" and path == "/v1/chat/completions":
            record["protocol"] = "openai-chat"
            answer = decide(chat_turn(headers, body))
            usage = usage_for(raw, answer)
            record.update(usage=usage, answer=answer.__dict__)
            base = {"id": "chatcmpl-" + uuid.uuid4().hex[:20], "created": int(time.time()), "model": body["model"]}
            reason = "tool_calls" if answer.call else "stop"
            if not stream:
                self.json(h, 200, dict(base, object="chat.completion", choices=[{"index": 0, "message": chat_message(answer), "finish_reason": reason}], usage=chat_usage(usage)))
                return
            base["object"] = "chat.completion.chunk"
            chunks = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
            if answer.call:
                call = chat_message(answer)["tool_calls"][0]
                chunks.append(dict(base, choices=[{"index": 0, "delta": {"tool_calls": [dict(call, index=0)]}, "finish_reason": None}]))
            else:
                for j, word in enumerate(answer.text.split(" ")):
                    chunks.append(dict(base, choices=[{"index": 0, "delta": {"content": word if j == 0 else " " + word}, "finish_reason": None}]))
            chunks.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": reason}]))
            if (body.get("stream_options") or {}).get("include_usage"):
                chunks.append(dict(base, choices=[], usage=chat_usage(usage)))
            self.sse(h, [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"])
        elif h.command == "POST" and path == "/v1/responses":
            record["protocol"] = "openai-responses"
            answer = decide(responses_turn(headers, body))
            usage = usage_for(raw, answer)
            record.update(usage=usage, answer=answer.__dict__)
            if stream:
                self.sse(h, [f"event: {n}\ndata: {json.dumps(d)}\n\n" for n, d in responses_events(body, answer, usage)])
            else:
                self.json(h, 200, responses_object(body, answer, usage, "completed"))
        elif h.command == "POST" and (m := re.fullmatch(r"/v1beta/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)", path)):
            record["protocol"] = "gemini"
            model, method = m.groups()
            if method == "countTokens":
                key = headers.get("x-goog-api-key") or (query.get("key") or [""])[0]
                if key != KEYS["gemini"]:
                    raise Refused(400, "API key not valid. Please pass a valid API key.")
                gemini_normalize(body, {"contents", "generateContentRequest"}, "")
                total = 10 + len(raw) // 4
                record["usage"] = (total, 0)
                self.json(h, 200, {"totalTokens": total})
                return
            answer = decide(gemini_turn(headers, query, body))
            usage = usage_for(raw, answer)
            record.update(usage=usage, answer=answer.__dict__)
            if method == "generateContent":
                self.json(h, 200, gemini_answer(model, answer, usage))
            elif (query.get("alt") or [""])[0] == "sse":
                self.sse(h, [f"data: {json.dumps(c)}\r\n\r\n" for c in gemini_chunks(model, answer, usage)])
            else:
                self.json(h, 200, gemini_chunks(model, answer, usage))
        else:
            record["protocol"] = "unknown"
            raise Refused(404, f"no route for {h.command} {path}")

    @staticmethod
    def json(h, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    @staticmethod
    def sse(h, events: list[str]) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        for event in events:
            data = event.encode()
            h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            h.wfile.flush()
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()

    def refuse(self, h, protocol: str | None, e: Refused) -> None:
        if protocol == "anthropic":
            kind = {401: "authentication_error", 404: "not_found_error"}.get(e.status, "invalid_request_error")
            body = {"type": "error", "error": {"type": kind, "message": e.message}}
        elif protocol == "gemini":
            status = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND"}.get(e.status, "INVALID_ARGUMENT")
            body = {"error": {"code": e.status, "message": e.message, "status": status}}
        else:
            body = {"error": {"message": e.message, "type": "invalid_request_error", "param": None, "code": None}}
        self.json(h, e.status, body)


if __name__ == "__main__":
    up = Upstream(int(sys.argv[1]) if len(sys.argv) > 1 else 0).start()
    print(f"listening on {up.url}", flush=True)
    shown = 0
    try:
        while True:
            time.sleep(0.5)
            for r in up.received()[shown:]:
                print(json.dumps({k: r[k] for k in ("method", "path", "query", "status", "error", "usage", "answer")}), flush=True)
                shown += 1
    except KeyboardInterrupt:
        up.stop()
