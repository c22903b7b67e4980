"""The official Mistral Python SDK (`mistralai`) against `agentstream serve
clients/script.json`, whose Mistral endpoint is under the prefix `/mistral`
(`server_url` `http://HOST/mistral`, so `POST /mistral/v1/chat/completions`).

Turn order is the script's: streaming tool call, streaming answer after the
tool result (openai_check.py's checks with this module's `stream`), then the
same two without streaming."""

import json
import os
import sys

try:
    from mistralai.client import Mistral  # mistralai 2 and later
except ImportError:
    from mistralai import Mistral

import harness
import openai_check
from harness import turn

HOST = harness.URL[: -len("/v1")] if harness.URL.endswith("/v1") else harness.URL
client = Mistral(api_key=os.environ.get("AGENTSTREAM_KEY", "not-needed"), server_url=HOST + "/mistral")
# The tools, question and follow-up are the Chat Completions checks'.
TOOLS = openai_check.TOOLS
QUESTION = openai_check.QUESTION
follow_up = openai_check.follow_up


def arguments(value):
    return value if isinstance(value, dict) else json.loads(value)


def check_usage(usage, expected):
    # Mistral reads one prompt count: the cached tokens are in it.
    assert usage.prompt_tokens == expected["input"] + expected["cacheRead"], usage
    assert usage.completion_tokens == expected["output"], usage
    assert usage.total_tokens == expected["totalTokens"], usage


def stream(messages):
    text, calls, usage, finish = "", {}, None, None
    for event in client.chat.stream(model="scripted-model", messages=messages, tools=TOOLS):
        chunk = event.data
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            delta = choice.delta
            if isinstance(delta.content, str):
                text += delta.content
            for call in delta.tool_calls or []:
                entry = calls.setdefault(call.id, {"id": call.id, "name": "", "arguments": ""})
                entry["name"] = call.function.name or entry["name"]
                piece = call.function.arguments
                entry["arguments"] += piece if isinstance(piece, str) else json.dumps(piece)
            finish = choice.finish_reason or finish
    return text, list(calls.values()), usage, finish


# The streaming checks are the Chat Completions ones, reading Mistral's stream.
openai_check.stream = stream
openai_check.check_usage = check_usage
test_1_streaming_tool_call = openai_check.test_1_streaming_tool_call
test_2_streaming_answer_after_tool_result = openai_check.test_2_streaming_answer_after_tool_result


def test_3_tool_call_without_streaming():
    response = client.chat.complete(model="scripted-model", messages=QUESTION, tools=TOOLS)
    want_text, want_calls, want_usage = turn(2)
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    assert (choice.message.content or "") == want_text, choice
    assert [(c.id, c.function.name, arguments(c.function.arguments)) for c in choice.message.tool_calls] == \
        [(c["id"], c["name"], c["arguments"]) for c in want_calls], choice
    check_usage(response.usage, want_usage)


def test_4_answer_without_streaming():
    call = turn(2)[1][0]
    response = client.chat.complete(model="scripted-model", tools=TOOLS,
                                    messages=follow_up(call["id"], json.dumps(call["arguments"])))
    want_text, _, want_usage = turn(3)
    choice = response.choices[0]
    assert (choice.message.content, choice.finish_reason) == (want_text, "stop"), choice
    check_usage(response.usage, want_usage)
    assert len(harness.recorded()) == 4


if __name__ == "__main__":
    harness.run(sys.modules[__name__])
