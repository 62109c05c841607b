#!/usr/bin/env python3
"""A fake ACP agent for acp_test.cpp: JSON-RPC 2.0 on stdio, one object per
line. What a turn does is chosen by the prompt's first word:

  echo TEXT          replies TEXT in two chunks; usage {inputTokens 11,
                     outputTokens 7, cachedReadTokens 3}; usage_update cost 0.5
  permission KIND    a tool call of ACP kind KIND asks permission; replies the
                     optionId chosen (or "cancelled") and completes/fails the tool
  read PATH [L N]    fs/read_text_file; replies the content or "error: …"
  write PATH TEXT    fs/write_text_file; replies "ok" or "error: …"
  race-read P SECRET N   while another process swaps file P (absolute) between
                     a file holding "inside" and a symlink to SECRET, reads P
                     N times; replies "leaked K of N" (K: answers with
                     SECRET's text)
  race-write P SECRET N  the same swap, while writing "overwritten" to P N
                     times; replies "done N"
  fifo P             makes a FIFO at P (absolute), then writes and reads it;
                     replies "write: …; read: …" (ok or the error)
  ask METHOD         calls METHOD on the client; replies the error code it got
  tool               a tool whose input arrives in an update, then its output
  wait               waits for session/cancel, then stopReason cancelled
  crash              one chunk, then exits 3 with a line on stderr
  garbage            prints a line that is not JSON
  refuse             stopReason refusal
  fail               answers the prompt with an error
Sessions live in memory; session/load replays a chunk "REPLAYED" before it
answers, or fails -32002 for a session it does not know. FAKE_ACP_NO_LOAD=1
leaves out the loadSession capability. Every line received is appended to
$FAKE_ACP_LOG when set.
"""
import json
import os
import subprocess
import sys

sessions = {}
next_id = [1000]
cancelled = set()
log = os.environ.get("FAKE_ACP_LOG")


def send(msg):
    msg["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    if log:
        with open(log, "a") as f:
            f.write(line)
    return json.loads(line)


def note(msg):
    if msg.get("method") == "session/cancel":
        cancelled.add(msg["params"]["sessionId"])


def call(method, params):
    next_id[0] += 1
    my = next_id[0]
    send({"id": my, "method": method, "params": params})
    while True:
        msg = read()
        if msg.get("id") == my and "method" not in msg:
            return msg
        note(msg)


def update(sid, u):
    send({"method": "session/update", "params": {"sessionId": sid, "update": u}})


def chunk(sid, text):
    update(sid, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


# Swaps argv[1] between a file holding "inside" and a symlink to argv[2],
# each step an atomic rename, until killed.
SWAPPER = r"""
import os, sys
p, secret = sys.argv[1], sys.argv[2]
f, l = p + ".swap-f", p + ".swap-l"
while True:
    with open(f, "w") as fh:
        fh.write("inside")
    os.rename(f, p)
    try:
        os.remove(l)
    except FileNotFoundError:
        pass
    os.symlink(secret, l)
    os.rename(l, p)
"""


def race(sid, path, secret, n, method):
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, path, secret])
    try:
        with open(secret) as fh:
            secret_text = fh.read()
        leaked = 0
        for _ in range(n):
            if method == "read":
                r = call("fs/read_text_file", {"sessionId": sid, "path": path})
                if r.get("result", {}).get("content") == secret_text:
                    leaked += 1
            else:
                call("fs/write_text_file", {"sessionId": sid, "path": path, "content": "overwritten"})
        return "leaked %d of %d" % (leaked, n) if method == "read" else "done %d" % n
    finally:
        swapper.kill()
        swapper.wait()


def answer_of(r):
    return "ok" if "result" in r else "error: " + r["error"]["message"]


