"""The official Google Gen AI Python SDK (`google-genai`) against
`agentstream serve clients/script.json`, pointed at it with
`http_options={'base_url': ...}` (the SDK then calls
`/v1beta/models/{model}:streamGenerateContent?alt=sse` and
`:generateContent`).

Turn order is the script's: streaming tool call, streaming answer after the
function response (paired with the call by name), then the same two
without streaming."""

import os
import sys

from google import genai
from google.genai import types

import harness
from harness import turn

client = genai.Client(api_key=os.environ.get("AGENTSTREAM_KEY", "not-needed"),
                      http_options={"base_url": harness.URL.removesuffix("/v1")})
MODEL = "gemini-2.5-flash"
TOOLS = [types.Tool(function_declarations=[types.FunctionDeclaration(
    name="get_weather", description="The weather in a city",
    parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}})])]
CONFIG = types.GenerateContentConfig(tools=TOOLS, system_instruction="Be brief.", max_output_tokens=256,
                                     automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
QUESTION = [types.Content(role="user", parts=[types.Part(text="What is the weather in Paris?")])]


def follow_up(arguments):
    return QUESTION + [
        types.Content(role="model", parts=[
            types.Part(text="Let me check the weather."),
            types.Part(function_call=types.FunctionCall(name="get_weather", args=arguments))]),
        types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            name="get_weather", response={"output": "18 C, sunny"}))]),
    ]


def check_usage(usage, expected):
    assert usage.prompt_token_count == expected["input"] + expected["cacheRead"], usage
    assert usage.candidates_token_count == expected["output"], usage
    assert usage.total_token_count == expected["totalTokens"], usage
    assert (usage.cached_content_token_count or 0) == expected["cacheRead"], usage


def parts_of(responses):
    text, calls, usage, finish = "", [], None, None
    for response in responses:
        for candidate in response.candidates or []:
            for part in (candidate.content.parts if candidate.content else None) or []:
                if part.function_call:
                    calls.append((part.function_call.name, dict(part.function_call.args or {})))
                elif part.text and not part.thought:
                    text += part.text
            finish = candidate.finish_reason or finish
        usage = response.usage_metadata or usage
    return text, calls, usage, finish


def test_1_streaming_tool_call():
    text, calls, usage, finish = parts_of(
        client.models.generate_content_stream(model=MODEL, contents=QUESTION, config=CONFIG))
    want_text, want_calls, want_usage = turn(0)
    assert text == want_text, text
    assert calls == [(c["name"], c["arguments"]) for c in want_calls], calls
    assert finish == types.FinishReason.STOP, finish
    check_usage(usage, want_usage)
    request = harness.recorded()[0]
    assert request["api"] == "google-generative-ai" and request["model"] == MODEL, request
    assert request["context"]["systemPrompt"] == "Be brief.", request
    assert request["options"]["maxTokens"] == 256, request


def test_2_streaming_answer_after_function_response():
    call = turn(0)[1][0]
    text, calls, usage, _ = parts_of(
        client.models.generate_content_stream(model=MODEL, contents=follow_up(call["arguments"]), config=CONFIG))
    want_text, _, want_usage = turn(1)
    assert (text, calls) == (want_text, []), (text, calls)
    check_usage(usage, want_usage)
    messages = harness.recorded()[1]["context"]["messages"]
    assistant, result = messages[1], messages[2]
    assert result["role"] == "toolResult", result
    assert result["toolCallId"] == assistant["content"][1]["id"], (assistant, result)
    assert result["toolName"] == "get_weather" and result["content"][0]["text"] == "18 C, sunny", result


def test_3_tool_call_without_streaming():
    response = client.models.generate_content(model=MODEL, contents=QUESTION, config=CONFIG)
    want_text, want_calls, want_usage = turn(2)
    text, calls, usage, finish = parts_of([response])
    assert (text, finish) == (want_text, types.FinishReason.STOP), (text, finish)
    assert calls == [(c["name"], c["arguments"]) for c in want_calls], calls
    assert response.function_calls[0].args == want_calls[0]["arguments"], response
    check_usage(usage, want_usage)


def test_4_answer_without_streaming():
    call = turn(2)[1][0]
    response = client.models.generate_content(model=MODEL, contents=follow_up(call["arguments"]), config=CONFIG)
    want_text, _, want_usage = turn(3)
    assert response.text == want_text, response
    check_usage(response.usage_metadata, want_usage)
    assert len(harness.recorded()) == 4


if __name__ == "__main__":
    harness.run(sys.modules[__name__])
