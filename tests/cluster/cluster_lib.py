"""Helpers of the multi-node tests and the chaos run: `tether serve` nodes on
one PostgreSQL database (scripts/pg-cluster), as real processes, driven over
HTTP with a shared token."""
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PG = os.path.join(ROOT, "scripts", "pg-cluster")
TOKEN = "cluster-test-token-0123456789abcdef"


class Failure(Exception):
    pass


class Node:
    """One `tether serve --node NAME` with its own data directory and a
    config naming the shared store, short leases and the shared workspace
    root."""

    def __init__(self, tether, work, name, url, lease_ms):
        self.tether = tether
        self.name = name
        self.data = os.path.join(work, name)
        self.log_path = os.path.join(work, name + ".log")
        self.cfg = os.path.join(work, name + ".toml")
        with open(self.cfg, "w") as f:
            if url:  # else SQLite in the data directory
                f.write('store = "%s"\n' % url)
            f.write('workspace_roots = ["%s"]\n[leases]\nttl_ms = %d\nrenew_ms = %d\nscan_ms = 200\n'
                    % (os.path.join(work, "ws"), lease_ms, max(100, lease_ms // 4)))
        self.proc = None
        self.base = None
        self.start()

    def start(self):
        env = dict(os.environ, TETHER_TOKEN=TOKEN)
        env.pop("TETHER_CONFIG", None)
        self.proc = subprocess.Popen(
            [self.tether, "serve", "--config", self.cfg, "--data", self.data, "--listen", "127.0.0.1:0", "--node",
             self.name], stdout=subprocess.PIPE, stderr=open(self.log_path, "a"), env=env, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            raise Failure("%s did not start: %r\n%s" % (self.name, line, self.log_tail()))
        self.base = line.split("listening on ", 1)[1].strip()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self, sig=signal.SIGKILL):
        self.proc.send_signal(sig)
        if sig in (signal.SIGKILL, signal.SIGTERM):
            self.proc.wait(timeout=30)

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log_tail(self, n=25):
        if not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, errors="replace") as f:
            return "".join(f.readlines()[-n:])

    def request(self, method, path, body=None, timeout=30):
        """(status, JSON body); status 0 when the node cannot be reached."""
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
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as e:
            return 0, str(e)

    def call(self, method, path, body=None, ok=(200, 201, 202)):
        status, data = self.request(method, path, body)
        if status not in ok:
            raise Failure("%s %s on %s: %d %s" % (method, path, self.name, status, data))
        return data


def start_cluster(pg_dir):
    return subprocess.run([PG, "start", pg_dir], check=True, capture_output=True, text=True).stdout.strip()


def stop_cluster(pg_dir):
    subprocess.run([PG, "stop", pg_dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def eventually(what, pred, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise Failure("never: " + what)
