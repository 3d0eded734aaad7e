"""Answers per second through HTTP (issue 17), measured by Locust against
the release binary: `--users` keep-alive clients answer `--answers`
questions with `POST /clarification/{id}/respond`, each answer resuming its
agent through a webhook (a real receiver here). The baseline, in the same
run with the same Locust and users, is `GET /healthz`: what the load
generator and HTTP alone reach on this machine, so the ratio means the same
anywhere.

    python answers.py BINARY [--answers 3000] [--users 16] [--synchronous full|normal]

It also prints where the machine's CPU went per answer (issue 50): the
server's, PostgreSQL's (every process of that name), Locust's and the
webhook receiver's, read from `/proc` and `getrusage` around the answers;
what the server and its database spend bounds the rate on this many cores
whatever the load generator costs.

`--synchronous` is the server's `--sqlite-synchronous` (issue 31: `full`,
the default, acknowledges an answer only once it is on disk).

Fails when an answer is not claimed, or an agent is not resumed.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests
from serve import serve

HERE = Path(__file__).resolve().parent


class Receiver(BaseHTTPRequestHandler):
    """An agent's resume webhook: counts what it is sent."""

    protocol_version = "HTTP/1.1"
    received = 0
    lock = threading.Lock()
    # (how many are awaited, the event set once they are in)
    all_in = None

    @classmethod
    def check(cls):
        with cls.lock:
            if cls.all_in and cls.received >= cls.all_in[0]:
                cls.all_in[1].set()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        with Receiver.lock:
            Receiver.received += 1
        Receiver.check()
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def prepare(base, receiver, count):
    """`count` questions, each of its own session resumed by `receiver`."""
    http = requests.Session()
    task = http.post(f"{base}/api/v1/tasks", json={"title": "answers"}).json()["id"]
    pending = []
    for n in range(count):
        session = http.post(
            f"{base}/api/v1/tasks/{task}/sessions", json={"resume": {"webhook_url": receiver}}
        )
        assert session.status_code in (200, 201), session.text
        token = session.json()["agent_token"]
        asked = http.post(
            f"{base}/api/v1/clarification/request",
            json={"questions": [{"prompt": f"Which way? {n}", "options": [{"label": "a"}, {"label": "b"}]}]},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert asked.status_code in (200, 201), asked.text
        pending.append(asked.json()["pending_id"])
    return pending


def locust(base, user_class, pending_file, users):
    """Runs one Locust user class until the prepared items run out; returns
    (requests per second, failures, p50 ms, p99 ms) from Locust's final
    stats (`--json`)."""
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "locust"),
            "-f", str(HERE / "answers_locustfile.py"),
            "--headless", "--json", "--skip-log",
            "--host", base,
            "--users", str(users),
            "--spawn-rate", str(users),
            "--run-time", "120s",
            user_class,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "CLARIFY_PENDING_FILE": str(pending_file), "CLARIFY_USERS": str(users)},
    )
    try:
        (stats,) = json.loads(done.stdout)
    except ValueError:
        print(done.stdout[-2000:], done.stderr[-2000:])
        sys.exit(1)
    count = stats["num_requests"]
    elapsed = stats["last_request_timestamp"] - stats["start_time"]
    times = sorted((float(ms), n) for ms, n in stats["response_times"].items())

    def percentile(p):
        seen = 0
        for ms, n in times:
            seen += n
            if seen >= p * count:
                return f"{ms:.0f}"
        return "N/A"

    rate = count / elapsed if elapsed > 0 else 0.0
    return rate, stats["num_failures"], percentile(0.5), percentile(0.99)


def cpu_seconds(pids=None, comm=None):
    """CPU seconds (user and system) of the processes `pids`, or of every
    process named `comm`, from `/proc`."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or (pids is not None and int(entry.name) not in pids):
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        name, fields = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        if comm is None or name == comm:
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def cpu_snapshot(server):
    """Seconds of CPU so far: the server, PostgreSQL, Locust (this script's
    children, counted once they are waited for) and this script (the
    webhook receiver's threads)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "server": cpu_seconds(pids={server.pid}),
        "PostgreSQL": cpu_seconds(comm="postgres"),
        "Locust (its start too)": children.ru_utime + children.ru_stime,
        "webhook receiver": own.ru_utime + own.ru_stime,
    }


