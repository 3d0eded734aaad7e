"""Answers through HTTP, for Locust (issue 17): each request answers the
next question prepared by answers.py (`POST /api/v1/clarification/{id}/respond`
on a keep-alive connection); the `baseline` user class asks for
`/healthz` instead, which measures what Locust and HTTP alone allow on
this machine. A user stops the run when the questions run out.

Run through answers.py, which starts the server and prepares the questions.
"""

import os
from threading import Lock

from locust import FastHttpUser, constant, task
from locust.exception import StopUser

_PENDING = [line.strip() for line in open(os.environ["CLARIFY_PENDING_FILE"]) if line.strip()]
# Every user spawned (answers.py spawns them all at once).
_USERS = int(os.environ["CLARIFY_USERS"])
_next = 0
_finished = 0
_lock = Lock()


def _take():
    global _next
    with _lock:
        if _next >= len(_PENDING):
            return None
        _next += 1
        return _PENDING[_next - 1]


def _finish(user):
    """Stops this user; the last one to finish ends the run, so that no
    request is cut off in flight."""
    global _finished
    with _lock:
        _finished += 1
        last = _finished == _USERS
    if last:
        user.environment.runner.quit()
    raise StopUser()


class Answerer(FastHttpUser):
    wait_time = constant(0)

    @task
    def answer(self):
        pending = _take()
        if pending is None:
            _finish(self)
        body = {"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]}
        with self.client.post(
            f"/api/v1/clarification/{pending}/respond", json=body, name="respond", catch_response=True
        ) as response:
            if response.status_code == 200 and response.json().get("claimed") is True:
                response.success()
            else:
                response.failure(f"{response.status_code}: {response.text[:200]}")


class Baseline(FastHttpUser):
    wait_time = constant(0)

    @task
    def healthz(self):
        if _take() is None:
            _finish(self)
        self.client.get("/healthz", name="healthz")
