"""Clarify under load (issue 13), for Locust: agents ask and block (REST long
polls and MCP tool calls), people and programs list and answer (MCP and
REST), browsers watch the event WebSocket, and detached agents are resumed
by a slow webhook (run.py's, issue 26).

Every request kind is its own Locust name, so the report gives p50/p99 per
kind. Statuses the contract defines as normal are successes: 504 from
/wait (no answer yet: poll again), 409 for an answer to a question someone
else just closed. Anything 5xx is a failure, counted apart
(`SERVER_ERRORS`), and fails the run.

Run through run.py, which starts the server and samples its memory.
"""

import itertools
import json
import os
import random
import time

import websocket
from locust import HttpUser, between, events, task

SERVER_ERRORS = 0
WAIT_TIMEOUTS = 0
_ids = itertools.count(1)
SLOW_WEBHOOK = os.environ.get("CLARIFY_LOAD_SLOW_WEBHOOK", "")


def _json(response):
    try:
        return response.json()
    except ValueError:
        return {}


def _check(response, ok=(200, 201)):
    """Marks the response: the statuses the contract defines for the call
    pass; any other is a failure, and a 5xx is also counted apart."""
    global SERVER_ERRORS
    if response.status_code in ok:
        response.success()
        return
    if response.status_code >= 500:
        SERVER_ERRORS += 1
    response.failure(f"{response.status_code}: {response.text[:200]}")


def new_session(client, title, resume=None):
    """A task and a session of it (resumed as `resume` says, if given), as
    an agent's host makes them; returns the session's agent token."""
    with client.post("/api/v1/tasks", json={"title": title}, name="create task", catch_response=True) as r:
        _check(r)
        task_id = _json(r).get("id")
    body = {"resume": resume} if resume else {}
    with client.post(f"/api/v1/tasks/{task_id}/sessions", json=body, name="create session", catch_response=True) as r:
        _check(r)
        return _json(r).get("agent_token")


def question(n):
    return [
        {
            "title": "Load",
            "prompt": f"Question {n}: which way?",
            "options": [{"label": "left"}, {"label": "right"}, {"label": "up"}],
        }
    ]


class Mcp:
    """A minimal streamable-HTTP MCP client over the user's keep-alive
    session: JSON-RPC POSTs whose answers arrive as JSON or as SSE."""

    def __init__(self, client, path, token=None):
        self.client = client
        self.path = path
        self.headers = {"Accept": "application/json, text/event-stream"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        result = self.request(
            "mcp initialize",
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "clarify-locust", "version": "1"},
            },
        )
        if result is None:
            raise RuntimeError("MCP initialize failed")
        self.client.post(
            self.path,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=self.headers,
            name="mcp initialized",
        )

    def request(self, name, method, params, tolerated=()):
        """The JSON-RPC result of one call, or None (the failure is recorded).
        A tool error is a failure unless its text starts with one of
        `tolerated` (what the contract says a race may answer)."""
        call_id = next(_ids)
        body = {"jsonrpc": "2.0", "id": call_id, "method": method, "params": params}
        started = time.perf_counter()
        with self.client.post(
            self.path, json=body, headers=self.headers, name=name, stream=True, catch_response=True
        ) as response:
            session = response.headers.get("mcp-session-id")
            if session:
                self.headers["Mcp-Session-Id"] = session
            if response.status_code != 200:
                _check(response)
                return None
            message = None
            # Streamed, Locust would time the headers only: time the result.
            finish = lambda: response.request_meta.__setitem__(  # noqa: E731
                "response_time", (time.perf_counter() - started) * 1000
            )
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                for line in response.iter_lines(decode_unicode=True):
                    if line and line.startswith("data:") and line[5:].strip():
                        candidate = json.loads(line[5:])
                        if candidate.get("id") == call_id:
                            message = candidate
                            break
            else:
                message = _json(response)
            finish()
            if not message or "result" not in message:
                response.failure(f"no result: {message}")
                return None
            result = message["result"]
            if result.get("isError"):
                text = (result.get("content") or [{}])[0].get("text", "")
                if not text.startswith(tolerated):
                    response.failure(f"tool error: {text[:200]}")
                    return None
            response.success()
            return result

    def tool(self, name, arguments, tolerated=()):
        params = {"name": name, "arguments": arguments}
        result = self.request(f"mcp {name}", "tools/call", params, tolerated)
        if result is None or result.get("isError"):
            return None
        return result.get("structuredContent")