def report_cpu(before, after, answers, elapsed, postgres):
    """Prints CPU milliseconds per answer by process, and the ceiling each
    total puts on this machine's cores. Locust's includes its own start
    (about half a second), which weighs on a short run."""
    cores = os.cpu_count() or 1
    spent = {name: (after[name] - before[name]) * 1000 / answers for name in before}
    if not postgres:
        del spent["PostgreSQL"]
    print(f"  CPU per answer ({cores} cores, {elapsed:.1f} s of answers):")
    for name, ms in spent.items():
        print(f"    {name + ':':<24} {ms:>6.2f} ms")
    served = spent["server"] + spent.get("PostgreSQL", 0.0)
    total = sum(spent.values())
    print(
        f"    all: {total:.2f} ms (at most {cores * 1000 / total:.0f}/s on {cores} cores); "
        f"the server and its database: {served:.2f} ms (at most {cores * 1000 / served:.0f}/s)"
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--answers", type=int, default=3000)
    parser.add_argument("--users", type=int, default=16)
    parser.add_argument("--synchronous", choices=["full", "normal"], default="full")
    parser.add_argument("--database-url", help="postgres://… to measure PostgreSQL instead")
    args = parser.parse_args()

    hooks = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=hooks.serve_forever, daemon=True).start()
    receiver = f"http://127.0.0.1:{hooks.server_address[1]}/resume"

    with tempfile.TemporaryDirectory() as directory, serve(
        # Every answer has a session of its own, open still: more than one
        # user's default share (--max-open-sessions 1000).
        args.binary,
        directory,
        ["--max-open-sessions", str(args.answers + 1000), "--sqlite-synchronous", args.synchronous],
        database=args.database_url,
    ) as (server, base):
        pending = prepare(base, receiver, args.answers)
        if args.database_url:
            # What autovacuum does within a minute of a table growing by a
            # tenth: the questions were just written to an empty database,
            # and planned against an empty table's statistics PostgreSQL
            # scans whole partial indexes for one session's rows (issue 50:
            # 327 answers/s against 532, docs/MEASURED.md).
            subprocess.run(["psql", args.database_url, "-qc", "ANALYZE"], check=True)
        pending_file = Path(directory) / "pending"
        pending_file.write_text("\n".join(pending))
        baseline = locust(base, "Baseline", pending_file, args.users)
        before = cpu_snapshot(server)
        answered = locust(base, "Answerer", pending_file, args.users)
        # The resumes trail the answers a little: their work is the answers'.
        resumed = threading.Event()
        Receiver.all_in = (args.answers, resumed)
        Receiver.check()
        resumed.wait(timeout=30)
        after = cpu_snapshot(server)
    hooks.shutdown()

    ratio = answered[0] / baseline[0] if baseline[0] else 0.0
    backend = (
        "PostgreSQL"
        if args.database_url
        else f"SQLite with synchronous = {args.synchronous.upper()}"
    )
    print(f"answers through HTTP (Locust, {args.users} keep-alive users, {backend}, {args.binary}):")
    print(f"  GET /healthz (baseline):                {baseline[0]:>8.0f}/s  p50 {baseline[2]} ms, p99 {baseline[3]} ms")
    print(
        f"  POST /respond, each resuming by webhook: {answered[0]:>7.0f}/s  p50 {answered[2]} ms, "
        f"p99 {answered[3]} ms ({ratio:.3f}x baseline)"
    )
    print(f"  agents resumed: {Receiver.received} of {args.answers}")
    report_cpu(
        before, after, args.answers, args.answers / answered[0] if answered[0] else 0.0, args.database_url
    )
    failed = answered[1] + baseline[1]
    if failed or Receiver.received < args.answers:
        print(f"FAILED: {failed} requests failed, {args.answers - Receiver.received} agents not resumed")
        sys.exit(1)


if __name__ == "__main__":
    main()
