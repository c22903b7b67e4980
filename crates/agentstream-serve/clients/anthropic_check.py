"""The official Anthropic Python SDK against `agentstream serve clients/script.json`
(same turn order as openai_check.py)."""

import os
import sys

import anthropic

import harness
from harness import turn

client = anthropic.Anthropic(base_url=harness.URL.removesuffix("/v1"), api_key=os.environ.get("AGENTSTREAM_KEY", "not-needed"))
TOOLS = [{"name": "get_weather", "description": "The weather in a city",
          "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]


def follow_up(call):
    return QUESTION + [
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me check the weather."},
            {"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["arguments"]}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": "18 C, sunny"}]},
    ]


def check(message, index, stop_reason):
    want_text, want_calls, want_usage = turn(index)
    text = "".join(b.text for b in message.content if b.type == "text")
    calls = [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
    assert text == want_text, message
    assert calls == [(c["id"], c["name"], c["arguments"]) for c in want_calls], message
    assert message.stop_reason == stop_reason, message
    assert message.usage.input_tokens == want_usage["input"], message.usage
    assert message.usage.output_tokens == want_usage["output"], message.usage
    assert (message.usage.cache_read_input_tokens or 0) == want_usage["cacheRead"], message.usage


def streamed(messages):
    with client.messages.stream(model="scripted-model", max_tokens=200, tools=TOOLS, messages=messages) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "".join(b.text for b in final.content if b.type == "text")
    return final


def test_1_streaming_tool_call():
    check(streamed(QUESTION), 0, "tool_use")


def test_2_streaming_answer_after_tool_result():
    call = turn(0)[1][0]
    check(streamed(follow_up(call)), 1, "end_turn")
    result = harness.recorded()[1]["context"]["messages"][-1]
    assert result["role"] == "toolResult", result
    assert (result["toolCallId"], result["toolName"]) == (call["id"], "get_weather"), result


def test_3_tool_call_without_streaming():
    message = client.messages.create(model="scripted-model", max_tokens=200, tools=TOOLS, messages=QUESTION)
    check(message, 2, "tool_use")


def test_4_answer_without_streaming():
    message = client.messages.create(model="scripted-model", max_tokens=200, tools=TOOLS,
                                     messages=follow_up(turn(2)[1][0]))
    check(message, 3, "end_turn")
    assert len(harness.recorded()) == 4


def test_5_exhausted_script_is_a_client_error_not_retried():
    try:
        # The SDK's own retries (2 by default) are left on: 400 is not retried.
        client.with_options(max_retries=2).messages.create(model="scripted-model", max_tokens=10, messages=QUESTION)
    except anthropic.BadRequestError as error:
        assert error.status_code == 400 and "no more responses" in str(error), error
    else:
        raise AssertionError("expected HTTP 400")
    assert len(harness.recorded()) == 5


if __name__ == "__main__":
    harness.run(sys.modules[__name__])