class RestAgent(HttpUser):
    """An agent that asks over REST and long-polls for its answer."""

    weight = 6
    wait_time = between(0.2, 1.0)

    def on_start(self):
        self.token = new_session(self.client, "rest agent")

    @task
    def ask_and_wait(self):
        global WAIT_TIMEOUTS
        auth = {"Authorization": f"Bearer {self.token}"}
        body = {"attach": True, "questions": question(next(_ids))}
        with self.client.post("/api/v1/clarification/request", json=body, headers=auth, name="ask (REST)", catch_response=True) as r:
            _check(r)
            pending = _json(r).get("pending_id")
        if not pending:
            return
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with self.client.get(
                f"/api/v1/clarification/{pending}/wait?timeout=30",
                headers=auth,
                name="wait (REST long poll)",
                catch_response=True,
            ) as r:
                # A5a: 504 means "no answer yet, wait again" (the
                # contract's long-poll timeout, not a server error); it is
                # reported under its own name.
                if r.status_code == 504:
                    WAIT_TIMEOUTS += 1
                    r.success()
                    continue
                _check(r)
                return


class McpAgent(HttpUser):
    """An agent blocked in ask_user_question_kandev until someone answers."""

    weight = 3
    wait_time = between(0.2, 1.0)

    def on_start(self):
        self.mcp = Mcp(self.client, "/mcp/agent", new_session(self.client, "mcp agent"))

    @task
    def ask(self):
        self.mcp.tool("ask_user_question_kandev", {"questions": question(next(_ids))})


class DetachedAgent(HttpUser):
    """An agent that asks and moves on: its answer resumes it through a
    webhook that takes seconds to answer, which must delay only itself."""

    weight = 1 if SLOW_WEBHOOK else 0
    wait_time = between(1.0, 3.0)

    def on_start(self):
        self.token = new_session(self.client, "detached agent", {"webhook_url": SLOW_WEBHOOK})

    @task
    def ask_and_move_on(self):
        auth = {"Authorization": f"Bearer {self.token}"}
        body = {"questions": question(next(_ids))}
        with self.client.post("/api/v1/clarification/request", json=body, headers=auth, name="ask (REST, detached)", catch_response=True) as r:
            _check(r)


class Answerer(HttpUser):
    """Something outside the agents: lists what waits (MCP) and answers it,
    over MCP or REST, racing the other answerers."""

    weight = 2
    wait_time = between(0.05, 0.3)

    def on_start(self):
        self.mcp = Mcp(self.client, "/mcp")

    @task(3)
    def list_and_answer(self):
        page = self.mcp.tool("list_pending_questions_kandev", {"limit": 50})
        if not page or not page.get("bundles"):
            return
        # Oldest first, as a person would, with some spread so answerers
        # also race each other for the same bundle.
        bundle = random.choice(page["bundles"][:3])
        answers = [
            {"question_id": q["question_id"], "selected_options": [random.choice(q["options"])["option_id"]]}
            for q in bundle["questions"]
        ]
        if random.random() < 0.5:
            # N4a: a bundle another answerer just cancelled or closed.
            self.mcp.tool(
                "answer_question_kandev",
                {"pending_id": bundle["pending_id"], "answers": answers},
                tolerated=("clarification request is no longer active",),
            )
        else:
            with self.client.post(
                f"/api/v1/clarification/{bundle['pending_id']}/respond",
                json={"answers": answers},
                name="respond (REST)",
                catch_response=True,
            ) as r:
                _check(r, ok=(200, 409))

    @task(1)
    def browse(self):
        with self.client.get("/api/v1/tasks?limit=50", name="list tasks (REST)", catch_response=True) as r:
            _check(r)
            tasks = _json(r).get("tasks") or []
        if tasks:
            task_id = random.choice(tasks)["id"]
            with self.client.get(f"/api/v1/tasks/{task_id}/sessions", name="task sessions (REST)", catch_response=True) as r:
                _check(r)


class Watcher(HttpUser):
    """A browser tab on the event WebSocket for a few seconds at a time."""

    weight = 1
    wait_time = between(0.5, 2.0)

    @task
    def watch(self):
        url = self.host.replace("http", "ws", 1) + "/api/v1/ws"
        started = time.perf_counter()
        frames = 0
        error = None
        try:
            socket = websocket.create_connection(url, timeout=10)
            try:
                until = time.monotonic() + 5
                socket.settimeout(1)
                while time.monotonic() < until:
                    try:
                        socket.recv()
                        frames += 1
                    except websocket.WebSocketTimeoutException:
                        pass
            finally:
                socket.close()
        except Exception as e:  # recorded as this request's failure
            error = e
        events.request.fire(
            request_type="WS",
            name="event socket (5 s)",
            response_time=(time.perf_counter() - started) * 1000,
            response_length=frames,
            exception=error,
            context={},
        )


@events.quitting.add_listener
def _report_server_errors(environment, **_kwargs):
    print(f"server errors (5xx): {SERVER_ERRORS}")
    print(f"waits that timed out (A5a's 504, not counted above): {WAIT_TIMEOUTS}")
    if SERVER_ERRORS:
        environment.process_exit_code = 1
