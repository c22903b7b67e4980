#!/usr/bin/env python3
"""Independent cross-check of `agentstream validate` and `normalize`.

Usage:
  pi_crosscheck.py LOG.jsonl                 print message and linkage counts
  pi_crosscheck.py LOG.jsonl NORMALIZED.jsonl also compare every line

This re-implements the linkage rules documented in
crates/agentstream/src/message/linkage.rs without sharing any code with it:
  orphan-tool-result      result whose toolCallId matches no earlier call
  tool-name-mismatch      first result of a call names a different tool
  duplicate-tool-call-id  a call id seen before (the later call replaces it)
  duplicate-tool-result   a result for a call that was already answered
  unanswered-tool-call    a call of the latest assistant message without a
                          result when the next user/assistant message arrives
  tool-use-without-call   stopReason toolUse and no toolCall block
The comparison uses Python's json module: 1 == 1.0, dict order ignored,
floats parsed exactly; absent and null keys differ.
"""
import collections
import json
import sys


def messages(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            entry = json.loads(line)
            if entry.get("type") == "message":
                yield entry["message"]
            elif "type" not in entry and "role" in entry:
                yield entry


def linkage(msgs):
    counts = collections.Counter()
    calls = {}  # id -> [name, answered]
    pending = []
    for m in msgs:
        role = m.get("role")
        if role in ("user", "assistant"):
            counts["unanswered-tool-call"] += sum(1 for i in pending if not calls[i][1])
            pending = []
        if role == "assistant":
            ids = [b["id"] for b in m["content"] if b.get("type") == "toolCall"]
            names = [b["name"] for b in m["content"] if b.get("type") == "toolCall"]
            for i, n in zip(ids, names):
                if i in calls:
                    counts["duplicate-tool-call-id"] += 1
                calls[i] = [n, False]
                if i not in pending:
                    pending.append(i)
            if m["stopReason"] == "toolUse" and not ids:
                counts["tool-use-without-call"] += 1
        elif role == "toolResult":
            call = calls.get(m["toolCallId"])
            if call is None:
                counts["orphan-tool-result"] += 1
            elif call[1]:
                counts["duplicate-tool-result"] += 1
            else:
                call[1] = True
                if call[0] != m["toolName"]:
                    counts["tool-name-mismatch"] += 1
    return counts


def same(a, b):
    # bool is a subclass of int in Python; keep true != 1 as in JavaScript.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return type(a) is type(b) and a == b


def main():
    msgs = list(messages(sys.argv[1]))
    counts = linkage(msgs)
    print(f"messages {len(msgs)}")
    print(f"diagnostics {sum(counts.values())}")
    for code, n in sorted(counts.items()):
        print(f"  {code} {n}")
    if len(sys.argv) > 2:
        with open(sys.argv[1], encoding="utf-8") as f1, open(sys.argv[2], encoding="utf-8") as f2:
            orig = [json.loads(l) for l in f1 if l.strip()]
            norm = [json.loads(l) for l in f2 if l.strip()]
        bad = [i + 1 for i, (a, b) in enumerate(zip(orig, norm)) if not same(a, b)]
        if len(orig) != len(norm):
            bad.append(f"line count {len(orig)} != {len(norm)}")
        print(f"normalize mismatches {len(bad)}")
        for b in bad[:10]:
            print(f"  {b}")
        if bad:
            sys.exit(1)


if __name__ == "__main__":
    main()
