"""A tiny test runner shared by the client checks: runs every `test_*`
function of a module, prints each outcome and `N passed, M failed`, and
exits 1 when anything failed."""

import json
import os
import sys
import traceback
import urllib.request

URL = os.environ["AGENTSTREAM_URL"]  # http://127.0.0.1:PORT/v1
SCRIPT = json.load(open(os.environ["AGENTSTREAM_SCRIPT"], encoding="utf-8"))


def turn(index):
    """The scripted turn `index`: its text, tool calls and usage."""
    message = SCRIPT[index]
    text = "".join(b["text"] for b in message["content"] if b["type"] == "text")
    calls = [b for b in message["content"] if b["type"] == "toolCall"]
    return text, calls, message["usage"]


def recorded():
    """The requests the server recorded, in Pi's JSON."""
    with urllib.request.urlopen(URL + "/requests") as response:
        return json.load(response)


def run(module):
    tests = [(name, getattr(module, name)) for name in sorted(dir(module)) if name.startswith("test_")]
    passed = failed = 0
    for name, test in tests:
        try:
            test()
        except Exception:  # noqa: BLE001 - report every failure and go on
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
        else:
            passed += 1
            print(f"ok   {name}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
