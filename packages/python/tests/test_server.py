"""agentstream.Server without any SDK: start, stop, errors, the control
calls that need no isolation."""

import json
import subprocess
import urllib.error
import urllib.request

import pytest

from agentstream import Server, ServerError, binary_path


def ask(url, text="hi", headers=None):
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]}).encode()
    request = urllib.request.Request(url + "/chat/completions", data=body, method="POST",
                                     headers={"content-type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request) as response:
        return json.load(response)["choices"][0]["message"]["content"]


def test_the_wheel_ships_the_binary():
    version = subprocess.run([binary_path(), "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith("agentstream "), version


def test_a_list_script_is_served_and_its_requests_recorded():
    with Server(script=["Paris.", "Rome."]) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/v1")
        assert ask(server.base_url("openai"), "France?") == "Paris."
        assert ask(server.base_url("responses").removesuffix("/v1") + "/v1", "Italy?") == "Rome."
        requests = server.requests()
        assert [r["context"]["messages"][0]["content"] for r in requests] == ["France?", "Italy?"]
        assert server.unused()["turns"] == []


def test_base_urls_follow_each_sdk():
    with Server(script=[]) as server:
        assert server.base_url("openai") == server.base_url("responses") == server.root + "/v1"
        assert server.base_url("anthropic") == server.base_url("gemini") == server.root
        with pytest.raises(ValueError, match="unknown API"):
            server.base_url("cohere")  # type: ignore[arg-type]


def test_a_script_file_and_strict(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"rules": [{"name": "hello", "match": {"lastUserText": "hello"}, "reply": "Hi!"}]}))
    with Server(script=path, strict=True) as server:
        assert ask(server.url, "hello") == "Hi!"
        with pytest.raises(urllib.error.HTTPError) as error:
            ask(server.url, "bye")
        assert error.value.code == 400
        assert "hello" in error.value.read().decode()


def test_a_bad_script_path_raises_at_once_with_the_binarys_message(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(ServerError) as error:
        Server(script=missing)
    assert "nope.json" in str(error.value)
    assert "nope.json" in error.value.stderr


def test_a_bad_script_raises_naming_the_problem():
    with pytest.raises(ServerError, match="exited with status 2"):
        Server(script=[{"role": "assistant", "content": 7}])


def test_a_missing_cassette_directory_raises(tmp_path):
    with pytest.raises(ServerError):
        Server(replay=tmp_path / "missing")


def test_close_stops_the_server_and_connect_handles_do_not():
    server = Server(script=["one"])
    view = Server.connect(server.url)
    view.close()
    assert ask(server.url) == "one"
    server.close()
    with pytest.raises(OSError):
        ask(server.url)
    server.close()  # twice is fine


def test_handles_for_a_test_carry_its_id():
    with Server(script=[]) as server:
        assert server.headers == {}
        handle = server.for_test("t-1")
        assert handle.headers == {"x-agentstream-test": "t-1"}
        assert handle.url == server.url
        handle.close()
        assert server.requests() == []


def test_mixed_sources_are_refused():
    with pytest.raises(ValueError):
        Server(script=[], replay="x")
    with pytest.raises(ValueError):
        Server(upstream="http://127.0.0.1:1")


@pytest.mark.agentstream(script=["from the marker"])
def test_the_fixture_serves_the_markers_script(agentstream_server):
    assert ask(agentstream_server.url) == "from the marker"
    assert len(agentstream_server.requests()) == 1


@pytest.mark.agentstream(script="script.json")
def test_a_markers_relative_path_is_the_test_files_folders(agentstream_server):
    assert ask(agentstream_server.url) == "Paris."


def test_without_a_marker_the_script_is_empty(agentstream_server):
    with pytest.raises(urllib.error.HTTPError) as error:
        ask(agentstream_server.url)
    assert error.value.code == 400


def test_isolation_ids_are_safe_header_values_and_folder_names():
    from agentstream.pytest_plugin import isolation_id

    assert isolation_id("tests/test_a.py::test_x[café-1]") == "tests_test_a.py__test_x_caf_-1_"
    assert ".." not in isolation_id("a/../b") and ".." not in isolation_id("a...b")
    long = isolation_id("t::" + "x" * 300)
    assert len(long) == 128 and long != isolation_id("t::" + "x" * 301)
