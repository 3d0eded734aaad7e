"""An independent MCP client against the real `clarify` binary: the
official Python SDK lists the tools, discovers a pending bundle, answers it
and reads the structured result, answers as a person in forms
(answer_with_me_kandev: elicitation, or MRTR rounds), and asks as an agent
and blocks until a person answers, in both protocol eras (the initialize
handshake and the stateless 2026-07-28 discover); and `clarify mcp`, the
stdio server an agent's client starts, through the SDK's stdio client.
Prints 'N passed, N failed'.

Usage: python python_sdk_check.py PATH_TO_CLARIFY_BINARY
"""

import asyncio
import json
import subprocess
import sys
import tempfile
import traceback
import urllib.request
from pathlib import Path

import httpx2
from mcp import Client, ClientSession, StdioServerParameters, stdio_client, types
from mcp.client.streamable_http import streamable_http_client

EXTERNAL_TOOLS = {
    "answer_question_kandev",
    "answer_with_me_kandev",
    "get_task_conversation_kandev",
    "list_pending_questions_kandev",
    "list_tasks_kandev",
}


def rest(base, method, path, body=None, token=None):
    request = urllib.request.Request(base + "/api/v1" + path, method=method)
    request.add_header("content-type", "application/json")
    if token:
        request.add_header("authorization", "Bearer " + token)
    data = json.dumps(body).encode() if body is not None else None
    with urllib.request.urlopen(request, data) as response:
        return json.loads(response.read())


def ask(base, prompt):
    """A task, a session resumed by a command, and one pending question."""
    task = rest(base, "POST", "/tasks", {"title": prompt})
    session = rest(base, "POST", f"/tasks/{task['id']}/sessions", {"resume": {"command": ["/bin/true"]}})
    created = rest(
        base,
        "POST",
        "/clarification/request",
        {"session_id": session["id"], "questions": [{"prompt": prompt, "options": [{"label": "yes"}, {"label": "no"}]}]},
        token=session["agent_token"],
    )
    return created["pending_id"]


