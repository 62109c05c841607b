#!/usr/bin/env python3
"""tether cluster bench: `tether serve` nodes on one PostgreSQL database
(a throwaway cluster, scripts/pg-cluster), measured as a black box over HTTP.

  throughput  N sessions at once, each running T turns one after the other
              ("Reply with exactly: …", the built-in scripted model of each
              node), on one node with SQLite, one node with PostgreSQL and
              two nodes with PostgreSQL (sessions split between them):
              turns/s and the turn latency (POST of the input → its
              execution finished, polled every 5 ms, so the figures include
              this client's own cost; compare them with each other)
  takeover    R times: a turn waits on node A, A is SIGKILLed, the time until
              node B has written its restart notice (lease period 2 s,
              scans every 200 ms); then A is started again

Usage: cluster_bench.py TETHER_BINARY [--sessions N] [--turns T] [--takeovers R] [--out FILE.json]
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "cluster"))
from cluster_lib import Node, eventually, start_cluster, stop_cluster  # noqa: E402

LEASE_MS = 2000


def pct(values, q):
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def run_turns(nodes, work, sessions, turns):
    ws = os.path.join(work, "ws")
    os.makedirs(ws, exist_ok=True)
    sids = []
    for i in range(sessions):
        n = nodes[i % len(nodes)]
        sids.append((n, n.call("POST", "/v1/sessions", {"title": "b%d" % i, "workspace": ws})["session"]["id"]))
    latencies = []
    lock = threading.Lock()

    def session(node, sid):
        for t in range(turns):
            start = time.monotonic()
            node.call("POST", "/v1/sessions/%s/inputs" % sid, {"text": "Reply with exactly: turn %d" % t})
            while True:
                xs = node.call("GET", "/v1/sessions/%s/executions" % sid)["executions"]
                if len(xs) == t + 1 and xs[-1]["status"] == "finished":
                    break
                time.sleep(0.005)
            with lock:
                latencies.append((time.monotonic() - start) * 1000)
    threads = [threading.Thread(target=session, args=s) for s in sids]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    secs = time.monotonic() - began
    return {"turns": sessions * turns, "seconds": round(secs, 3), "turns_per_s": round(sessions * turns / secs, 1),
            "latency_p50_ms": round(pct(latencies, 0.5), 1), "latency_p95_ms": round(pct(latencies, 0.95), 1)}


def takeovers(a, b, work, rounds):
    ws = os.path.join(work, "ws")
    os.makedirs(ws, exist_ok=True)
    times = []
    for r in range(rounds):
        sid = a.call("POST", "/v1/sessions", {"title": "t%d" % r, "workspace": ws})["session"]["id"]
        a.call("POST", "/v1/sessions/%s/inputs" % sid, {"text": "Wait for file never-%d\nReply with exactly: x" % r})
        eventually("the turn runs on A", lambda: any(x["status"] == "running" for x in
                                                    a.call("GET", "/v1/sessions/%s/executions" % sid)["executions"]))
        time.sleep(0.5)  # a renewal or two
        killed = time.monotonic()
        a.kill()

        def notice():
            msgs = b.call("GET", "/v1/sessions/%s/messages" % sid)["messages"]
            return any(m["role"] == "synthetic" and "restarted" in m.get("text", "") for m in msgs)
        eventually("node B takes over", notice, timeout=30)
        times.append(time.monotonic() - killed)
        a.start()
        b.call("POST", "/v1/sessions/%s/interrupt" % sid, {})
    return {"rounds": rounds, "lease_ms": LEASE_MS, "median_s": round(statistics.median(times), 2),
            "max_s": round(max(times), 2), "all_s": [round(t, 2) for t in times]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tether")
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--takeovers", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()
    tether = os.path.abspath(args.tether)
    work = tempfile.mkdtemp(prefix="tether-cluster-bench-")
    os.chmod(work, 0o755)
    pg_dir = os.path.join(work, "pg")
    url = start_cluster(pg_dir)
    report = {"benchmark": "cluster", "sessions": args.sessions, "turns_per_session": args.turns}
    nodes = []
    try:
        # One node on SQLite (the config without a store).
        sqlite_node = Node(tether, work, "sqlite-node", "", LEASE_MS)
        nodes.append(sqlite_node)
        report["sqlite_1_node"] = run_turns([sqlite_node], work, args.sessions, args.turns)
        sqlite_node.stop()
        a = Node(tether, work, "node-a", url, LEASE_MS)
        nodes.append(a)
        report["postgres_1_node"] = run_turns([a], work, args.sessions, args.turns)
        b = Node(tether, work, "node-b", url, LEASE_MS)
        nodes.append(b)
        report["postgres_2_nodes"] = run_turns([a, b], work, args.sessions, args.turns)
        report["takeover"] = takeovers(a, b, work, args.takeovers)
    finally:
        for n in nodes:
            n.stop()
        stop_cluster(pg_dir)
        shutil.rmtree(work, ignore_errors=True)
    for k in ("sqlite_1_node", "postgres_1_node", "postgres_2_nodes"):
        r = report[k]
        print("%-18s %5d turns %7.2f s %7.1f turns/s  latency p50 %6.1f ms p95 %6.1f ms"
              % (k, r["turns"], r["seconds"], r["turns_per_s"], r["latency_p50_ms"], r["latency_p95_ms"]))
    t = report["takeover"]
    print("takeover after SIGKILL (lease %d ms): median %.2f s, max %.2f s over %d rounds; target <= lease + 1 s: %s"
          % (t["lease_ms"], t["median_s"], t["max_s"], t["rounds"],
             "met" if t["max_s"] <= t["lease_ms"] / 1000 + 1 else "NOT met"))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
