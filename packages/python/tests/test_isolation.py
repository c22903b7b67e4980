"""One shared server, each test isolated by its test id (the
`x-agentstream-test` header), and the control calls `set_script`,
`reset` and `requests(raw=True)`. CI runs this file with
`-n 2 -o agentstream_shared=true`: pytest-xdist's two workers share the
controller's server."""

import pytest
from openai import OpenAI

from agentstream import Server


def chat(server, text):
    client = OpenAI(base_url=server.base_url("openai"), api_key="unused", default_headers=server.headers)
    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}]).choices[0].message.content


def check_shared(request, server):
    assert server.test_id is not None
    worker = getattr(request.config, "workerinput", None)
    if worker is not None:
        # The controller's server, not one of this worker's.
        assert worker["agentstream_url"] == server.url


@pytest.mark.agentstream(shared=True, script=["A1", "A2"])
def test_a_sees_only_its_own_script_and_requests(request, agentstream_server):
    check_shared(request, agentstream_server)
    assert [chat(agentstream_server, f"a{i}") for i in range(2)] == ["A1", "A2"]
    texts = [r["context"]["messages"][0]["content"] for r in agentstream_server.requests()]
    assert texts == ["a0", "a1"]
    assert agentstream_server.unused()["turns"] == []


@pytest.mark.agentstream(shared=True, script=["B1", "B2", "B3"])
def test_b_sees_only_its_own_script_and_requests(request, agentstream_server):
    check_shared(request, agentstream_server)
    assert [chat(agentstream_server, f"b{i}") for i in range(2)] == ["B1", "B2"]
    texts = [r["context"]["messages"][0]["content"] for r in agentstream_server.requests()]
    assert texts == ["b0", "b1"]
    assert len(agentstream_server.unused()["turns"]) == 1


@pytest.mark.agentstream(shared=True)
def test_set_script_append_reset_and_raw_bodies(agentstream_server):
    assert agentstream_server.set_script(["one"])["turns"] == 1
    appended = agentstream_server.set_script(["two"], append=True)
    assert appended["appended"] is True and appended["test"] == agentstream_server.test_id
    assert [chat(agentstream_server, "x"), chat(agentstream_server, "y")] == ["one", "two"]
    raw = agentstream_server.requests(raw=True)
    assert raw[0]["raw"]["messages"] == [{"role": "user", "content": "x"}]
    cleared = agentstream_server.reset()
    assert cleared["reset"] is True and cleared["clearedRequests"] == 2
    assert agentstream_server.requests() == []
    assert chat(agentstream_server, "again") == "one"


def test_a_whole_server_reset_without_a_test_id():
    with Server(script=["first"]) as server:
        assert chat(server, "q") == "first"
        assert server.reset()["clearedRequests"] == 1
        assert chat(server, "q") == "first"
