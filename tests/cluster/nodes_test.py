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
  doctor        `tether doctor --store URL` checks the database
  admissions    the same input ids posted through both nodes at once: one
                record each, one order
  db-restart    PostgreSQL restarted while inputs are posted: 503s meanwhile,
                no acknowledged input lost

Usage: nodes_test.py TETHER_BINARY
"""
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_lib import PG, TOKEN, Failure, Node, eventually, start_cluster, stop_cluster  # noqa: E402

TETHER = os.path.abspath(sys.argv[1])
LEASE_MS = 2000

work = tempfile.mkdtemp(prefix="tether-cluster-")
os.chmod(work, 0o755)  # the database runs as the postgres user and lives inside


def fail(msg):
    raise Failure(msg)


def new_session(node, name):
    ws = os.path.join(work, "ws", name)
    os.makedirs(ws, exist_ok=True)
    s = node.call("POST", "/v1/sessions", {"title": name, "workspace": ws})
    return s["session"]["id"], ws


def node_of(x):
    """The node name of an execution's owner ("node-a/<incarnation>")."""
    return x["node"].split("/")[0]


def executions(node, sid):
    return node.call("GET", "/v1/sessions/%s/executions" % sid)["executions"]


def replies(node, sid, text):
    msgs = node.call("GET", "/v1/sessions/%s/messages" % sid)["messages"]
    return [m for m in msgs if m["role"] == "assistant" and text in m.get("text", "")]


def restart_notice(node, sid):
    """The notice the node that takes a session over writes first."""
    msgs = node.call("GET", "/v1/sessions/%s/messages" % sid)["messages"]
    return [m for m in msgs if m["role"] == "synthetic" and "restarted" in m.get("text", "")]


def running_on(node, sid, name):
    try:
        return eventually("a turn of %s running on %s" % (sid, name),
                          lambda: [x for x in executions(node, sid) if x["status"] == "running" and node_of(x) == name])
    except Failure as e:
        raise Failure("%s; executions: %s; session: %s" % (e, executions(node, sid),
                                                           node.call("GET", "/v1/sessions/%s" % sid)["session"]))


def scenario_takeover(a, b):
    sid, ws = new_session(a, "takeover")
    a.call("POST", "/v1/sessions/%s/inputs" % sid, {"text": "Wait for file go\nReply with exactly: SURVIVED-KILL"})
    running_on(a, sid, "node-a")
    time.sleep(0.3)
    killed = time.monotonic()
    a.kill()
    eventually("node-b takes the turn over", lambda: restart_notice(b, sid), timeout=LEASE_MS / 1000 + 20)
    taken = time.monotonic() - killed
    open(os.path.join(ws, "go"), "w").close()
    eventually("the turn finishes on node-b", lambda: replies(b, sid, "SURVIVED-KILL"))
    done = time.monotonic() - killed
    if len(replies(b, sid, "SURVIVED-KILL")) != 1:
        fail("the answer is not there exactly once")
    if len(restart_notice(b, sid)) != 1:
        fail("the turn was taken over more than once")
    xs = executions(b, sid)
    if len(xs) != 1 or xs[0]["status"] != "finished" or xs[0]["outcome"] != "succeeded":
        fail("the execution after the takeover: %s" % xs)
    print("takeover: SIGKILL -> node-b took the turn over in %.2f s (lease %d ms), answered in %.2f s"
          % (taken, LEASE_MS, done))
    a.start()


