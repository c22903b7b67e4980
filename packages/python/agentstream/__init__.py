"""Start ``agentstream serve`` from Python and talk to its control API.

``Server`` runs the ``agentstream`` binary this package ships (a scripted,
recording or replaying endpoint for the OpenAI Chat Completions and
Responses, Anthropic Messages and Gemini APIs) on a free port of
127.0.0.1, and stops it on ``close()`` or at the end of a ``with`` block::

    from agentstream import Server
    from openai import OpenAI

    with Server(script=["Paris."]) as server:
        client = OpenAI(base_url=server.base_url("openai"), api_key="unused")
        ...
        assert len(server.requests()) == 1

The pytest plugin (``agentstream.pytest_plugin``, loaded by pytest through
its ``pytest11`` entry point) gives tests the ``agentstream_server``
fixture. Only the standard library is used.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any, Dict, List, Literal, Optional, Sequence, Union

__all__ = ["API", "Script", "Server", "ServerError", "TEST_HEADER", "binary_path"]

#: The header that gives a test its own script cursor, request log,
#: ``GET /v1/unused`` and cassette subdirectory on a shared server.
TEST_HEADER = "x-agentstream-test"

#: The four APIs ``Server.base_url`` knows.
API = Literal["openai", "responses", "anthropic", "gemini"]

#: A script: a path to a JSON file, or the JSON itself (a list of turns or
#: an object ``{"rules": [...], "turns": [...]}``).
Script = Union[str, "os.PathLike[str]", List[Any], Dict[str, Any]]

_EXE = "agentstream.exe" if sys.platform == "win32" else "agentstream"
_BUILD_FROM_SOURCE = (
    "build it from source with `cargo install --path crates/agentstream-cli` "
    "in the agentstream repository, or set AGENTSTREAM_BIN to its path"
)


class ServerError(RuntimeError):
    """The server did not start, exited, or answered a control call with an
    error. ``stderr`` holds what the binary printed on its standard error
    (empty when it is still running), ``status`` the HTTP status of a failed
    control call."""

    def __init__(self, message: str, *, stderr: str = "", status: Optional[int] = None) -> None:
        super().__init__(message)
        self.stderr = stderr
        self.status = status


def binary_path() -> str:
    """The ``agentstream`` binary: ``$AGENTSTREAM_BIN`` when set, else the
    one this package installed beside the Python interpreter's scripts,
    else the first on ``PATH``.

    Raises ``ServerError`` when there is none."""
    explicit = os.environ.get("AGENTSTREAM_BIN")
    if explicit:
        return explicit
    scripts = sysconfig.get_path("scripts")
    candidates = [Path(scripts) / _EXE] if scripts else []
    candidates.append(Path(sys.executable).parent / _EXE)
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    found = shutil.which("agentstream")
    if found:
        return found
    raise ServerError(f"no agentstream binary for this platform: {_BUILD_FROM_SOURCE}")


def _root_of(url: str) -> str:
    """The server's root URL from the base URL it prints (``…/v1``)."""
    url = url.strip().rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


class _Process:
    """The running binary, shared by a server and its per-test views."""

    def __init__(self, command: List[str], timeout: float, scratch: Optional[str]) -> None:
        self.scratch = scratch
        self.stderr_file: IO[bytes] = tempfile.TemporaryFile()
        try:
            self.popen: subprocess.Popen[str] = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=self.stderr_file,
                text=True,
            )
        except OSError as error:
            self.stderr_file.close()
            raise ServerError(f"cannot run {command[0]}: {error}; {_BUILD_FROM_SOURCE}") from error
        self.url = self._first_line(command, timeout)

    def _first_line(self, command: List[str], timeout: float) -> str:
        lines: "queue.Queue[str]" = queue.Queue()
        stdout = self.popen.stdout
        assert stdout is not None
        reader = threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True)
        reader.start()
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            self.stop()
            raise ServerError(
                f"{' '.join(command)} printed no URL within {timeout} s", stderr=self.stderr()
            ) from None
        if not line.strip():
            status = self.popen.wait()
            stderr = self.stderr()
            self.stop()
            raise ServerError(
                f"{' '.join(command)} exited with status {status} before serving:\n{stderr.strip()}",
                stderr=stderr,
            )
        return line.strip()

    def stderr(self) -> str:
        self.stderr_file.seek(0)
        return self.stderr_file.read().decode("utf-8", "replace")

    def stop(self) -> None:
        if self.popen.poll() is None:
            if sys.platform == "win32":
                self.popen.terminate()
            else:
                self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        if self.popen.stdout is not None:
            self.popen.stdout.close()
        self.stderr_file.close()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None