async def check_era(base, modern):
    pending_id = ask(base, "modern era?" if modern else "initialize era?")
    http = httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=60.0))
    async with http, streamable_http_client(base + "/mcp", http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await (session.discover() if modern else session.initialize())
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(tools) == EXTERNAL_TOOLS, set(tools)
            # N9: exactly pending_id is required to answer; nothing to list.
            answer_schema = tools["answer_question_kandev"].input_schema
            assert answer_schema.get("required") == ["pending_id"], answer_schema
            assert not tools["list_pending_questions_kandev"].input_schema.get("required"), tools

            listed = await session.call_tool("list_pending_questions_kandev", {})
            assert not listed.is_error, listed.content
            bundles = listed.structured_content["bundles"]
            bundle = next(b for b in bundles if b["pending_id"] == pending_id)
            option = bundle["questions"][0]["options"][0]["option_id"]

            answer = {"pending_id": pending_id, "answers": [{"question_id": "q1", "selected_options": [option]}]}
            won = await session.call_tool("answer_question_kandev", answer)
            assert not won.is_error, won.content
            assert won.structured_content["claimed"] is True, won.structured_content
            assert won.structured_content["response"]["answers"][0]["selected_options"] == [option]

            again = await session.call_tool("answer_question_kandev", {"pending_id": pending_id, "rejected": True})
            assert again.structured_content["claimed"] is False, again.structured_content
            assert again.structured_content["response"]["answers"] == won.structured_content["response"]["answers"]

            missing = await session.call_tool("answer_question_kandev", {"pending_id": "nope", "rejected": True})
            assert missing.is_error and missing.content[0].text == "clarification request not found", missing

            # An argument error names its argument.
            unnamed = await session.call_tool("answer_question_kandev", {"pending_id": "", "rejected": True})
            assert unnamed.is_error and unnamed.content[0].text.startswith("pending_id:"), unnamed
            # L13: a wrongly typed argument is a tool error naming it and what was expected.
            for arguments, expected in (
                ({"limit": 2.5}, "limit: invalid type: floating point `2.5`, expected an integer"),
                ({"limit": "x"}, 'limit: invalid type: string "x", expected an integer'),
                ({"cursor": 5}, "cursor: invalid type: integer `5`, expected a string"),
            ):
                typed = await session.call_tool("list_pending_questions_kandev", arguments)
                assert typed.is_error and typed.content[0].text == expected, typed


async def check_answer_with_me(base, modern):
    """A person answers inside their own client (issue 30): each waiting
    bundle comes as a form, by elicitation during the call or, in the
    2026-07-28 era, as input_required rounds the SDK drives; the answer goes
    through the one claim. A REST answer sent while the form is open wins,
    and the form's answer is told so; a client without forms is told what
    waits; a requestState altered or replayed is refused."""
    era = "modern" if modern else "initialize"
    mine = ask(base, f"answered in a form ({era})?")
    raced = ask(base, f"raced in a form ({era})?")
    forms = []

    async def fill(context, params):
        forms.append(params)
        if "raced" in params.message:
            # Someone answers over REST while the form is open.
            answer = {"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]}
            assert rest(base, "POST", f"/clarification/{raced}/respond", answer)["claimed"] is True
        option = params.requested_schema["properties"]["q1"]["oneOf"][1]["const"]
        return types.ElicitResult(action="accept", content={"q1": option, "q1_text": "from python"})

    # The SDK's high-level client: it drives input_required rounds itself.
    mode = "2026-07-28" if modern else "legacy"
    async with Client(base + "/mcp", elicitation_callback=fill, mode=mode) as client:
        session = client.session
        for pending_id, outcome in ((mine, "answered"), (raced, "answered_elsewhere")):
            result = await client.call_tool("answer_with_me_kandev", {"pending_id": pending_id})
            assert not result.is_error, result.content
            line = result.structured_content["results"][0]
            assert line["outcome"] == outcome, line
        assert "q1" in forms[0].requested_schema["properties"], forms[0]
        view = rest(base, "GET", f"/clarification/{mine}")
        assert view["response"]["answers"][0]["custom_text"] == "from python", view
        assert view["answered_by"]["channel"] == "mcp" and view["answered_by"]["client"], view
        # The form lost the race: the REST answer stands, and it was told.
        assert line["response"]["answers"][0]["selected_options"] == ["q1_opt1"], line
        assert rest(base, "GET", f"/clarification/{raced}")["response"]["answers"] == line["response"]["answers"]

        if modern:
            sealed = ask(base, "sealed state?")
            first = await session.call_tool("answer_with_me_kandev", {"pending_id": sealed}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult), first
            state, key = first.request_state, next(iter(first.input_requests))
            responses = {key: types.ElicitResult(action="accept", content={"q1": "q1_opt1"})}
            altered = state[:-3] + ("AAA" if not state.endswith("AAA") else "BBB")
            refused = await session.call_tool("answer_with_me_kandev", {}, input_responses=responses, request_state=altered)
            assert refused.is_error and refused.content[0].text.startswith("requestState: not valid"), refused
            taken = await session.call_tool("answer_with_me_kandev", {}, input_responses=responses, request_state=state)
            assert taken.structured_content["results"][0]["outcome"] == "answered", taken
            again = await session.call_tool("answer_with_me_kandev", {}, input_responses=responses, request_state=state)
            assert again.is_error and again.content[0].text.startswith("requestState: already used"), again

    waiting = ask(base, f"no forms here ({era})?")
    http = httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=60.0))
    async with http, streamable_http_client(base + "/mcp", http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await (session.discover() if modern else session.initialize())
            told = await session.call_tool("answer_with_me_kandev", {"pending_id": waiting})
            assert "cannot show forms" in told.content[0].text, told
            assert told.structured_content["results"][0]["outcome"] == "waiting", told
    assert rest(base, "GET", f"/clarification/{waiting}")["active"] is True


async def check_agent(base, modern):
    """The agent surface (stateless, no MCP session): the agent blocks in
    ask_user_question_kandev until a person answers over REST."""
    task = rest(base, "POST", "/tasks", {"title": "agent surface"})
    session = rest(base, "POST", f"/tasks/{task['id']}/sessions", {})
    headers = {"Authorization": "Bearer " + session["agent_token"]}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=60.0))
    async with http, streamable_http_client(base + "/mcp/agent", http_client=http) as (read, write):
        async with ClientSession(read, write) as client:
            await (client.discover() if modern else client.initialize())
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert tools == {"ask_user_question_kandev"}, tools
            question = {"prompt": "Ship it?", "options": [{"label": "yes"}, {"label": "no"}]}
            call = asyncio.create_task(client.call_tool("ask_user_question_kandev", {"questions": [question]}))
            pending = []
            for _ in range(100):
                pending = rest(base, "GET", f"/sessions/{session['id']}")["active_pending_ids"]
                if pending:
                    break
                await asyncio.sleep(0.05)
            assert pending, "the question never became pending"
            answer = {"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]}
            rest(base, "POST", f"/clarification/{pending[0]}/respond", answer)
            result = await asyncio.wait_for(call, 30)
            assert not result.is_error, result.content
            assert result.structured_content["answers"]["q1"]["selected_labels"] == ["yes"], result


async def check_stdio(base, binary, modern):
    """`clarify mcp` started by the SDK's stdio client in a git repository:
    its one tool asks on the project's task, blocks until a person answers
    over REST, and returns what the agent surface returns."""
    with tempfile.TemporaryDirectory() as directory:
        repo = Path(directory) / "py-project"
        (repo / ".git").mkdir(parents=True)
        (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        params = StdioServerParameters(command=binary, args=["mcp", "--server", base], cwd=repo)
        async with stdio_client(params, errlog=subprocess.DEVNULL) as (read, write):
            async with ClientSession(read, write) as client:
                await (client.discover() if modern else client.initialize())
                tools = {tool.name for tool in (await client.list_tools()).tools}
                assert tools == {"ask_user_question_kandev"}, tools
                prompt = "stdio " + ("discover?" if modern else "initialize?")
                question = {"prompt": prompt, "options": [{"label": "now"}, {"label": "later"}]}
                call = asyncio.create_task(client.call_tool("ask_user_question_kandev", {"questions": [question]}))
                bundle = None
                for _ in range(200):
                    bundles = rest(base, "GET", "/pending")["bundles"]
                    bundle = next((b for b in bundles if b["questions"][0]["prompt"] == prompt), None)
                    if bundle:
                        break
                    await asyncio.sleep(0.05)
                assert bundle, "the question never became pending"
                assert rest(base, "GET", f"/tasks/{bundle['task_id']}")["title"] == "py-project"
                answer = {"answers": [{"question_id": "q1", "selected_options": [], "custom_text": "after lunch"}]}
                rest(base, "POST", f"/clarification/{bundle['pending_id']}/respond", answer)
                result = await asyncio.wait_for(call, 30)
                assert not result.is_error, result.content
                assert result.structured_content["summary"] == "User answered: after lunch", result


def main():
    # Absolute: the stdio check starts it from another working directory.
    binary = str(Path(sys.argv[1]).resolve())
    passed = failed = 0
    with tempfile.TemporaryDirectory() as directory:
        server = subprocess.Popen(
            [binary, "serve", "--listen", "127.0.0.1:0", "--allow-resume-command", "/bin/true", "--database-url", f"sqlite://{Path(directory) / 'clarify.db'}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            line = server.stdout.readline().strip()
            assert line.startswith("listening on "), line
            base = line.removeprefix("listening on ").split()[0]
            for modern in (False, True):
                name = "python-sdk " + ("discover (2026-07-28)" if modern else "initialize")
                checks = (
                    (check_era, "external"),
                    (check_answer_with_me, "answer_with_me (forms)"),
                    (check_agent, "agent"),
                    (lambda base, modern: check_stdio(base, binary, modern), "stdio (clarify mcp)"),
                )
                for check, what in checks:
                    try:
                        asyncio.run(check(base, modern))
                        print(f"ok {name} {what}")
                        passed += 1
                    except Exception:
                        print(f"FAILED {name} {what}")
                        traceback.print_exc()
                        failed += 1
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
