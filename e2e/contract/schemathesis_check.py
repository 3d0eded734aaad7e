"""Schemathesis against a live `clarify serve`, with auth off and with auth
on (a personal access token): the REST contract at /api/v1/openapi.json
(issue 14) attacked by an independent tool.

    python schemathesis_check.py /path/to/clarify

Exits non-zero on any failure. Every check that applies runs; the ones left
out are listed in CHECKS' comment with the reason.
"""

import json
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

# The five checks of issue 14. Not run: negative_data_rejection and
# positive_data_acceptance (the server is deliberately lenient where the spec
# says so: null reads as empty, N1's `reason` alias), ignored_auth and the
# access-control checks (tests/tests/security.rs and auth.rs own those,
# with real users and workspaces), use_after_free (nothing is deleted).
CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
        "response_headers_conformance",
    ]
)


def rest(base, method, path, body=None, token=None):
    request = urllib.request.Request(base + "/api/v1" + path, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(request, data) as response:
        return json.load(response)


def seed(base, token):
    """One open question, so the /clarification/{id} routes reach real logic."""
    task = rest(base, "POST", "/tasks", {"title": "fuzzed"}, token)
    session = rest(base, "POST", f"/tasks/{task['id']}/sessions", {}, token)
    asked = rest(
        base,
        "POST",
        "/clarification/request",
        {"questions": [{"prompt": "Which?", "options": [{"label": "a"}, {"label": "b"}]}]},
        session["agent_token"],
    )
    return asked["pending_id"]


def run(binary, auth, directory):
    database = f"sqlite://{Path(directory) / 'clarify.db'}"
    token = None
    if auth:
        created = subprocess.run(
            [binary, "token", "create", "--user", "fuzzer", "--database-url", database],
            check=True, capture_output=True, text=True,
        )
        token = created.stdout.strip().splitlines()[-1]
    command = [binary, "serve", "--listen", "127.0.0.1:0", "--database-url", database]
    if auth:
        command.append("--auth")
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = server.stdout.readline().strip()
        assert line.startswith("listening on "), line
        base = line.removeprefix("listening on ")
        pending_id = seed(base, token)
        config = Path(directory) / "schemathesis.toml"
        # /wait is left to random ids: on a real open question it blocks
        # for as long as it is told to (up to 120 s), by design.
        config.write_text(
            "[[operations]]\n"
            'include-path-regex = "^/api/v1/clarification/\\\\{id\\\\}(/respond|/cancel|/detach)?$"\n'
            f'parameters = {{ id = "{pending_id}" }}\n'
        )
        st = [
            str(Path(sys.executable).parent / "schemathesis"),
            "--config-file", str(config),
            "run", base + "/api/v1/openapi.json",
            "--checks", CHECKS,
            "--max-examples", "40",
            "--request-timeout", "30",
            "--workers", "2",
            "--no-color",
            # A stream of events that ends only when the server stops:
            # tests/tests/pending_stream.rs follows it instead.
            "--exclude-path", "/api/v1/pending/stream",
        ]
        if token:
            st += ["--header", f"Authorization: Bearer {token}"]
        return subprocess.run(st).returncode
    finally:
        server.terminate()
        server.wait(timeout=10)


def main():
    binary = sys.argv[1]
    failed = []
    for auth in (False, True):
        name = "auth on (a personal access token)" if auth else "auth off"
        print(f"==> schemathesis, {name}", flush=True)
        with tempfile.TemporaryDirectory() as directory:
            if run(binary, auth, directory) != 0:
                failed.append(name)
    if failed:
        print("schemathesis FAILED: " + ", ".join(failed))
        sys.exit(1)
    print("schemathesis: zero failures, auth off and on")


if __name__ == "__main__":
    main()
