"""Cross-dialect replay with the official SDKs: one streamed exchange (the
script's first turn: a text and a tool call) recorded through
`serve --upstream URL --record DIR` by one SDK, then `serve --replay DIR`
answering the SDKs of the other APIs from that cassette.

`CROSS` says what to run: `record:anthropic` or `record:openai` makes the
one recorded call (against the proxy); otherwise a comma-separated list of
`openai` (Chat Completions), `responses`, `anthropic` and `genai`, each
asked the same question (same system prompt and tool, so the same neutral
context) streamed and not, against the replay server. Every call must
give the first turn's text and its tool call (name and arguments; the id
too where the client's API carries one: Gemini's has none)."""

import json
import os
import sys

import anthropic
import openai
from google import genai
from google.genai import types

import harness
from harness import turn

KEY = os.environ.get("AGENTSTREAM_KEY", "not-needed")
SYSTEM = "Be brief."
QUESTION = "What is the weather in Paris?"
DESCRIPTION = "The weather in a city"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
ORIGIN = harness.URL.removesuffix("/v1")


def chat(stream):
    client = openai.OpenAI(base_url=harness.URL, api_key=KEY)
    tools = [{"type": "function", "function": {"name": "get_weather", "description": DESCRIPTION,
                                               "parameters": SCHEMA}}]
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    if not stream:
        message = client.chat.completions.create(model="m", messages=messages, tools=tools).choices[0].message
        return message.content or "", [(c.function.name, json.loads(c.function.arguments), c.id)
                                       for c in message.tool_calls or []]
    text, calls = "", {}
    for chunk in client.chat.completions.create(model="m", messages=messages, tools=tools, stream=True):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for call in choice.delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
                entry["id"] = call.id or entry["id"]
                if call.function:
                    entry["name"] += call.function.name or ""
                    entry["arguments"] += call.function.arguments or ""
    return text, [(c["name"], json.loads(c["arguments"]), c["id"]) for _, c in sorted(calls.items())]


def responses(stream):
    client = openai.OpenAI(base_url=harness.URL, api_key=KEY)
    tools = [{"type": "function", "name": "get_weather", "description": DESCRIPTION, "parameters": SCHEMA}]
    request = dict(model="m", instructions=SYSTEM, input=[{"role": "user", "content": QUESTION}], tools=tools)
    if stream:
        final = None
        for event in client.responses.create(stream=True, **request):
            if event.type == "response.completed":
                final = event.response
        assert final is not None, "no response.completed event"
    else:
        final = client.responses.create(**request)
    calls = [(item.name, json.loads(item.arguments), item.call_id)
             for item in final.output if item.type == "function_call"]
    return final.output_text, calls


def messages(stream):
    client = anthropic.Anthropic(base_url=ORIGIN, api_key=KEY)
    tools = [{"name": "get_weather", "description": DESCRIPTION, "input_schema": SCHEMA}]
    request = dict(model="m", max_tokens=256, system=SYSTEM, tools=tools,
                   messages=[{"role": "user", "content": QUESTION}])
    if stream:
        with client.messages.stream(**request) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**request)
    text = "".join(block.text for block in message.content if block.type == "text")
    return text, [(b.name, b.input, b.id) for b in message.content if b.type == "tool_use"]


def gemini(stream):
    client = genai.Client(api_key=KEY, http_options={"base_url": ORIGIN})
    tools = [types.Tool(function_declarations=[types.FunctionDeclaration(
        name="get_weather", description=DESCRIPTION, parameters_json_schema=SCHEMA)])]
    config = types.GenerateContentConfig(
        tools=tools, system_instruction=SYSTEM,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    contents = [types.Content(role="user", parts=[types.Part(text=QUESTION)])]
    if stream:
        answers = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents=contents,
                                                             config=config))
    else:
        answers = [client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)]
    text, calls = "", []
    for answer in answers:
        for candidate in answer.candidates or []:
            for part in (candidate.content.parts if candidate.content else None) or []:
                if part.function_call:
                    # Gemini sends no call ids.
                    calls.append((part.function_call.name, dict(part.function_call.args or {}), None))
                elif part.text and not part.thought:
                    text += part.text
    return text, calls


CLIENTS = {"openai": chat, "responses": responses, "anthropic": messages, "genai": gemini}


def expect(name, stream):
    def test():
        text, calls = CLIENTS[name](stream)
        want_text, want_calls, _ = turn(0)
        assert text == want_text, text
        want = [(c["name"], c["arguments"], None if name == "genai" else c["id"]) for c in want_calls]
        assert calls == want, (calls, want)
    return test


mode = os.environ["CROSS"]
if mode.startswith("record:"):
    globals()["test_record_" + mode.removeprefix("record:")] = expect(mode.removeprefix("record:"), True)
else:
    for number, name in enumerate(mode.split(",")):
        globals()[f"test_{number}a_{name}_streamed"] = expect(name, True)
        globals()[f"test_{number}b_{name}_not_streamed"] = expect(name, False)

if __name__ == "__main__":
    harness.run(sys.modules[__name__])
