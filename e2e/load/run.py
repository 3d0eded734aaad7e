"""Runs the Locust workload (locustfile.py) against a `clarify serve` it
starts on a SQLite file, samples the server's resident memory meanwhile,
and prints p50/p99 per request kind, the 5xx count and RSS over time.

    python run.py BINARY [--duration 60] [--users 40]

Fails when any request failed (a 5xx, or a status the contract does not
allow), or when memory kept growing after warm-up: the resident set at the
end may exceed the one at the end of the first third by at most
--rss-slack percent.
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from hostile import IdleSockets, SlowReceiver
from serve import serve

HERE = Path(__file__).resolve().parent


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--duration", type=int, default=60, help="seconds of load")
    parser.add_argument("--users", type=int, default=40)
    parser.add_argument("--spawn-rate", type=float, default=10)
    parser.add_argument("--rss-slack", type=float, default=15.0, help="percent")
    parser.add_argument("--sample-every", type=float, default=5.0, help="seconds")
    parser.add_argument("--slow-webhook", type=float, default=5.0, help="seconds it takes to answer")
    parser.add_argument("--idle", type=int, default=300, help="idle connections held")
    parser.add_argument("--drip", type=int, default=50, help="slow-drip connections held")
    args = parser.parse_args()

    # Issue 26: the operator's notices and detached agents' resumes go to a
    # slow target, and a client holds idle connections, while the load runs.
    slow = SlowReceiver(args.slow_webhook)
    flags = ["--notify-webhook", slow.url]
    with tempfile.TemporaryDirectory() as directory, serve(args.binary, directory, flags) as (server, base):
        samples = []
        stop = threading.Event()
        idle = IdleSockets(base, args.idle, args.drip)
        try:

            def sample():
                started = time.monotonic()
                while not stop.is_set():
                    samples.append((time.monotonic() - started, rss_kib(server.pid)))
                    stop.wait(args.sample_every)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            prefix = Path(directory) / "stats"
            locust = subprocess.run(
                [
                    str(Path(sys.executable).parent / "locust"),
                    "-f", str(HERE / "locustfile.py"),
                    "--headless", "--only-summary",
                    "--host", base,
                    "--users", str(args.users),
                    "--spawn-rate", str(args.spawn_rate),
                    "--run-time", f"{args.duration}s",
                    "--stop-timeout", "15",
                    "--csv", str(prefix),
                    "--loglevel", "WARNING",
                ],
                capture_output=True,
                text=True,
                env={**os.environ, "CLARIFY_LOAD_SLOW_WEBHOOK": slow.url},
            )
            stop.set()
            idle.close()
            sampler.join()
            samples.append((samples[-1][0] + args.sample_every if samples else 0, rss_kib(server.pid)))
            print(locust.stderr[-4000:] if locust.returncode else "", end="")
            server_errors = [
                l for l in locust.stdout.splitlines() if l.startswith(("server errors", "waits that"))
            ]
            server_errors.append(
                f"slow webhook ({args.slow_webhook:.0f} s an answer): {slow.received} notices and resumes received"
            )
            server_errors.append(
                f"held connections ({args.idle} idle, {args.drip} slow-drip): {idle.closed} closed by the server, each reopened"
            )
            ok = report(prefix, samples, args, server_errors)
            if slow.received == 0:
                print("FAILED: the slow webhook was sent nothing")
                ok = False
            if idle.closed < args.idle + args.drip:
                print("FAILED: the server left idle connections open past its header timeout")
                ok = False
        finally:
            stop.set()
            idle.close()
            slow.close()
    sys.exit(0 if ok and locust.returncode == 0 else 1)


def report(prefix, samples, args, server_errors):
    rows = list(csv.DictReader(open(f"{prefix}_stats.csv")))
    print(f"load: {args.users} users for {args.duration} s against one server (SQLite)")
    print(f"  {'request kind':32} {'count':>8} {'fail':>6} {'p50 ms':>8} {'p99 ms':>8} {'req/s':>8}")
    failures = 0
    for row in rows:
        name = row["Name"] if row["Name"] != "Aggregated" else "all"
        failures += int(row["Failure Count"]) if name != "all" else 0
        print(
            f"  {row['Type'] + ' ' + name if name != 'all' else 'all':32.32} {row['Request Count']:>8} "
            f"{row['Failure Count']:>6} {row['50%']:>8} {row['99%']:>8} {float(row['Requests/s']):>8.1f}"
        )
    for line in server_errors:
        print(f"  {line}")
    print("  server RSS (KiB) over time: " + ", ".join(f"{t:.0f}s {k}" for t, k in samples))
    warm = samples[max(0, len(samples) // 3 - 1)][1] if samples else 0
    end = samples[-1][1] if samples else 0
    growth = (end - warm) * 100.0 / warm if warm else 0.0
    print(f"  RSS after warm-up {warm} KiB, at the end {end} KiB ({growth:+.1f}%, allowed +{args.rss_slack}%)")
    ok = True
    if failures:
        print(f"FAILED: {failures} requests failed")
        ok = False
    if growth > args.rss_slack:
        print("FAILED: the server's memory kept growing after warm-up")
        ok = False
    return ok


if __name__ == "__main__":
    main()