class Server:
    """``agentstream serve`` on a free port of 127.0.0.1, started when the
    object is made and stopped by ``close()`` (or the ``with`` block's end).

    Give one source of answers: ``script`` (a path to a JSON file, or a
    list of turns or a ``{"rules", "turns"}`` object, written to a temporary
    file), ``replay`` (a cassette directory), or ``upstream`` with
    ``record`` (a recording proxy). With none, the script is empty: every
    call is past the end until ``set_script`` gives one. ``strict`` answers
    a call no rule matches with HTTP 400; ``args`` are more command-line
    arguments (``["--chunks", "3"]``). ``test_id`` makes every call of this
    object's control methods, and of clients given ``headers``, that test's
    (see ``for_test``). A bad script or cassette directory raises
    ``ServerError`` at once, with the binary's message.
    """

    def __init__(
        self,
        script: Optional[Script] = None,
        *,
        replay: Union[str, "os.PathLike[str]", None] = None,
        upstream: Optional[str] = None,
        record: Union[str, "os.PathLike[str]", None] = None,
        strict: bool = False,
        args: Sequence[str] = (),
        test_id: Optional[str] = None,
        binary: Optional[str] = None,
        startup_timeout: float = 30.0,
    ) -> None:
        if (upstream is None) != (record is None):
            raise ValueError("upstream and record go together")
        sources = sum(x is not None for x in (script, replay, upstream))
        if sources > 1:
            raise ValueError("give one of script, replay or upstream/record")
        command = [binary or binary_path(), "serve"]
        scratch = None
        if upstream is not None:
            command += ["--upstream", upstream, "--record", os.fspath(record)]  # type: ignore[arg-type]
        elif replay is not None:
            command += ["--replay", os.fspath(replay)]
        else:
            if script is None or isinstance(script, (list, dict)):
                scratch = tempfile.mkdtemp(prefix="agentstream-")
                path = os.path.join(scratch, "script.json")
                with open(path, "w", encoding="utf-8") as file:
                    json.dump([] if script is None else script, file)
                command.append(path)
            else:
                command.append(os.fspath(script))
            if strict:
                command.append("--strict")
        if strict and (replay is not None or upstream is not None):
            raise ValueError("strict applies to a script only")
        command += ["--port", "0", *args]
        self._process: Optional[_Process] = _Process(command, startup_timeout, scratch)
        self._owner = True
        self._url = self._process.url
        self.test_id = test_id

    @classmethod
    def connect(cls, url: str, test_id: Optional[str] = None) -> "Server":
        """A handle on a server already running at ``url`` (its root or the
        ``…/v1`` it printed), which ``close()`` leaves running."""
        server = cls.__new__(cls)
        server._process = None
        server._owner = False
        server._url = url.strip()
        server.test_id = test_id
        return server

    def for_test(self, test_id: str) -> "Server":
        """A handle on this same server whose ``headers`` and control calls
        carry ``test_id`` (its own script, cursor, request log and unused
        list); ``close()`` on it leaves the server running."""
        view = Server.connect(self._url, test_id)
        view._process = self._process
        return view

    @property
    def url(self) -> str:
        """The base URL the binary printed (``http://127.0.0.1:PORT/v1``)."""
        return _root_of(self._url) + "/v1"

    @property
    def root(self) -> str:
        """The server's root URL, ``http://127.0.0.1:PORT``."""
        return _root_of(self._url)

    def base_url(self, api: API = "openai") -> str:
        """What the official SDK of ``api`` takes as its base URL:
        ``http://127.0.0.1:PORT/v1`` for ``"openai"`` and ``"responses"``
        (the ``openai`` SDKs), the root for ``"anthropic"`` and
        ``"gemini"`` (the ``anthropic`` and ``google-genai`` SDKs add the
        version themselves)."""
        if api in ("openai", "responses"):
            return self.url
        if api in ("anthropic", "gemini"):
            return self.root
        raise ValueError(f"unknown API {api!r}: one of openai, responses, anthropic, gemini")

    @property
    def headers(self) -> Dict[str, str]:
        """The headers a client sends so its calls are this handle's test's:
        ``{"x-agentstream-test": ID}``, or ``{}`` without a test id."""
        return {TEST_HEADER: self.test_id} if self.test_id is not None else {}

    def _call(self, method: str, path: str, body: Optional[bytes] = None) -> Any:
        request = urllib.request.Request(self.root + path, data=body, method=method, headers=dict(self.headers))
        if body:
            request.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            text = error.read().decode("utf-8", "replace")
            raise ServerError(f"{method} {path}: HTTP {error.code}: {text}", status=error.code) from None
        except urllib.error.URLError as error:
            stderr = self._process.stderr() if self._process is not None and self._owner else ""
            raise ServerError(f"{method} {path}: {error.reason}", stderr=stderr) from None

    def requests(self, raw: bool = False) -> List[Dict[str, Any]]:
        """The requests this handle's test made (all without a test id),
        oldest first, each decoded into Pi's context and options; with
        ``raw``, each also carries its body as received."""
        result: List[Dict[str, Any]] = self._call("GET", "/v1/requests" + ("?raw=1" if raw else ""))
        return result

    def unused(self) -> Dict[str, Any]:
        """The rules that never answered and the turns no call reached."""
        result: Dict[str, Any] = self._call("GET", "/v1/unused")
        return result

    def reset(self) -> Dict[str, Any]:
        """Rewinds the script and clears the request log: this handle's
        test's only when it has a test id, else the whole server's."""
        result: Dict[str, Any] = self._call("POST", "/v1/reset", b"")
        return result

    def set_script(self, script: Union[List[Any], Dict[str, Any], str], append: bool = False) -> Dict[str, Any]:
        """Replaces the script (this test's when the handle has a test id)
        with ``script`` (a list of turns, a ``{"rules", "turns"}`` object,
        or that JSON as a string); ``append`` extends it instead."""
        body = script if isinstance(script, str) else json.dumps(script)
        result: Dict[str, Any] = self._call(
            "POST", "/v1/script" + ("?append=1" if append else ""), body.encode("utf-8")
        )
        return result

    def stderr(self) -> str:
        """What the binary printed on its standard error so far."""
        return self._process.stderr() if self._process is not None else ""

    def close(self) -> None:
        """Stops the server (SIGINT, then a kill after 10 s) if this handle
        started it; a handle from ``connect`` or ``for_test`` does nothing."""
        if self._owner and self._process is not None:
            self._process.stop()
            self._process = None

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        test = f", test_id={self.test_id!r}" if self.test_id is not None else ""
        return f"Server({self.root!r}{test})"

