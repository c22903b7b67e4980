"""boto3's `bedrock-runtime` client against `agentstream serve
clients/bedrock_errors.json`: a scripted HTTP 429 read by botocore as a
`ThrottlingException` (from `x-amzn-errortype`, the message from the
body), a thinking turn's `reasoningContent` deltas with its signature, an
error after HTTP 200 as the stream's `throttlingException` message, a turn
paced by `timing` whose first multi-byte character arrives split across
two writes (`splitUtf8`), and a stream cut after its second message."""

import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError

import harness

HOST = harness.URL[: -len("/v1")] if harness.URL.endswith("/v1") else harness.URL
MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
client = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=HOST,
                      aws_access_key_id="AKIDAGENTSTREAMTEST", aws_secret_access_key="not-needed",
                      config=Config(retries={"total_max_attempts": 1}))
HELLO = [{"role": "user", "content": [{"text": "Hello"}]}]


def test_1_a_429_is_a_throttling_exception():
    try:
        client.converse(modelId=MODEL, messages=HELLO)
    except ClientError as error:
        assert error.response["Error"]["Code"] == "ThrottlingException", error.response
        assert error.response["Error"]["Message"] == \
            "Too many requests, please wait before trying again.", error.response
        assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 429, error.response
    else:
        raise AssertionError("no error")


def test_2_thinking_streams_as_reasoning_content():
    response = client.converse_stream(modelId=MODEL, messages=HELLO)
    thinking, signature, text = "", "", ""
    for event in response["stream"]:
        delta = event.get("contentBlockDelta", {}).get("delta", {})
        reasoning = delta.get("reasoningContent", {})
        thinking += reasoning.get("text", "")
        signature += reasoning.get("signature", "")
        text += delta.get("text", "")
    assert (thinking, signature, text) == ("The user greets me.", "EqQBCkYIBxgCKkB", "Hello."), \
        (thinking, signature, text)


def test_3_an_error_after_200_is_the_streams_exception():
    response = client.converse_stream(modelId=MODEL, messages=HELLO)
    text = ""
    try:
        for event in response["stream"]:
            text += event.get("contentBlockDelta", {}).get("delta", {}).get("text", "")
    except EventStreamError as error:
        assert error.response["Error"]["Code"] == "throttlingException", error.response
        assert error.response["Error"]["Message"] == "Too many tokens", error.response
    else:
        raise AssertionError("no error")
    assert "I was about to say".startswith(text), text




def test_4_a_paced_stream_with_a_split_character_reads_whole():
    response = client.converse_stream(modelId=MODEL, messages=HELLO)
    text = "".join(event.get("contentBlockDelta", {}).get("delta", {}).get("text", "")
                   for event in response["stream"])
    assert text == "Grüße aus Köln", text


def test_5_a_cut_stream_raises():
    response = client.converse_stream(modelId=MODEL, messages=HELLO)
    events = []
    try:
        for event in response["stream"]:
            events.append(event)
    except Exception as error:  # botocore raises its own errors for a cut body
        assert not any("messageStop" in event for event in events), events
        print(f"cut: {type(error).__name__}", file=sys.stderr)
    else:
        raise AssertionError(f"the cut stream ended cleanly: {events}")


if __name__ == "__main__":
    harness.run(sys.modules[__name__])
