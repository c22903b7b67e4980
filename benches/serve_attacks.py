#!/usr/bin/env python3
"""The memory and connection attacks of issue 25 against `agentstream serve`,
with the figures benches/RESULTS.md reports ("serve under attack").

Usage: python3 benches/serve_attacks.py target/release/agentstream [LETTERS]
(LETTERS picks attacks, e.g. `F`; all of them by default.)

Needs Linux (it reads /proc/PID/status) and Python 3's standard library
only. Each attack starts its own server on a script of 40 text turns:

A. 10 requests whose bodies are 31 MiB each (one long user message):
   resident memory after them and its peak, and `GET /v1/requests`.
B. One request of 1,000,000 tiny messages (29.6 MiB): its time, the
   peak resident memory, and what stays resident after it.
C. 1,100 idle connections against a 1,024 file-descriptor limit, then a
   `GET /v1/models` probe.
D. `GET /v1/models` probes while B's request is being answered.
E. `Expect: 100-continue` with a 40 MB `Content-Length`: the first line
   of the answer (an early 413, not `100 Continue`).
F. 100 connections each declaring a 30,000,000-byte body and sending
   25 MB of it, then closing (issue 42, High 5): resident memory idle,
   at its peak, and 2 s and 12 s after they closed, with each one's
   ratio to the idle figure (the body bound refuses most of them with
   503; what matters is that the memory is given back).

The tests that hold serve to these bounds in CI are in
crates/agentstream-serve/tests/bad_clients.rs and
crates/agentstream-wire/tests/server_decode_memory.rs; this script gives the figures on a release build.
"""
import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time

binary = sys.argv[1]
# The attacks to run (letters), all by default: `serve_attacks.py BINARY F`.
only = sys.argv[2] if len(sys.argv) > 2 else "ABCDEF"
env = dict(os.environ)
script = os.path.join(tempfile.mkdtemp(), "script.json")
json.dump(["ok"] * 40, open(script, "w"))

def status(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key):
            return int(line.split()[1]) // 1024
def start():
    p = subprocess.Popen([binary, "serve", script], stdout=subprocess.PIPE, env=env)
    url = p.stdout.readline().decode().strip()
    port = int(url.split(":")[2].split("/")[0])
    return p, port
def post(port, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    c.request("POST", "/v1/chat/completions", body, {"content-type": "application/json"})
    r = c.getresponse(); data = r.read(); c.close()
    return r.status, len(data)
def get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t = time.time(); c.request("GET", path); r = c.getresponse(); data = r.read(); c.close()
    return r.status, len(data), time.time() - t

if "A" in only:
    # A: 10 bodies of 31 MiB (one long user message each).
    p, port = start()
    time.sleep(0.3)
    base = status(p.pid, "VmRSS")
    text = "x" * (31 * 1024 * 1024 - 200)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]}).encode()
    for _ in range(10):
        s, _ = post(port, body)
        assert s == 200, s
    time.sleep(0.5)
    a_rss, a_hwm = status(p.pid, "VmRSS"), status(p.pid, "VmHWM")
    gs, glen, gt = get(port, "/v1/requests")
    print(f"A 10x{len(body)/2**20:.1f} MiB: start {base} MB, after {a_rss} MB, peak {a_hwm} MB; GET /v1/requests {glen/2**20:.1f} MiB in {gt:.2f} s")
    p.terminate(); p.wait()

if "B" in only:
    # B: 1M tiny messages.
    p, port = start()
    time.sleep(0.3)
    base = status(p.pid, "VmRSS")
    msgs = ",".join(['{"role":"user","content":"hi"}'] * 1_000_000)
    body = ('{"model":"m","messages":[' + msgs + ']}').encode()
    t = time.time(); s, _ = post(port, body); dt = time.time() - t
    time.sleep(0.5)
    print(f"B 1M messages ({len(body)/2**20:.1f} MiB): status {s} in {dt:.1f} s; start {base} MB, peak {status(p.pid, 'VmHWM')} MB, after {status(p.pid, 'VmRSS')} MB")
    p.terminate(); p.wait()

if "C" in only:
    # C: 1,100 idle sockets with a 1,024 file-descriptor limit, then a probe.
    def limited():
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
    p = subprocess.Popen([binary, "serve", script], stdout=subprocess.PIPE, preexec_fn=limited)
    url = p.stdout.readline().decode().strip(); port = int(url.split(":")[2].split("/")[0])
    idle = []
    for _ in range(1100):
        s = socket.socket(); s.settimeout(5)
        try:
            s.connect(("127.0.0.1", port)); idle.append(s)
        except OSError:
            s.close()
    time.sleep(0.5)
    t = time.time()
    try:
        gs, _, gt = get(port, "/v1/models")
        print(f"C {len(idle)} idle sockets open: GET /v1/models {gs} in {gt*1000:.0f} ms")
    except Exception as e:
        print(f"C {len(idle)} idle sockets open: probe failed after {time.time()-t:.1f} s: {e}")
    for s in idle: s.close()
    p.terminate(); p.wait()

if "D" in only:
    # D: a 1M-message request, with /v1/models probes while it runs.
    p, port = start()
    time.sleep(0.3)
    done = []
    th = threading.Thread(target=lambda: done.append(post(port, body)))
    th.start()
    lat = []
    for _ in range(5):
        time.sleep(0.05)
        try:
            lat.append(round(get(port, "/v1/models")[2] * 1000, 1))
        except Exception as e:
            lat.append(str(e))
    th.join()
    print(f"D probes during a 1M-message request (answered {done[0][0]}): {lat} ms")

if "E" in only:
    # E: Expect: 100-continue with a 40 MB Content-Length.
    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(5)
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40000000\r\nExpect: 100-continue\r\n\r\n")
    print("E Expect: 100-continue, 40 MB:", s.recv(200).split(b"\r\n")[0].decode())
    s.close()
    p.terminate(); p.wait()

if "F" in only:
    # F: 100 connections each sending 25 MB of a 30 MB body, then closing.
    p, port = start()
    time.sleep(0.3)
    idle_rss = status(p.pid, "VmRSS")
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 30000000\r\n\r\n"
    piece = b" " * (1 << 20)
    def partial(s, total=25_000_000):
        sent = 0
        try:
            while sent < total:
                n = min(len(piece), total - sent)
                s.sendall(piece[:n]); sent += n
        except OSError:
            pass  # refused with 503 and closed: the bound at work
    senders = []
    for _ in range(100):
        s = socket.create_connection(("127.0.0.1", port)); s.sendall(head)
        senders.append((s, threading.Thread(target=partial, args=(s,))))
    for _, th in senders: th.start()
    for _, th in senders: th.join()
    time.sleep(1.0)
    peak = status(p.pid, "VmHWM")
    for s, _ in senders: s.close()
    time.sleep(2.0)
    after2 = status(p.pid, "VmRSS")
    time.sleep(10.0)
    after12 = status(p.pid, "VmRSS")
    print(f"F 100 partial 25 MB bodies: idle {idle_rss} MB, peak {peak} MB ({peak/idle_rss:.1f}x), "
          f"2 s after close {after2} MB ({after2/idle_rss:.1f}x), 12 s after {after12} MB ({after12/idle_rss:.1f}x)")
    p.terminate(); p.wait()
