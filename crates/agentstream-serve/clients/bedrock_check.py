"""boto3's `bedrock-runtime` client against `agentstream serve clients/script.json`:
`converse_stream` (AWS event-stream frames) and `converse`, with the
endpoint URL pointed at serve and dummy credentials (serve checks no
signature). The model id has a `:`, which boto3 sends percent-encoded in
the path (`/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream`).

Turn order is the script's: streaming tool call, streaming answer after the
tool result, then the same two without streaming."""

import json
import os
import sys

import boto3
from botocore.config import Config

import harness
from harness import turn

HOST = harness.URL[: -len("/v1")] if harness.URL.endswith("/v1") else harness.URL
MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
client = boto3.client(
    "bedrock-runtime",
    region_name="us-east-1",
    endpoint_url=HOST,
    aws_access_key_id="AKIDAGENTSTREAMTEST",
    aws_secret_access_key=os.environ.get("AGENTSTREAM_KEY", "not-needed"),
    config=Config(retries={"total_max_attempts": 1}),
)
TOOLS = {"tools": [{"toolSpec": {"name": "get_weather", "description": "The weather in a city",
                                 "inputSchema": {"json": {"type": "object",
                                                          "properties": {"city": {"type": "string"}}}}}}]}
QUESTION = [{"role": "user", "content": [{"text": "What is the weather in Paris?"}]}]


def follow_up(call):
    return QUESTION + [
        {"role": "assistant", "content": [
            {"text": "Let me check the weather."},
            {"toolUse": {"toolUseId": call["id"], "name": call["name"], "input": call["arguments"]}}]},
        {"role": "user", "content": [
            {"toolResult": {"toolUseId": call["id"], "content": [{"text": "18 C, sunny"}], "status": "success"}}]},
    ]


def check_usage(usage, expected):
    assert usage["inputTokens"] == expected["input"], usage
    assert usage["outputTokens"] == expected["output"], usage
    assert usage["totalTokens"] == expected["totalTokens"], usage
    assert usage.get("cacheReadInputTokens", 0) == expected["cacheRead"], usage


def calls_of(content):
    return [(b["toolUse"]["toolUseId"], b["toolUse"]["name"], b["toolUse"]["input"])
            for b in content if "toolUse" in b]


def want_calls(calls):
    return [(c["id"], c["name"], c["arguments"]) for c in calls]


def stream(messages):
    response = client.converse_stream(modelId=MODEL, messages=messages, toolConfig=TOOLS)
    text, calls, usage, stop, order = "", {}, None, None, []
    for event in response["stream"]:
        (name, body), = event.items()
        order.append(name)
        if name == "contentBlockStart" and "toolUse" in body["start"]:
            start = body["start"]["toolUse"]
            calls[body["contentBlockIndex"]] = [start["toolUseId"], start["name"], ""]
        elif name == "contentBlockDelta":
            delta = body["delta"]
            if "text" in delta:
                text += delta["text"]
            elif "toolUse" in delta:
                calls[body["contentBlockIndex"]][2] += delta["toolUse"]["input"]
        elif name == "messageStop":
            stop = body["stopReason"]
        elif name == "metadata":
            usage = body["usage"]
    assert order[0] == "messageStart" and order[-2:] == ["messageStop", "metadata"], order
    return text, [(i, n, json.loads(a)) for i, n, a in (calls[k] for k in sorted(calls))], usage, stop


def test_1_streaming_tool_call():
    text, calls, usage, stop = stream(QUESTION)
    want_text, want, want_usage = turn(0)
    assert text == want_text, text
    assert calls == want_calls(want), calls
    assert stop == "tool_use", stop
    check_usage(usage, want_usage)


def test_2_streaming_answer_after_tool_result():
    call = turn(0)[1][0]
    text, calls, usage, stop = stream(follow_up(call))
    want_text, _, want_usage = turn(1)
    assert (text, calls, stop) == (want_text, [], "end_turn"), (text, calls, stop)
    check_usage(usage, want_usage)


def test_3_tool_call_without_streaming():
    response = client.converse(modelId=MODEL, messages=QUESTION, toolConfig=TOOLS)
    want_text, want, want_usage = turn(2)
    content = response["output"]["message"]["content"]
    assert "".join(b.get("text", "") for b in content) == want_text, content
    assert calls_of(content) == want_calls(want), content
    assert response["stopReason"] == "tool_use", response
    check_usage(response["usage"], want_usage)


def test_4_answer_without_streaming():
    call = turn(2)[1][0]
    response = client.converse(modelId=MODEL, messages=follow_up(call), toolConfig=TOOLS,
                               inferenceConfig={"maxTokens": 256})
    want_text, _, want_usage = turn(3)
    content = response["output"]["message"]["content"]
    assert (content, response["stopReason"]) == ([{"text": want_text}], "end_turn"), response
    check_usage(response["usage"], want_usage)
    if not os.environ.get("AGENTSTREAM_KEY"):
        # Only a server answering from the script records the calls.
        requests = harness.recorded()
        assert len(requests) == 4, requests


if __name__ == "__main__":
    harness.run(sys.modules[__name__])