def prompt(rid, p):
    sid = p["sessionId"]
    text = "".join(b.get("text", "") for b in p["prompt"])
    sessions.setdefault(sid, []).append(text)
    word, _, rest = text.partition(" ")
    result = {"stopReason": "end_turn"}
    if word == "echo":
        chunk(sid, rest[: len(rest) // 2])
        chunk(sid, rest[len(rest) // 2 :])
        update(sid, {"sessionUpdate": "usage_update", "used": 10, "size": 1000,
                     "cost": {"amount": 0.5, "currency": "USD"}})
        result["usage"] = {"inputTokens": 11, "outputTokens": 7, "cachedReadTokens": 3, "totalTokens": 21}
    elif word == "permission":
        update(sid, {"sessionUpdate": "tool_call", "toolCallId": "p1", "title": "guarded", "kind": rest,
                     "status": "pending", "rawInput": {"what": rest}})
        r = call("session/request_permission", {
            "sessionId": sid, "toolCall": {"toolCallId": "p1"},
            "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "always", "name": "Always", "kind": "allow_always"},
                        {"optionId": "no", "name": "Reject", "kind": "reject_once"}]})
        outcome = r.get("result", {}).get("outcome", {})
        chosen = outcome.get("optionId", outcome.get("outcome", "?"))
        update(sid, {"sessionUpdate": "tool_call_update", "toolCallId": "p1",
                     "status": "completed" if chosen in ("yes", "always") else "failed"})
        chunk(sid, chosen)
    elif word == "read":
        args = rest.split(" ")
        params = {"sessionId": sid, "path": args[0]}
        if len(args) == 3:
            params["line"] = int(args[1])
            params["limit"] = int(args[2])
        r = call("fs/read_text_file", params)
        chunk(sid, r["result"]["content"] if "result" in r else "error: " + r["error"]["message"])
    elif word == "write":
        path, _, content = rest.partition(" ")
        r = call("fs/write_text_file", {"sessionId": sid, "path": path, "content": content})
        chunk(sid, "ok" if "result" in r else "error: " + r["error"]["message"])
    elif word in ("race-read", "race-write"):
        path, secret, n = rest.split(" ")
        chunk(sid, race(sid, path, secret, int(n), word[5:]))
    elif word == "fifo":
        os.mkfifo(rest)
        w = call("fs/write_text_file", {"sessionId": sid, "path": rest, "content": "x"})
        r = call("fs/read_text_file", {"sessionId": sid, "path": rest})
        chunk(sid, "write: %s; read: %s" % (answer_of(w), answer_of(r)))
    elif word == "ask":
        r = call(rest, {"sessionId": sid})
        chunk(sid, str(r.get("error", {}).get("code", "no error")))
    elif word == "tool":
        update(sid, {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Write x.txt", "kind": "edit",
                     "status": "pending", "rawInput": {}})
        update(sid, {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress",
                     "rawInput": {"path": "x.txt"}})
        update(sid, {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
                     "content": [{"type": "content", "content": {"type": "text", "text": "wrote it"}}]})
        update(sid, {"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "never ends", "kind": "execute",
                     "status": "in_progress"})
        chunk(sid, "after")
    elif word == "wait":
        chunk(sid, "waiting")
        while sid not in cancelled:
            msg = read()
            note(msg)
            if "method" in msg and "id" in msg:
                send({"id": msg["id"], "error": {"code": -32000, "message": "busy"}})
        result = {"stopReason": "cancelled"}
    elif word == "crash":
        chunk(sid, "about to crash")
        sys.stderr.write("fake agent: crashing\n")
        sys.stderr.flush()
        os._exit(3)
    elif word == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
        return
    elif word == "refuse":
        result = {"stopReason": "refusal"}
    elif word == "fail":
        send({"id": rid, "error": {"code": -32603, "message": "the model is gone"}})
        return
    send({"id": rid, "result": result})


def main():
    while True:
        msg = read()
        method = msg.get("method")
        rid = msg.get("id")
        p = msg.get("params", {})
        if method == "initialize":
            caps = {} if os.environ.get("FAKE_ACP_NO_LOAD") else {"loadSession": True}
            send({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": caps, "authMethods": []}})
        elif method == "session/new":
            sid = "fake-%d" % (len(sessions) + 1)
            sessions[sid] = []
            send({"id": rid, "result": {"sessionId": sid}})
        elif method == "session/load":
            sid = p.get("sessionId")
            if sid not in sessions:
                send({"id": rid, "error": {"code": -32002, "message": "Resource not found: " + str(sid)}})
                continue
            chunk(sid, "REPLAYED")
            send({"id": rid, "result": {}})
        elif method == "session/prompt":
            prompt(rid, p)
        elif rid is not None and method is not None:
            send({"id": rid, "error": {"code": -32601, "message": "Method not found"}})
        else:
            note(msg)


main()
