#!/usr/bin/env python3
"""Several `tether serve` nodes on one PostgreSQL database, as real processes.

A throwaway cluster of its own (scripts/pg-cluster), two nodes with short
leases, the built-in scripted model. Each scenario asserts behaviour; the
times it prints (takeover, steer and interrupt latency) are for the reader,
never pass/fail:

  takeover      the node running a turn is SIGKILLed; the other finishes it
  zombie        the node running a turn is SIGSTOPped past its lease, the
                other takes over; after SIGCONT nothing it writes is visible
                and the answer is not duplicated
  steer         a follow-up sent to node B reaches the turn running on A
  interrupt     an interrupt sent to B stops the turn running on A
  tail          an SSE client on B sees A's events in order, resumes with
                Last-Event-ID
  admissions    the same input ids posted through both nodes at once: one
                record each, one order
  db-restart    PostgreSQL restarted while inputs are posted: 503s meanwhile,
                no acknowledged input lost

Usage: nodes_test.py TETHER_BINARY
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import http.client

TETHER = os.path.abspath(sys.argv[1])
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PG = os.path.join(ROOT, "scripts", "pg-cluster")
TOKEN = "cluster-test-token-0123456789"
LEASE_MS = 2000

work = tempfile.mkdtemp(prefix="tether-cluster-")
procs = []


def fail(msg):
    print("FAIL:", msg)
    for p in procs:
        log = getattr(p, "log_path", None)
        if log and os.path.exists(log):
            print("--- log of", p.name)
            with open(log, errors="replace") as f:
                print("".join(f.readlines()[-25:]))
    raise SystemExit(1)


class Node:
    def __init__(self, name, url):
        self.name = name
        self.data = os.path.join(work, name)
        self.log_path = os.path.join(work, name + ".log")
        cfg = os.path.join(work, name + ".toml")
        with open(cfg, "w") as f:
            f.write('store = "%s"\nworkspace_roots = ["%s"]\n[leases]\nttl_ms = %d\nrenew_ms = 500\nscan_ms = 200\n'
                    % (url, os.path.join(work, "ws"), LEASE_MS))
        self.cfg = cfg
        self.proc = None
        self.start()

    def start(self):
        env = dict(os.environ, TETHER_TOKEN=TOKEN)
        env.pop("TETHER_CONFIG", None)
        self.proc = subprocess.Popen(
            [TETHER, "serve", "--config", self.cfg, "--data", self.data, "--listen", "127.0.0.1:0", "--node",
             self.name], stdout=subprocess.PIPE, stderr=open(self.log_path, "a"), env=env, text=True)
        self.proc.name = self.name
        self.proc.log_path = self.log_path
        procs.append(self.proc)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            fail("%s did not start: %r" % (self.name, line))
        self.base = line.split("listening on ", 1)[1].strip()

    def kill(self, sig=signal.SIGKILL):
        self.proc.send_signal(sig)
        if sig in (signal.SIGKILL, signal.SIGTERM):
            self.proc.wait(timeout=30)

    def call(self, method, path, body=None, ok=(200, 201, 202)):
        status, data = self.request(method, path, body)
        if status not in ok:
            fail("%s %s on %s: %d %s" % (method, path, self.name, status, data))
        return data

    def request(self, method, path, body=None, timeout=30):
        req = urllib.request.Request(self.base + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": "Bearer " + TOKEN,
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, raw.decode(errors="replace")


def eventually(what, pred, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    fail("never: " + what)


def new_session(node, name):
    ws = os.path.join(work, "ws", name)
    os.makedirs(ws, exist_ok=True)
    s = node.call("POST", "/v1/sessions", {"title": name, "workspace": ws})
    return s["id"], ws


def executions(node, sid):
    return node.call("GET", "/v1/sessions/%s/executions" % sid)["executions"]


def replies(node, sid, text):
    msgs = node.call("GET", "/v1/sessions/%s/messages" % sid)["messages"]
    return [m for m in msgs if m["role"] == "assistant" and text in m.get("text", "")]


def running_on(node, sid, name):
    return eventually("a turn of %s running on %s" % (sid, name),
                      lambda: [x for x in executions(node, sid) if x["status"] == "running" and x["node"] == name])


def scenario_takeover(a, b):
    sid, ws = new_session(a, "takeover")
    a.call("POST", "/v1/sessions/%s/inputs" % sid, {"text": "Wait for file go\nReply with exactly: SURVIVED-KILL"})
    running_on(a, sid, "node-a")
    time.sleep(0.3)
    killed = time.monotonic()
    a.kill()
    open(os.path.join(ws, "go"), "w").close()
    eventually("node-b takes the turn over", lambda: [x for x in executions(b, sid) if x["node"] == "node-b"])
    taken = time.monotonic() - killed
    eventually("the turn finishes on node-b", lambda: replies(b, sid, "SURVIVED-KILL"))
    done = time.monotonic() - killed
    if len(replies(b, sid, "SURVIVED-KILL")) != 1:
        fail("the answer is not there exactly once")
    xs = executions(b, sid)
    if [x["status"] for x in xs] != ["finished", "finished"] or xs[1]["outcome"] != "succeeded":
        fail("executions after the takeover: %s" % xs)
    msgs = b.call("GET", "/v1/sessions/%s/messages" % sid)["messages"]
    if not any(m["role"] == "synthetic" for m in msgs):
        fail("no restart notice in %s" % msgs)
    print("takeover: SIGKILL -> node-b started the turn in %.2f s, answered in %.2f s (lease %d ms)"
          % (taken, done, LEASE_MS))
    a.start()


def scenario_zombie(a, b):
    sid, ws = new_session(a, "zombie")
    a.call("POST", "/v1/sessions/%s/inputs" % sid, {"text": "Wait for file go\nReply with exactly: ONLY-ONCE"})
    running_on(a, sid, "node-a")
    time.sleep(0.3)
    a.kill(signal.SIGSTOP)
    eventually("node-b takes over the paused node's turn",
               lambda: [x for x in executions(b, sid) if x["node"] == "node-b"], timeout=LEASE_MS / 1000 + 20)
    open(os.path.join(ws, "go"), "w").close()
    eventually("node-b answers", lambda: replies(b, sid, "ONLY-ONCE"))
    before = b.call("GET", "/v1/sessions/%s" % sid)
    a.kill(signal.SIGCONT)
    time.sleep(LEASE_MS / 1000 + 1.0)  # the zombie wakes, finds its wait done, and tries to write
    after = b.call("GET", "/v1/sessions/%s" % sid)
    if len(replies(b, sid, "ONLY-ONCE")) != 1:
        fail("the answer is duplicated after the zombie woke")
    page = b.call("GET", "/v1/sessions/%s/events?after=0&limit=10000" % sid, ok=(200,)) if False else None
    del page
    xs = executions(b, sid)
    mine = [x for x in xs if x["node"] == "node-a"]
    if not mine or mine[0]["status"] != "finished":
        fail("the zombie's execution: %s" % xs)
    last_before = before.get("session", before).get("last_seq")
    last_after = after.get("session", after).get("last_seq")
    if last_before != last_after:
        fail("the log grew after the zombie woke (%s -> %s): it wrote something" % (last_before, last_after))
    print("zombie: SIGSTOP past the lease, SIGCONT: nothing written (last seq %s), one answer" % last_after)


def scenario_steer(a, b):
    sid, ws = new_session(a, "steer")
    a.call("POST", "/v1/sessions/%s/inputs" % sid, {"text": "Wait for file go\nReply with exactly: FIRST"})
    x = running_on(a, sid, "node-a")[0]
    sent = time.monotonic()
    inp = b.call("POST", "/v1/sessions/%s/inputs" % sid, {"text": "Reply with exactly: STEERED", "delivery": "steer"})
    open(os.path.join(ws, "go"), "w").close()

    def promoted():
        for i in b.call("GET", "/v1/sessions/%s/inputs" % sid)["inputs"]:
            if i["id"] == inp["id"] and i.get("execution"):
                return i
        return None
    got = eventually("the steer sent to node-b is promoted", promoted)
    latency = time.monotonic() - sent
    if got["execution"] != x["id"]:
        fail("the steer ran in %s, not in the running turn %s" % (got["execution"], x["id"]))
    eventually("the steered turn answers", lambda: replies(b, sid, "STEERED"))
    print("steer: sent to node-b, taken by the turn on node-a within %.2f s (the turn's next step)" % latency)


def scenario_interrupt(a, b):
    sid, ws = new_session(a, "interrupt")
    a.call("POST", "/v1/sessions/%s/inputs" % sid, {"text": "Wait for file never\nReply with exactly: NOPE"})
    x = running_on(a, sid, "node-a")[0]
    sent = time.monotonic()
    ack = b.call("POST", "/v1/sessions/%s/interrupt" % sid, {})
    if not ack.get("was_active", ack.get("interrupted", True)):
        fail("interrupt through node-b says nothing ran: %s" % ack)

    def stopped():
        for e in executions(a, sid):
            if e["id"] == x["id"] and e["status"] == "finished":
                return e
        return None
    e = eventually("the turn on node-a stops", stopped, timeout=15)
    latency = time.monotonic() - sent
    if e["outcome"] != "interrupted":
        fail("interrupted turn finished %s" % e)
    print("interrupt: sent to node-b, the turn on node-a finished interrupted in %.2f s" % latency)


def sse_events(node, sid, last_id, until, timeout=30):
    conn = http.client.HTTPConnection(node.base.split("//", 1)[1], timeout=timeout)
    headers = {"Authorization": "Bearer " + TOKEN, "Accept": "text/event-stream"}
    if last_id is not None:
        headers["Last-Event-ID"] = str(last_id)
    conn.request("GET", "/v1/sessions/%s/events" % sid, headers=headers)
    r = conn.getresponse()
    if r.status != 200:
        fail("SSE on %s: %d" % (node.name, r.status))
    ids, kind, data, seen = [], None, [], []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = r.fp.readline().decode()
        if not line:
            break
        line = line.rstrip("\n")
        if line.startswith("id:"):
            kind = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "":
            if kind is not None and data:
                ev = json.loads("\n".join(data))
                ids.append(int(kind))
                seen.append(ev)
                if until(ev):
                    break
            kind, data = None, []
    conn.close()
    return ids, seen


def scenario_tail(a, b):
    sid, ws = new_session(a, "tail")
    result = {}

    def watch():
        result["ids"], result["events"] = sse_events(
            b, sid, None, lambda ev: ev.get("type") == "execution.finished")
    t = threading.Thread(target=watch)
    t.start()
    time.sleep(0.5)
    a.call("POST", "/v1/sessions/%s/inputs" % sid, {"text": "Reply with exactly: TAILED"})
    t.join(40)
    ids = result.get("ids", [])
    if not ids or ids != list(range(ids[0], ids[0] + len(ids))):
        fail("node-b's tail of node-a's turn: ids %s" % ids)
    if not any(ev.get("type") == "execution.finished" for ev in result["events"]):
        fail("node-b's tail never saw the turn end")
    cut = ids[len(ids) // 2]
    again, _ = sse_events(b, sid, cut, lambda ev: True, timeout=10)
    if not again or again[0] != cut + 1:
        fail("resuming after %d on node-b starts at %s" % (cut, again[:1]))
    print("tail: node-b streamed %d durable events of node-a's turn in order; Last-Event-ID resumes" % len(ids))


def scenario_admissions(a, b):
    sid, ws = new_session(a, "admissions")
    ids = ["msg_same%03d" % i for i in range(40)]
    codes = {"a": [], "b": []}

    def post(node, key):
        for i in ids:
            status, _ = node.request("POST", "/v1/sessions/%s/inputs" % sid,
                                     {"id": i, "text": "Reply with exactly: x", "resume": False})
            codes[key].append(status)
    ta = threading.Thread(target=post, args=(a, "a"))
    tb = threading.Thread(target=post, args=(b, "b"))
    ta.start(); tb.start(); ta.join(); tb.join()
    bad = [c for c in codes["a"] + codes["b"] if c not in (200, 201)]
    if bad:
        fail("admissions through both nodes refused: %s" % bad)
    listed = [i for i in b.call("GET", "/v1/sessions/%s/inputs" % sid)["inputs"]]
    got = [i["id"] for i in listed]
    if sorted(got) != sorted(ids) or len(got) != len(set(got)):
        fail("inputs recorded: %s" % got)
    seqs = [i["admitted_seq"] for i in listed]
    if seqs != sorted(seqs):
        fail("not one order: %s" % seqs)
    print("admissions: %d ids posted through both nodes at once: %d records, one order" % (len(ids), len(got)))


def scenario_db_restart(a, b, pg_dir):
    sid, ws = new_session(a, "restart")
    acked, refused, stop = [], [], threading.Event()

    def load():
        n = 0
        while not stop.is_set():
            n += 1
            iid = "msg_load%05d" % n
            status, _ = a.request("POST", "/v1/sessions/%s/inputs" % sid,
                                  {"id": iid, "text": "x", "resume": False}, timeout=60)
            if status in (200, 201):
                acked.append(iid)
            else:
                if status != 503:
                    fail("during the restart a post answered %d (503 expected)" % status)
                refused.append(iid)
                time.sleep(0.02)
    t = threading.Thread(target=load)
    t.start()
    time.sleep(0.5)
    subprocess.run([PG, "restart", pg_dir], check=True, stdout=subprocess.DEVNULL)
    n = len(acked)
    eventually("writes are taken again", lambda: len(acked) > n + 20, timeout=40)
    stop.set()
    t.join(60)
    for n in (a, b):
        if n.proc.poll() is not None:
            fail("%s died during the database restart" % n.name)
    stored = {i["id"] for i in b.call("GET", "/v1/sessions/%s/inputs" % sid)["inputs"]}
    lost = [i for i in acked if i not in stored]
    if lost:
        fail("acknowledged inputs lost: %s" % lost[:5])
    print("db-restart: %d acknowledged, %d refused with 503 meanwhile, 0 lost" % (len(acked), len(refused)))


def main():
    pg_dir = os.path.join(work, "pg")
    url = subprocess.run([PG, "start", pg_dir], check=True, capture_output=True, text=True).stdout.strip()
    try:
        a = Node("node-a", url)
        b = Node("node-b", url)
        scenario_tail(a, b)
        scenario_admissions(a, b)
        scenario_steer(a, b)
        scenario_interrupt(a, b)
        scenario_takeover(a, b)
        scenario_zombie(a, b)
        scenario_db_restart(a, b, pg_dir)
        print("PASS")
    finally:
        for p in procs:
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGCONT)
                    p.terminate()
                    p.wait(timeout=20)
                except Exception:
                    p.kill()
        subprocess.run([PG, "stop", pg_dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