def scenario_zombie(a, b):
    sid, ws = new_session(a, "zombie")
    a.call("POST", "/v1/sessions/%s/inputs" % sid, {"text": "Wait for file go\nReply with exactly: ONLY-ONCE"})
    running_on(a, sid, "node-a")
    time.sleep(0.3)
    a.kill(signal.SIGSTOP)
    eventually("node-b takes over the paused node's turn", lambda: restart_notice(b, sid),
               timeout=LEASE_MS / 1000 + 20)
    open(os.path.join(ws, "go"), "w").close()
    eventually("node-b answers", lambda: replies(b, sid, "ONLY-ONCE"))
    before = b.call("GET", "/v1/sessions/%s" % sid)["session"]
    a.kill(signal.SIGCONT)
    time.sleep(LEASE_MS / 1000 + 1.0)  # the zombie wakes, finds its wait done, and tries to write
    after = b.call("GET", "/v1/sessions/%s" % sid)["session"]
    if len(replies(b, sid, "ONLY-ONCE")) != 1:
        fail("the answer is duplicated after the zombie woke")
    xs = executions(b, sid)
    if len(xs) != 1 or xs[0]["status"] != "finished" or xs[0]["outcome"] != "succeeded":
        fail("the execution node-b finished: %s" % xs)
    last_before = before["last_seq"]
    last_after = after["last_seq"]
    if last_before != last_after:
        fail("the log grew after the zombie woke (%s -> %s): it wrote something" % (last_before, last_after))
    print("zombie: SIGSTOP past the lease, SIGCONT: nothing written (last seq %s), one answer" % last_after)


def scenario_steer(a, b):
    sid, ws = new_session(a, "steer")
    a.call("POST", "/v1/sessions/%s/inputs" % sid, {"text": "Wait for file go\nReply with exactly: FIRST"})
    x = running_on(a, sid, "node-a")[0]
    sent = time.monotonic()
    inp = b.call("POST", "/v1/sessions/%s/inputs" % sid,
                 {"text": "Reply with exactly: STEERED", "delivery": "steer"})["input"]
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
    if not ack["interrupted"]:
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
    bad = [c for c in codes["a"] + codes["b"] if c not in (200, 202)]
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
            if status in (200, 202):
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


def scenario_doctor(url):
    """`tether doctor --store URL` checks the connection, the schema version and the clock."""
    out = subprocess.run([TETHER, "doctor", "--store", url, "--json"], capture_output=True, text=True,
                         env=dict(os.environ, TETHER_TOKEN=TOKEN))
    checks = {c["check"]: c for c in json.loads(out.stdout.strip().splitlines()[-1])["checks"]}
    for name in ("store", "store schema", "store clock"):
        if checks.get(name, {}).get("status") != "ok":
            fail("doctor's %s check: %s" % (name, checks.get(name)))
    # The nodes migrated it: the current version, nothing left to migrate.
    if "PostgreSQL 1" not in checks["store"]["detail"] or not re.fullmatch(r"version \d+", checks["store schema"]["detail"]):
        fail("doctor says: %s" % checks)
    bad = subprocess.run([TETHER, "doctor", "--store", "postgresql://tether@/nosuchdb?host=/nonexistent", "--json"],
                         capture_output=True, text=True)
    checks = {c["check"]: c for c in json.loads(bad.stdout.strip().splitlines()[-1])["checks"]}
    if bad.returncode == 0 or checks.get("store", {}).get("status") != "broken":
        fail("doctor with an unreachable store: exit %d, %s" % (bad.returncode, checks.get("store")))
    print("doctor: store, schema and clock checked; an unreachable store is reported broken")


def main():
    pg_dir = os.path.join(work, "pg")
    url = start_cluster(pg_dir)
    nodes = []
    try:
        a = Node(TETHER, work, "node-a", url, LEASE_MS)
        b = Node(TETHER, work, "node-b", url, LEASE_MS)
        nodes = [a, b]
        scenario_doctor(url)
        scenario_tail(a, b)
        scenario_admissions(a, b)
        scenario_steer(a, b)
        scenario_interrupt(a, b)
        scenario_takeover(a, b)
        scenario_zombie(a, b)
        scenario_db_restart(a, b, pg_dir)
        print("PASS")
    except Failure as e:
        print("FAIL:", e)
        for n in nodes:
            print("--- log of %s:\n%s" % (n.name, n.log_tail()))
        raise SystemExit(1)
    finally:
        for n in nodes:
            n.stop()
        stop_cluster(pg_dir)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
