"""The pytest plugin of ``agentstream`` (loaded through the ``pytest11``
entry point): the ``agentstream_server`` fixture and the ``agentstream``
marker.

By default each test gets a server of its own, started for it and stopped
after it::

    @pytest.mark.agentstream(script="script.json")
    def test_agent(agentstream_server):
        client = OpenAI(base_url=agentstream_server.base_url("openai"), api_key="unused")

The marker takes ``Server``'s arguments (``script``, ``replay``,
``upstream``, ``record``, ``strict``, ``args``); a relative path is the test
file's folder's. Without a marker the script is ``agentstream_script``
from the ini file, else empty.

With ``agentstream_shared = true`` in the ini file (or
``@pytest.mark.agentstream(shared=True)``), one server serves the whole
run (under pytest-xdist, every worker too: the controller starts it) and
each test gets a handle carrying its own test id: a test's calls, sent
with ``headers=agentstream_server.headers``, see only its own script
(the marker's ``script``, posted for that id), cursor, request log and
``unused()``. The shared server's script, cassettes or ``strict`` come from
the ini options ``agentstream_script``, ``agentstream_replay`` and
``agentstream_strict``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Dict, Iterator, Optional

import pytest

from . import Server

_URL_KEY = "agentstream_url"
_SHARED_KEY = pytest.StashKey[Optional[Server]]()
_PATH_KEYS = ("script", "replay", "record")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "agentstream_shared",
        "one agentstream server for the whole run, each test isolated by its test id",
        type="bool",
        default=False,
    )
    parser.addini("agentstream_script", "the default script (a JSON file, relative to the ini file)", default="")
    parser.addini("agentstream_replay", "the shared server's cassette directory (relative to the ini file)", default="")
    parser.addini("agentstream_strict", "the shared server answers unmatched calls with 400", type="bool", default=False)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "agentstream(script=None, replay=None, upstream=None, record=None, strict=False, args=(), shared=None): "
        "the agentstream_server fixture's server for this test",
    )
    config.stash[_SHARED_KEY] = None


def pytest_unconfigure(config: pytest.Config) -> None:
    server = config.stash.get(_SHARED_KEY, None)
    if server is not None:
        server.close()
        config.stash[_SHARED_KEY] = None


def _ini_path(config: pytest.Config, name: str) -> Optional[str]:
    value = str(config.getini(name) or "")
    if not value:
        return None
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    return str((base / value).resolve())


def _shared_server(config: pytest.Config) -> Server:
    """The run's shared server: the controller's (pytest-xdist passes its
    URL to the workers), else started here on first use."""
    server = config.stash.get(_SHARED_KEY, None)
    if server is None:
        worker = getattr(config, "workerinput", None)
        if worker is not None and _URL_KEY in worker:
            server = Server.connect(worker[_URL_KEY])
        else:
            replay = _ini_path(config, "agentstream_replay")
            script = None if replay else _ini_path(config, "agentstream_script")
            server = Server(script=script, replay=replay, strict=bool(config.getini("agentstream_strict")))
        config.stash[_SHARED_KEY] = server
    return server


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist's controller: with ``agentstream_shared``, start the one
    server before the workers and hand them its URL."""
    if node.config.getini("agentstream_shared"):
        node.workerinput[_URL_KEY] = _shared_server(node.config).url


def isolation_id(nodeid: str) -> str:
    """A test's id for the ``x-agentstream-test`` header: its pytest node id
    with every byte but ``A-Za-z0-9._-`` replaced by ``_`` (also a safe
    cassette folder name), shortened with a hash past 128 bytes."""
    safe = re.sub(r"\.(?=\.)", "_", re.sub(r"[^A-Za-z0-9._-]", "_", nodeid))
    if len(safe) > 128:
        digest = hashlib.sha256(nodeid.encode("utf-8")).hexdigest()[:16]
        safe = safe[: 128 - 17] + "-" + digest
    return safe or "test"


def _marker_kwargs(request: pytest.FixtureRequest) -> Dict[str, Any]:
    marker = request.node.get_closest_marker("agentstream")
    kwargs: Dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    if marker is not None and marker.args:
        kwargs.setdefault("script", marker.args[0])
    folder = Path(str(request.node.path)).parent
    for key in _PATH_KEYS:
        value = kwargs.get(key)
        if isinstance(value, (str, os.PathLike)) and not os.path.isabs(value):
            kwargs[key] = str(folder / value)
    return kwargs


def _load(script: Any) -> Any:
    if isinstance(script, (str, os.PathLike)):
        with open(script, encoding="utf-8") as file:
            return json.load(file)
    return script


@pytest.fixture
def agentstream_server(request: pytest.FixtureRequest) -> Iterator[Server]:
    """An ``agentstream.Server`` for this test: its own process by default,
    or a handle on the run's shared server carrying this test's id."""
    kwargs = _marker_kwargs(request)
    shared = kwargs.pop("shared", None)
    if shared is None:
        shared = bool(request.config.getini("agentstream_shared"))
    if shared:
        own = set(kwargs) - {"script"}
        if own:
            raise pytest.UsageError(
                f"{request.node.nodeid}: a shared agentstream server takes only a script per test, not {sorted(own)}"
            )
        handle = _shared_server(request.config).for_test(isolation_id(request.node.nodeid))
        handle.reset()
        if "script" in kwargs:
            handle.set_script(_load(kwargs["script"]))
        yield handle
        return
    if not any(key in kwargs for key in ("script", "replay", "upstream")):
        kwargs["script"] = _ini_path(request.config, "agentstream_script")
    server = Server(**kwargs)
    try:
        yield server
    finally:
        server.close()
