"""The official openai, anthropic and google-genai SDKs against the
fixture: a tool loop, a 429 the client retries, a cassette replay."""

import json

import anthropic
import pytest
from google import genai
from google.genai import types
from openai import OpenAI

from agentstream import Server
from conftest import WEATHER_CALL

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]


def get_weather(city):
    return f"18C in {city}"


def run_agent(client, question):
    """A minimal tool loop: call the model until it stops asking for tools."""
    messages = [{"role": "user", "content": question}]
    while True:
        message = client.chat.completions.create(model="m", messages=messages, tools=TOOLS).choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content, messages
        for call in message.tool_calls:
            result = get_weather(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


@pytest.mark.agentstream(script=[WEATHER_CALL, "It is 18C in Paris."])
def test_an_openai_tool_loop(agentstream_server):
    client = OpenAI(base_url=agentstream_server.base_url("openai"), api_key="unused")
    answer, messages = run_agent(client, "Weather in Paris?")
    assert answer == "It is 18C in Paris."
    assert len(messages) == 4
    second = agentstream_server.requests()[1]["context"]["messages"]
    assert second[-1]["role"] == "toolResult"
    assert second[-1]["content"][0]["text"] == "18C in Paris"
    assert agentstream_server.unused()["turns"] == []


@pytest.mark.agentstream(script=[
    {"httpError": {"status": 429, "message": "slow down", "retryAfter": 1}},
    "After the wait.",
])
def test_a_429_with_retry_after_is_retried_by_the_sdk(agentstream_server):
    client = OpenAI(base_url=agentstream_server.base_url("openai"), api_key="unused", max_retries=2)
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "After the wait."
    assert len(agentstream_server.requests()) == 2


@pytest.mark.agentstream(script=[WEATHER_CALL, "It is 18C in Paris."])
def test_an_anthropic_tool_loop(agentstream_server):
    client = anthropic.Anthropic(base_url=agentstream_server.base_url("anthropic"), api_key="unused")
    tools = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    while True:
        reply = client.messages.create(model="m", max_tokens=100, tools=tools, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        calls = [block for block in reply.content if block.type == "tool_use"]
        if not calls:
            break
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call.id, "content": get_weather(**call.input)} for call in calls]})
    assert reply.content[0].text == "It is 18C in Paris."
    assert [r["api"] for r in agentstream_server.requests()] == ["anthropic-messages"] * 2


@pytest.mark.agentstream(script=["Bonjour."])
def test_google_genai_streams_from_the_fixture(agentstream_server):
    client = genai.Client(api_key="unused", http_options=types.HttpOptions(base_url=agentstream_server.base_url("gemini")))
    chunks = client.models.generate_content_stream(model="gemini-2.5-flash", contents="Say hello in French")
    assert "".join(chunk.text or "" for chunk in chunks) == "Bonjour."
    assert agentstream_server.requests()[0]["api"] == "google-generative-ai"


def test_a_cassette_recorded_through_the_proxy_is_replayed(tmp_path):
    question = [{"role": "user", "content": "Capital of France?"}]
    with Server(script=["Paris."]) as upstream, \
            Server(upstream=upstream.base_url("openai"), record=tmp_path) as proxy:
        live = OpenAI(base_url=proxy.base_url("openai"), api_key="sk-secret-never-recorded")
        assert live.chat.completions.create(model="m", messages=question).choices[0].message.content == "Paris."
    assert "sk-secret-never-recorded" not in "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    with Server(replay=tmp_path) as replay:
        client = OpenAI(base_url=replay.base_url("openai"), api_key="unused")
        assert client.chat.completions.create(model="m", messages=question).choices[0].message.content == "Paris."
        assert len(replay.requests()) == 1
