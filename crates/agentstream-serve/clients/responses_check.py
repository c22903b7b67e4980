"""The official OpenAI Python SDK's Responses API (`client.responses.create`)
against `agentstream serve clients/script.json`.

Turn order is the script's: streaming tool call, streaming answer after the
tool result (the call sent back as a `function_call` item and its
`function_call_output`), then the same two without streaming."""

import json
import os
import sys

from openai import OpenAI

import harness
from harness import turn

# Pi's api id the served requests are recorded under (azure_check.py sets Azure's).
API = "openai-responses"
client = OpenAI(base_url=harness.URL, api_key=os.environ.get("AGENTSTREAM_KEY", "not-needed"))
TOOLS = [{"type": "function", "name": "get_weather", "description": "The weather in a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]


def follow_up(call_id, arguments):
    return QUESTION + [
        {"type": "function_call", "call_id": call_id, "name": "get_weather", "arguments": arguments},
        {"type": "function_call_output", "call_id": call_id, "output": "18 C, sunny"},
    ]


def check_usage(usage, expected):
    assert usage.input_tokens == expected["input"] + expected["cacheRead"], usage
    assert usage.input_tokens_details.cached_tokens == expected["cacheRead"], usage
    assert usage.output_tokens == expected["output"], usage
    assert usage.total_tokens == expected["totalTokens"], usage


def calls_of(response):
    return [(item.call_id, item.name, json.loads(item.arguments))
            for item in response.output if item.type == "function_call"]


def stream(items):
    text, arguments, final, types, numbers = "", {}, None, [], []
    events = client.responses.create(model="scripted-model", input=items, tools=TOOLS,
                                     instructions="Be brief.", max_output_tokens=256, stream=True)
    for event in events:
        types.append(event.type)
        numbers.append(event.sequence_number)
        if event.type == "response.output_text.delta":
            text += event.delta
        elif event.type == "response.function_call_arguments.delta":
            arguments[event.output_index] = arguments.get(event.output_index, "") + event.delta
        elif event.type == "response.completed":
            final = event.response
    assert numbers == list(range(len(types))), numbers
    assert types[0] == "response.created" and types[-1] == "response.completed", types
    return text, arguments, final


def test_1_streaming_tool_call():
    text, arguments, final = stream(QUESTION)
    want_text, want_calls, want_usage = turn(0)
    assert text == want_text, text
    assert [json.loads(a) for a in arguments.values()] == [c["arguments"] for c in want_calls], arguments
    assert calls_of(final) == [(c["id"], c["name"], c["arguments"]) for c in want_calls], final.output
    assert final.output_text == want_text, final
    check_usage(final.usage, want_usage)
    request = harness.recorded()[0]
    assert request["api"] == API, request
    assert request["context"]["systemPrompt"] == "Be brief.", request
    assert request["options"]["maxTokens"] == 256, request


def test_2_streaming_answer_after_tool_result():
    call = turn(0)[1][0]
    text, arguments, final = stream(follow_up(call["id"], json.dumps(call["arguments"])))
    want_text, _, want_usage = turn(1)
    assert (text, arguments, calls_of(final)) == (want_text, {}, []), (text, arguments)
    check_usage(final.usage, want_usage)
    result = harness.recorded()[1]["context"]["messages"][-1]
    assert result["role"] == "toolResult", result
    assert (result["toolCallId"], result["toolName"]) == (call["id"], "get_weather"), result
    assert result["content"][0]["text"] == "18 C, sunny", result


def test_3_tool_call_without_streaming():
    response = client.responses.create(model="scripted-model", input=QUESTION, tools=TOOLS)
    want_text, want_calls, want_usage = turn(2)
    assert response.status == "completed", response
    assert response.output_text == want_text, response
    assert calls_of(response) == [(c["id"], c["name"], c["arguments"]) for c in want_calls], response
    check_usage(response.usage, want_usage)


def test_4_answer_without_streaming():
    call = turn(2)[1][0]
    response = client.responses.create(model="scripted-model", tools=TOOLS,
                                       input=follow_up(call["id"], json.dumps(call["arguments"])))
    want_text, _, want_usage = turn(3)
    assert response.output_text == want_text, response
    assert calls_of(response) == [], response
    check_usage(response.usage, want_usage)
    assert len(harness.recorded()) == 4


if __name__ == "__main__":
    harness.run(sys.modules[__name__])
