"""The operator's metrics (issue 49 item 1) read by Prometheus's own Python
parser (prometheus-client), not by ours: `clarify serve --metrics-listen`
after a little traffic, every family the README names present with its
type, and the figures what the traffic made.

    python metrics_check.py /path/to/clarify

Exits non-zero on any failure.
"""

import json
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

FAMILIES = {
    "clarify_questions_asked": "counter",
    "clarify_questions_settled": "counter",
    "clarify_time_to_answer_seconds": "histogram",
    "clarify_claim_seconds": "histogram",
    "clarify_questions_waiting": "gauge",
    "clarify_agents_waiting": "gauge",
    "clarify_notices_queued": "gauge",
    "clarify_notices_oldest_seconds": "gauge",
    "clarify_http_requests": "counter",
    "clarify_http_request_seconds": "histogram",
}


def rest(base, method, path, body=None, token=None):
    request = urllib.request.Request(f"{base}/api/v1{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode())
    request.add_header("content-type", "application/json")
    if token:
        request.add_header("authorization", f"Bearer {token}")
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def main(binary):
    with tempfile.TemporaryDirectory() as directory:
        command = [binary, "serve", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                   "--database-url", f"sqlite://{Path(directory) / 'clarify.db'}"]
        server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            base = metrics = None
            while metrics is None:
                line = server.stdout.readline()
                assert line, "clarify exited before saying where it listens"
                if line.startswith("listening on "):
                    base = line.removeprefix("listening on ").split()[0]
                elif line.strip().startswith("metrics: "):
                    metrics = line.strip().removeprefix("metrics: ")
            task = rest(base, "POST", "/tasks", {"title": "metrics"})
            session = rest(base, "POST", f"/tasks/{task['id']}/sessions", {})
            ask = lambda prompt: rest(base, "POST", "/clarification/request",
                                      {"session_id": session["id"],
                                       "questions": [{"prompt": prompt, "options": [{"label": "a"}, {"label": "b"}]}]},
                                      session["agent_token"])["pending_id"]
            answered, _waiting = ask("One?"), ask("Two?")
            rest(base, "POST", f"/clarification/{answered}/respond",
                 {"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]})
            with urllib.request.urlopen(metrics) as response:
                kind = response.headers["content-type"]
                text = response.read().decode()
            assert kind.startswith("text/plain; version=0.0.4"), kind
            families = {f.name: f for f in text_string_to_metric_families(text)}
            for name, expected in FAMILIES.items():
                assert name in families, f"{name} missing; got {sorted(families)}"
                assert families[name].type == expected, f"{name}: {families[name].type}, not {expected}"
            value = lambda name, **labels: next(
                s.value for s in families[name].samples
                if all(s.labels.get(k) == v for k, v in labels.items()) and s.name in (name, name + "_total"))
            assert value("clarify_questions_asked", kind="question") == 2
            assert value("clarify_questions_settled", outcome="answered", channel="rest") == 1
            assert value("clarify_questions_waiting") == 1
            buckets = [s for s in families["clarify_time_to_answer_seconds"].samples if s.name.endswith("_bucket")]
            assert buckets and buckets[-1].labels["le"] == "+Inf" and buckets[-1].value == 1, buckets
            print(f"metrics: {len(families)} families parsed by prometheus-client, figures as made")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main(sys.argv[1])
