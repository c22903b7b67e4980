"""The official OpenAI Python SDK against `agentstream serve clients/script.json`.

Turn order is the script's: streaming tool call, streaming answer after the
tool result, then the same two without streaming. The tests are named so
that sorting runs them in that order."""

import json
import os
import sys

from openai import OpenAI

import harness
from harness import turn

client = OpenAI(base_url=harness.URL, api_key=os.environ.get("AGENTSTREAM_KEY", "not-needed"))
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]


def follow_up(call_id, arguments):
    return QUESTION + [
        {"role": "assistant", "content": "Let me check the weather.", "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "18 C, sunny"},
    ]


def check_usage(usage, expected):
    assert usage.prompt_tokens == expected["input"] + expected["cacheRead"], usage
    assert usage.completion_tokens == expected["output"], usage
    assert usage.total_tokens == expected["totalTokens"], usage
    assert usage.prompt_tokens_details.cached_tokens == expected["cacheRead"], usage


def stream(messages):
    text, calls, usage, finish = "", {}, None, None
    chunks = client.chat.completions.create(model="scripted-model", messages=messages, tools=TOOLS,
                                            stream=True, stream_options={"include_usage": True})
    for chunk in chunks:
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            delta = choice.delta
            text += delta.content or ""
            for call in delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
                entry["id"] = call.id or entry["id"]
                if call.function:
                    entry["name"] += call.function.name or ""
                    entry["arguments"] += call.function.arguments or ""
            finish = choice.finish_reason or finish
    return text, [calls[i] for i in sorted(calls)], usage, finish


def test_1_streaming_tool_call():
    text, calls, usage, finish = stream(QUESTION)
    want_text, want_calls, want_usage = turn(0)
    assert text == want_text, text
    assert finish == "tool_calls", finish
    assert [(c["id"], c["name"], json.loads(c["arguments"])) for c in calls] == \
        [(c["id"], c["name"], c["arguments"]) for c in want_calls], calls
    check_usage(usage, want_usage)


def test_2_streaming_answer_after_tool_result():
    call = turn(0)[1][0]
    text, calls, usage, finish = stream(follow_up(call["id"], json.dumps(call["arguments"])))
    want_text, _, want_usage = turn(1)
    assert (text, calls, finish) == (want_text, [], "stop"), (text, calls, finish)
    check_usage(usage, want_usage)
    result = harness.recorded()[1]["context"]["messages"][-1]
    assert result["role"] == "toolResult", result
    assert (result["toolCallId"], result["toolName"]) == (call["id"], "get_weather"), result
    assert result["content"][0]["text"] == "18 C, sunny", result


def test_3_tool_call_without_streaming():
    completion = client.chat.completions.create(model="scripted-model", messages=QUESTION, tools=TOOLS)
    want_text, want_calls, want_usage = turn(2)
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    assert choice.message.content == want_text, choice.message
    got = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls]
    assert got == [(c["id"], c["name"], c["arguments"]) for c in want_calls], got
    check_usage(completion.usage, want_usage)


def test_4_answer_without_streaming():
    call = turn(2)[1][0]
    completion = client.chat.completions.create(model="scripted-model", tools=TOOLS,
                                                messages=follow_up(call["id"], json.dumps(call["arguments"])))
    want_text, _, want_usage = turn(3)
    assert completion.choices[0].message.content == want_text, completion
    assert completion.choices[0].finish_reason == "stop", completion
    check_usage(completion.usage, want_usage)
    assert len(harness.recorded()) == 4


def test_5_exhausted_script_is_a_client_error_not_retried():
    import openai
    try:
        # The SDK's own retries (2 by default) are left on: 400 is not retried.
        client.with_options(max_retries=2).chat.completions.create(model="scripted-model", messages=QUESTION)
    except openai.BadRequestError as error:
        assert error.status_code == 400 and "no more responses" in str(error), error
    else:
        raise AssertionError("expected HTTP 400")
    assert len(harness.recorded()) == 5


if __name__ == "__main__":
    harness.run(sys.modules[__name__])
