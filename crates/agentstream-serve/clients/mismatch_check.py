"""A replaying `agentstream serve --replay DIR` asked what no cassette
holds: the official SDKs raise the provider's HTTP 400, whose message names
the closest cassette and where the contexts differ, and do not retry it
(with their default retries, the server receives the call once)."""

import os

import anthropic
import openai

import harness

KEY = os.environ.get("AGENTSTREAM_KEY", "not-needed")
CHANGED = [{"role": "user", "content": "What is the weather in Lyon?"}]


def check(error):
    message = str(error)
    assert error.status_code == 400, error
    assert "no cassette" in message and "the closest is" in message, message
    assert "$.messages[0].content" in message, message
    assert "Lyon" in message and "Paris" in message, message


def once(call):
    """Runs `call`, which must fail; checks that the server received it once."""
    before = len(harness.recorded())
    try:
        call()
    except (openai.APIStatusError, anthropic.APIStatusError) as error:
        check(error)
    else:
        raise AssertionError("a changed prompt was answered")
    made = len(harness.recorded()) - before
    assert made == 1, f"the SDK sent the call {made} times"


def test_openai_changed_prompt():
    client = openai.OpenAI(base_url=harness.URL, api_key=KEY)
    once(lambda: client.chat.completions.create(model="scripted-model", messages=CHANGED, stream=True))
    assert client.max_retries > 0


def test_anthropic_changed_prompt():
    client = anthropic.Anthropic(base_url=harness.URL.removesuffix("/v1"), api_key=KEY)
    once(lambda: client.messages.create(model="scripted-model", max_tokens=100, messages=CHANGED, stream=True))
    assert client.max_retries > 0


if __name__ == "__main__":
    import sys

    harness.run(sys.modules[__name__])
