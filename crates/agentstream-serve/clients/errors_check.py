"""Scripted HTTP errors through the official SDKs (`agentstream serve
clients/errors.json`): a 429 with `retry-after: 0` is retried by each SDK
(google-genai when retries are configured: it has none by default) and
the retry succeeds; each SDK's error object exposes the status, the type
and the request id we sent. Then Gemini thought signatures: a scripted
signature that is not base64 reaches google-genai as base64, and comes
back to the server as the scripted text.

The tests are named so that sorting runs them in the script's order."""

import os

import anthropic
import openai
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

import harness

KEY = os.environ.get("AGENTSTREAM_KEY", "not-needed")
HI = [{"role": "user", "content": "Hi"}]
ROOT = harness.URL.removesuffix("/v1")


def calls_made(call):
    """The result of `call()` and how many requests the server received."""
    before = len(harness.recorded())
    result = call()
    return result, len(harness.recorded()) - before


def test_1_openai_retries_a_429_and_succeeds():
    client = openai.OpenAI(base_url=harness.URL, api_key=KEY, max_retries=2)
    response, made = calls_made(lambda: client.chat.completions.create(model="scripted-model", messages=HI))
    assert response.choices[0].message.content == "recovered after the rate limit", response
    assert made == 2, made


def test_2_openai_error_object():
    client = openai.OpenAI(base_url=harness.URL, api_key=KEY, max_retries=0)
    try:
        client.chat.completions.create(model="scripted-model", messages=HI)
    except openai.InternalServerError as error:
        assert error.status_code == 503, error
        assert error.type == "server_error", error.body
        assert error.request_id and error.request_id.startswith("req_"), error.request_id
        assert error.response.headers["x-ratelimit-limit-requests"] == "500"
    else:
        raise AssertionError("the 503 was answered")


def test_3_responses_retries_a_429_and_succeeds():
    client = openai.OpenAI(base_url=harness.URL, api_key=KEY, max_retries=2)
    response, made = calls_made(lambda: client.responses.create(model="scripted-model", input="Hi"))
    assert response.output_text == "recovered after the rate limit", response
    assert made == 2, made


def test_4_anthropic_retries_a_429_and_succeeds():
    client = anthropic.Anthropic(base_url=ROOT, api_key=KEY, max_retries=2)
    message, made = calls_made(lambda: client.messages.create(model="scripted-model", max_tokens=50, messages=HI))
    assert message.content[0].text == "recovered after the rate limit", message
    assert made == 2, made


def test_5_anthropic_error_object():
    client = anthropic.Anthropic(base_url=ROOT, api_key=KEY, max_retries=0)
    try:
        client.messages.create(model="scripted-model", max_tokens=50, messages=HI)
    except anthropic.APIStatusError as error:
        assert error.status_code == 529, error
        assert error.body["error"]["type"] == "overloaded_error", error.body
        assert error.request_id and error.request_id.startswith("req_"), error.request_id
        assert error.response.headers["anthropic-ratelimit-requests-limit"] == "50"
    else:
        raise AssertionError("the 529 was answered")


def genai_client(retry=None):
    options = {"base_url": ROOT}
    if retry:
        options["retry_options"] = retry
    return genai.Client(api_key=KEY, http_options=options)


def test_6_genai_retries_a_429_when_told_to_and_succeeds():
    client = genai_client(types.HttpRetryOptions(attempts=3, initial_delay=0, max_delay=0.1))
    response, made = calls_made(lambda: client.models.generate_content(model="gemini-2.5-flash", contents="Hi"))
    assert response.text == "recovered after the rate limit", response
    assert made == 2, made


def test_7_genai_error_object():
    # Held in a variable: a client nobody holds closes its connection pool.
    client = genai_client()
    try:
        client.models.generate_content(model="gemini-2.5-flash", contents="Hi")
    except genai_errors.ClientError as error:
        assert error.code == 429, error
        assert error.status == "RESOURCE_EXHAUSTED", error
        assert error.details["error"]["details"][0]["retryDelay"] == "3s", error.details
    else:
        raise AssertionError("the 429 was answered")


def test_8_genai_takes_a_signature_that_is_not_base64_and_sends_it_back():
    client = genai_client()
    question = [types.Content(role="user", parts=[types.Part(text="Hi")])]
    parts = []
    for chunk in client.models.generate_content_stream(model="gemini-2.5-flash", contents=question):
        for candidate in chunk.candidates or []:
            parts.extend((candidate.content.parts if candidate.content else None) or [])
    signed = [part for part in parts if part.thought_signature]
    assert len(signed) == 2, parts
    assert all(isinstance(part.thought_signature, bytes) for part in signed), signed
    text = "".join(part.text or "" for part in parts if not part.thought)
    assert text == "Hello.", parts
    # Sent back as the SDK keeps it: the server reads the scripted text.
    again = question + [types.Content(role="model", parts=parts),
                        types.Content(role="user", parts=[types.Part(text="And?")])]
    response = client.models.generate_content(model="gemini-2.5-flash", contents=again)
    assert response.text == "signed turn sent back", response
    sent = harness.recorded()[-1]["context"]["messages"][1]["content"]
    signatures = [block.get("thinkingSignature") or block.get("textSignature") for block in sent]
    assert "sig-1: not base64!" in signatures and "text sig" in signatures, sent


if __name__ == "__main__":
    import sys

    harness.run(sys.modules[__name__])
