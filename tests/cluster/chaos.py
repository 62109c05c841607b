#!/usr/bin/env python3
"""The chaos run (`make e2e`, not `make test`): three `tether serve` nodes on
one PostgreSQL database, a steady load of sessions, and every few seconds a
node SIGKILLed and started again, for --minutes (default 10).

Each turn streams its reply slowly (about half a second), so a kill often
lands mid-turn and another node takes the turn over. Clients behave as a
careful client does: each input has a client-chosen id
and is posted to a random live node until one acknowledges it (200/201; a
retry with the same id is an exact retry, never a second input). Each
session has one input in flight: its client waits for the answer (read from
any live node) before the next.

At the end the killing stops, the cluster settles, and every session is read
back: inputs acknowledged, answered, lost (acknowledged but not recorded, or
recorded but never answered; must be 0) and duplicated (an input recorded
twice, or its answer given twice; must be 0). Exit status 1 when either is
not 0.

Usage: chaos.py TETHER_BINARY [--minutes M] [--sessions N] [--out FILE.json]
"""
import argparse
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_lib import Failure, Node, start_cluster, stop_cluster  # noqa: E402

LEASE_MS = 2000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tether")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--sessions", type=int, default=12)
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    tether = os.path.abspath(args.tether)
    work = tempfile.mkdtemp(prefix="tether-chaos-")
    os.chmod(work, 0o755)  # the database runs as the postgres user and lives inside
    pg_dir = os.path.join(work, "pg")
    url = start_cluster(pg_dir)
    nodes = []
    lock = threading.Lock()
    stop = threading.Event()
    acknowledged = {}  # input id -> session
    sessions = []
    kills = 0
    stats = {"posts": 0, "refused": 0}

    def live():
        with lock:
            return [n for n in nodes if n.alive()]

    def any_call(method, path, body=None, until=30.0):
        deadline = time.monotonic() + until
        while time.monotonic() < deadline:
            candidates = live()
            if candidates:
                n = random.choice(candidates)
                status, data = n.request(method, path, body, timeout=10)
                if status in (200, 201, 202):
                    return data
            time.sleep(0.1)
        return None

    def client(sid, k):
        n = 0
        while not stop.is_set():
            n += 1
            iid = "msg_c%02d_%05d" % (k, n)
            # Streamed slowly (about half a second a turn), so kills land mid-turn.
            body = {"id": iid, "text": "Stream slowly: 25\nReply with exactly: ACK-%s" % iid}
            while not stop.is_set():  # until a node acknowledges it
                candidates = live()
                if not candidates:
                    time.sleep(0.1)
                    continue
                node = random.choice(candidates)
                status, _ = node.request("POST", "/v1/sessions/%s/inputs" % sid, body, timeout=10)
                with lock:
                    stats["posts"] += 1
                if status in (200, 202):
                    with lock:
                        acknowledged[iid] = sid
                    break
                with lock:
                    stats["refused"] += 1
                time.sleep(0.05)
            # Wait for the answer before the next input.
            deadline = time.monotonic() + 60
            while not stop.is_set() and time.monotonic() < deadline:
                msgs = any_call("GET", "/v1/sessions/%s/messages" % sid, until=5)
                if msgs and any("ACK-" + iid in m.get("text", "") for m in msgs["messages"]
                                if m["role"] == "assistant"):
                    break
                time.sleep(0.1)

    try:
        for i in range(args.nodes):
            nodes.append(Node(tether, work, "node-%d" % (i + 1), url, LEASE_MS))
        os.makedirs(os.path.join(work, "ws"), exist_ok=True)
        for i in range(args.sessions):
            s = nodes[i % len(nodes)].call("POST", "/v1/sessions",
                                           {"title": "chaos %d" % i, "workspace": os.path.join(work, "ws")})
            sessions.append(s["session"]["id"])
        threads = [threading.Thread(target=client, args=(sid, k), daemon=True) for k, sid in enumerate(sessions)]
        for t in threads:
            t.start()
        started = time.monotonic()
        end = started + args.minutes * 60
        while time.monotonic() < end:
            time.sleep(random.uniform(2.0, 5.0))
            victim = random.choice(nodes)
            if not victim.alive():
                continue
            victim.kill()
            kills += 1
            time.sleep(random.uniform(0.2, 1.5))
            with lock:
                victim.start()
            elapsed = time.monotonic() - started
            with lock:
                print("chaos: %5.0f s, %d kills, %d inputs acknowledged" % (elapsed, kills, len(acknowledged)),
                      flush=True)
        stop.set()
        for t in threads:
            t.join(70)
        # Settle: every acknowledged input answered, or a minute passed.
        settle = time.monotonic() + 90
        report = None
        while True:
            report = audit(nodes, sessions, acknowledged)
            if report["unanswered"] == 0 or time.monotonic() > settle:
                break
            time.sleep(1)
        report.update({"kills": kills, "minutes": args.minutes, "nodes": args.nodes, "sessions": args.sessions,
                       "posts": stats["posts"], "refused_posts": stats["refused"]})
        print(json.dumps(report, indent=2))
        if args.out:
            with open(args.out, "w") as f:
                json.dump(report, f, indent=2)
        ok = report["lost"] == 0 and report["duplicated"] == 0
        print("chaos: %s" % ("PASS" if ok else "FAIL"))
        return 0 if ok else 1
    except Failure as e:
        print("chaos: FAIL:", e)
        for n in nodes:
            print("--- log of %s:\n%s" % (n.name, n.log_tail()))
        return 1
    finally:
        stop.set()
        for n in nodes:
            n.stop()
        stop_cluster(pg_dir)
        shutil.rmtree(work, ignore_errors=True)


def audit(nodes, sessions, acknowledged):
    reader = next(n for n in nodes if n.alive())
    recorded = {}
    answers = {}
    duplicated = 0
    for sid in sessions:
        inputs = reader.call("GET", "/v1/sessions/%s/inputs" % sid)["inputs"]
        for i in inputs:
            if i["id"] in recorded:
                duplicated += 1
            recorded[i["id"]] = sid
        for m in reader.call("GET", "/v1/sessions/%s/messages" % sid)["messages"]:
            if m["role"] != "assistant":
                continue
            text = m.get("text", "")
            if text.startswith("ACK-"):
                answers[text[4:]] = answers.get(text[4:], 0) + 1
    missing = [i for i in acknowledged if i not in recorded]
    unanswered = [i for i in acknowledged if i in recorded and answers.get(i, 0) == 0]
    twice = [i for i, n in answers.items() if n > 1]
    return {"acknowledged": len(acknowledged), "recorded": len(recorded),
            "answered": sum(1 for i in acknowledged if answers.get(i, 0) > 0),
            "unanswered": len(unanswered), "lost": len(missing) + len(unanswered),
            "duplicated": duplicated + len(twice),
            "lost_ids": (missing + unanswered)[:10], "duplicated_answers": twice[:10]}


if __name__ == "__main__":
    sys.exit(main())
