// The MCP Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, the
// 2026-07-28 era) on the agent surface `/mcp/agent`, checked by an
// independent client: the official `@modelcontextprotocol/ext-tasks`
// requester over the TypeScript SDK v2 (`@modelcontextprotocol/client`,
// pinned to 2026-07-28), plus raw JSON-RPC over fetch where the package
// cannot say what is checked. Each question is asked on its own task and
// session (agent token) and answered over REST as a person would be:
//
// - discover: the server declares the extension; the ext-tasks session
//   negotiates the v2 generation.
// - answered: a declaring `tools/call` of ask_user_question_kandev returns
//   a CreateTaskResult at once (status working, createdAt, lastUpdatedAt,
//   ttlMs null without an expiry, pollIntervalMs); its taskId is the
//   bundle's pending_id in GET /api/v1/pending; `tasks/get` says working;
//   after the REST answer the execution settles `completed` with the
//   blocking call's CallToolResult (pending_id, answers.q1, summary
//   "User answered: …").
// - expiry: expires_in_seconds 1 gives an integer ttlMs of at least 1000
//   (the task outlives its question), and the task completes with
//   structuredContent.expired.
// - cancel: `tasks/cancel` is an empty ack, `tasks/get` then says
//   cancelled, and the question stays open in GET /api/v1/pending.
// - foreign token: another session's agent token gets -32602 from
//   `tasks/get` for the task (as for an unknown id), and its `tasks/cancel`
//   does not cancel it.
// - not declared: a client that does not declare the extension gets the
//   ordinary blocking call (answered → CallToolResult) and -32021 from
//   `tasks/get` (and `tasks/cancel`).
// - restart: the execution is handed off (its reference persisted), the
//   server is killed (SIGKILL) and started again on the same port and
//   SQLite file; `tasks/get` still answers, a fresh ext-tasks session
//   resumes the task, and it completes after a REST answer.
//
// Which client does what:
// - ext-tasks (createTaskSessionFromClient over an SDK v2 Client, with the
//   `rawDispatch` + `v2RequestFraming` the package requires for a
//   2026-07-28 server): capability negotiation, task creation
//   (session.callTool, preference "require"), polling to the end
//   (execution.settle()), tasks/get (session.task(id).snapshot()),
//   cancellation (execution.cancel()), the foreign token's snapshot, and
//   recovery after the restart (execution.handoff + session.resumeTask).
//   `rawDispatch` below is the host-owned request coordinator the package
//   asks for: it POSTs the package's framed request as is (adding only the
//   JSON-RPC id and the HTTP headers) and is also the wire log this script
//   reads the CreateTaskResult's fields from.
// - the SDK v2 Client alone (no ext-tasks, so no extension declared; its
//   requests are recorded to prove it): the ordinary blocking call.
// - raw JSON-RPC over fetch (`rpc` below): what the package cannot express
//   or would hide: the CreateTaskResult's and a tasks/get response's exact
//   fields, the foreign token's and an unknown id's -32602 error codes,
//   tasks/get and tasks/cancel without the extension declared (-32021; the
//   package always declares it), and tasks/get right after the restart.
//
// Prints 'N passed, N failed'; exits non-zero on a failure.
//
// Usage: node tasks_check.mjs PATH_TO_CLARIFY_BINARY

import { mkdtempSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, JsonRpcResponseError } from "@modelcontextprotocol/ext-tasks/client";

import { startServer, restOk, runChecks } from "./harness.mjs";

const binary = resolve(process.argv[2]);
const scratch = mkdtempSync(join(tmpdir(), "clarify-tasks-"));
const database = join(scratch, "clarify.db");

const ERA = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";
const TOOL = "ask_user_question_kandev";
const CLIENT_INFO = { name: "clarify-e2e-tasks", version: "1.0.0" };

// ---------------------------------------------------------------- REST

// A task and a session on it: the session's agent token asks.
async function agentSession(base, title) {
  const task = await restOk(base, "POST", "/tasks", { title });
  const session = await restOk(base, "POST", `/tasks/${task.id}/sessions`, {});
  if (!session.agent_token) throw new Error(`no agent_token: ${JSON.stringify(session)}`);
  return session.agent_token;
}

async function pendingBundle(base, pendingId) {
  const { bundles } = await restOk(base, "GET", "/pending?limit=200");
  return bundles.find((b) => b.pending_id === pendingId);
}

// Waits for the question `prompt` to be listed (a blocking call has no id
// to give until it returns) and returns its bundle.
async function waitForPrompt(base, prompt) {
  for (let i = 0; i < 400; i++) {
    const { bundles } = await restOk(base, "GET", "/pending?limit=200");
    const bundle = bundles.find((b) => b.questions[0].prompt === prompt);
    if (bundle) return bundle;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${prompt} never became pending`);
}

// A person answers in free text.
async function answer(base, pendingId, note) {
  const answered = await restOk(base, "POST", `/clarification/${pendingId}/respond`, {
    answers: [{ question_id: "q1", selected_options: [], custom_text: note }],
  });
  if (answered.claimed !== true) throw new Error(`answer not claimed: ${JSON.stringify(answered)}`);
}

let asked = 0;
// A unique prompt per question.
const uniquePrompt = (what) => `${what} (tasks check ${process.pid}.${++asked})?`;
const question = (prompt, extra = {}) => ({
  questions: [{ prompt, options: [{ label: "now" }, { label: "later" }] }],
  ...extra,
});

// ---------------------------------------------------------------- raw JSON-RPC

let nextId = 1;

// Reads one JSON-RPC response (for `id`) from a JSON or SSE body.
function responseFrom(contentType, text, id) {
  if (contentType?.includes("text/event-stream")) {
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
      if (!data) continue;
      const message = JSON.parse(data);
      if (message.id === id && ("result" in message || "error" in message)) return message;
    }
    throw new Error(`no response for id ${id} in the event stream: ${text}`);
  }
  return JSON.parse(text);
}

// POSTs one 2026-07-28 request: `_meta` carries the era's protocol version,
// client info and per-request client capabilities (the tasks extension only
// when `declare`), and the headers the era asks for (Mcp-Name: the taskId for
// tasks/*, the tool for tools/call). Returns the whole JSON-RPC response.
async function post(base, token, message, { headers = {}, signal } = {}) {
  const response = await fetch(`${base}/mcp/agent`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": ERA,
      "mcp-method": message.method,
      ...headers,
    },
    body: JSON.stringify(message),
    signal,
  });
  const text = await response.text();
  try {
    return responseFrom(response.headers.get("content-type"), text, message.id);
  } catch (error) {
    throw new Error(`HTTP ${response.status} for ${message.method}: ${text}`, { cause: error });
  }
}

function framed(params, declare) {
  return {
    ...params,
    _meta: {
      ...(params._meta ?? {}),
      "io.modelcontextprotocol/protocolVersion": ERA,
      "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
      "io.modelcontextprotocol/clientCapabilities": declare ? { extensions: { [TASKS]: {} } } : {},
    },
  };
}

function mcpName(method, params) {
  if (method === "tools/call") return params.name;
  if (method.startsWith("tasks/")) return params.taskId;
  return undefined;
}

async function rpc(base, token, method, params, { declare = true } = {}) {
  const message = { jsonrpc: "2.0", id: nextId++, method, params: framed(params, declare) };
  const name = mcpName(method, params);
  return post(base, token, message, { headers: name === undefined ? {} : { "mcp-name": name } });
}

// ---------------------------------------------------------------- SDK v2 + ext-tasks

// An SDK v2 Client on the agent surface, pinned to the 2026-07-28 era. Every
// request body it sends is recorded in `sent`.
async function sdkClient(base, token) {
  const sent = [];
  const recordingFetch = (url, init) => {
    if (typeof init?.body === "string") sent.push(JSON.parse(init.body));
    return fetch(url, init);
  };
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: ERA } } });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/agent`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: recordingFetch,
  });
  await client.connect(transport);
  if (client.getNegotiatedProtocolVersion() !== ERA) throw new Error(`negotiated ${client.getNegotiatedProtocolVersion()}`);
  return { client, sent };
}

// The ext-tasks session over an SDK v2 Client. `wire` logs each exchange
// of the raw dispatch ({request, response}).
async function tasksSession(base, token) {
  const { client } = await sdkClient(base, token);
  const wire = [];
  // The host-owned coordinator: the package hands over its framed request
  // (method, params with `_meta` already framed) and per-request context
  // (Mcp-Name for tasks/*, timeouts, its abort signal).
  const rawDispatch = async (request, options = {}) => {
    const message = { jsonrpc: "2.0", id: nextId++, ...request };
    const headers = { ...(options.context?.headers ?? {}) };
    const name = mcpName(request.method, request.params ?? {});
    if (name !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "mcp-name")) headers["mcp-name"] = name;
    const signals = [options.signal, options.context?.requestTimeoutMs && AbortSignal.timeout(options.context.requestTimeoutMs)].filter(Boolean);
    const response = await post(base, token, message, { headers, signal: signals.length ? AbortSignal.any(signals) : undefined });
    wire.push({ request: message, response });
    return "error" in response ? { kind: "error", error: response.error } : { kind: "result", result: response.result };
  };
  const session = createTaskSessionFromClient(client, {
    // One endpoint: the agent surface of this server for this session's
    // token (the same after the restart, on the same port).
    endpointId: `clarify-agent:${base}:${token}`,
    rawDispatch,
    v2RequestFraming: { protocolVersion: ERA, clientInfo: CLIENT_INFO, clientCapabilities: {} },
    onError: (error) => console.log(`  ext-tasks background error: ${error.stack ?? error}`),
  });
  const close = async () => {
    await session.close();
    await client.close();
  };
  return { client, session, wire, close };
}

// session.callTool with a task required: an immediate result is an error.
async function callAsTask(session, wire, args) {
  const execution = await session.callTool(TOOL, args, { task: { preference: "require" } });
  if (execution.kind !== "task") throw new Error(`execution kind ${execution.kind}`);
  const exchange = wire.findLast((w) => w.request.method === "tools/call");
  const declared = exchange.request.params._meta?.["io.modelcontextprotocol/clientCapabilities"]?.extensions;
  if (!declared || !(TASKS in declared)) throw new Error(`ext-tasks did not declare the extension: ${JSON.stringify(exchange.request.params._meta)}`);
  return { execution, created: exchange.response.result };
}

// ---------------------------------------------------------------- expectations

function expect(condition, what, value) {
  if (!condition) throw new Error(`${what}${value === undefined ? "" : `: ${JSON.stringify(value)}`}`);
}

const isTimestamp = (s) => typeof s === "string" && !Number.isNaN(Date.parse(s));

// `expiresMs`: the question's expiry (null: none). With none, ttlMs is null;
// with one, ttlMs must cover it (the task may be discarded once ttlMs has
// passed, so it has to outlive the question to carry its "expired" result).
// The server keeps a margin past the expiry, so this is not an equality.
function expectCreated(created, expiresMs) {
  expect(created?.resultType === "task", "CreateTaskResult resultType", created);
  expect(typeof created.taskId === "string" && created.taskId.length > 0, "CreateTaskResult taskId", created);
  expect(created.status === "working", "CreateTaskResult status", created);
  expect(isTimestamp(created.createdAt) && isTimestamp(created.lastUpdatedAt), "CreateTaskResult timestamps", created);
  if (expiresMs === null) expect(created.ttlMs === null, "CreateTaskResult ttlMs null without an expiry", created);
  else expect(Number.isInteger(created.ttlMs) && created.ttlMs >= expiresMs, `CreateTaskResult ttlMs at least ${expiresMs}`, created);
  expect(Number.isInteger(created.pollIntervalMs) && created.pollIntervalMs > 0, "CreateTaskResult pollIntervalMs", created);
}

// The CallToolResult of an answered ask (as the blocking call returns it).
function expectAnswered(result, pendingId, note) {
  expect(result && !result.isError, "an answered result", result);
  const s = result.structuredContent;
  expect(s?.pending_id === pendingId, `structuredContent.pending_id ${pendingId}`, s);
  expect(s.answers?.q1?.custom_text === note, "answers.q1.custom_text", s);
  expect(s.rejected === false && s.expired === false, "rejected and expired false", s);
  expect(s.summary === `User answered: ${note}`, "summary", s);
  const text = result.content?.find((c) => c.type === "text")?.text;
  expect(typeof text === "string" && text.includes(s.summary), "content text with the summary", result.content);
}

function expectRpcError(response, code, what) {
  expect(response.error?.code === code, `${what}: want JSON-RPC error ${code}`, response);
}

const settleWithin = (execution, ms) => execution.settle({ signal: AbortSignal.timeout(ms) });

// A settled outcome must be `completed`; a failed one says why (the
// package's decoding of the result included).
function expectCompleted(outcome) {
  if (outcome.status === "failed") {
    const cause = outcome.error.cause;
    throw new Error(`outcome failed: ${outcome.error.message}${cause ? ` (${cause.message ?? cause}${cause.cause ? `: ${cause.cause.message ?? cause.cause}` : ""})` : ""}; last task ${JSON.stringify(outcome.task?.raw)}`);
  }
  expect(outcome.status === "completed", "outcome completed", outcome);
}

// ---------------------------------------------------------------- checks

async function discover(base) {
  const token = await agentSession(base, "tasks discover");
  const { client, session, close } = await tasksSession(base, token);
  try {
    const extension = client.getServerCapabilities()?.extensions?.[TASKS];
    expect(extension && Object.keys(extension).length === 0, `server/discover capabilities.extensions["${TASKS}"] = {}`, client.getServerCapabilities());
    expect(session.capabilities.execution && session.capabilities.cancellation, "ext-tasks negotiated task execution", session.capabilities);
  } finally {
    await close();
  }
}

async function answered(base) {
  const token = await agentSession(base, "tasks answered");
  const { session, wire, close } = await tasksSession(base, token);
  try {
    const prompt = uniquePrompt("Answered through a task");
    const { execution, created } = await callAsTask(session, wire, question(prompt));
    expectCreated(created, null);
    const taskId = execution.handle.taskId;
    expect(taskId === created.taskId, "handle taskId", execution.handle);

    const bundle = await pendingBundle(base, taskId);
    expect(bundle, `GET /pending lists a bundle whose pending_id is the taskId ${taskId}`);
    expect(bundle.questions[0].prompt === prompt, "that bundle's prompt", bundle.questions);

    const view = await session.task(taskId).snapshot();
    expect(view.status === "working" && view.taskId === taskId, "tasks/get before an answer: working", view.raw);
    // The same over raw JSON-RPC, every field.
    const got = await rpc(base, token, "tasks/get", { taskId });
    const r = got.result;
    expect(r?.resultType === "complete" && r.status === "working" && r.taskId === taskId, "raw tasks/get: resultType complete, working", got);
    expect(r.createdAt === created.createdAt && r.ttlMs === null && isTimestamp(r.lastUpdatedAt), "raw tasks/get: createdAt and ttlMs as created", got);

    await answer(base, taskId, "from a task");
    const { outcome, lastTask } = await settleWithin(execution, 30_000);
    expectCompleted(outcome);
    expectAnswered(outcome.result, taskId, "from a task");
    expect(!lastTask || lastTask.status === "completed", "last task view completed", lastTask?.raw);

    const after = await rpc(base, token, "tasks/get", { taskId });
    expect(after.result?.status === "completed", "raw tasks/get after the answer: completed", after);
    expectAnswered(after.result.result, taskId, "from a task");
  } finally {
    await close();
  }
}

async function expiry(base) {
  const token = await agentSession(base, "tasks expiry");
  const { session, wire, close } = await tasksSession(base, token);
  try {
    const prompt = uniquePrompt("Left to expire");
    const { execution, created } = await callAsTask(session, wire, question(prompt, { expires_in_seconds: 1 }));
    expectCreated(created, 1000);
    const { outcome } = await settleWithin(execution, 30_000);
    expectCompleted(outcome);
    const s = outcome.result?.structuredContent;
    expect(s?.expired === true && s.pending_id === execution.handle.taskId, "structuredContent.expired", outcome.result);
  } finally {
    await close();
  }
}

async function cancel(base) {
  const token = await agentSession(base, "tasks cancel");
  const { session, wire, close } = await tasksSession(base, token);
  try {
    const prompt = uniquePrompt("Cancelled by its agent");
    const { execution } = await callAsTask(session, wire, question(prompt));
    const taskId = execution.handle.taskId;
    await execution.cancel();
    const ack = wire.findLast((w) => w.request.method === "tasks/cancel");
    expect(ack?.request.params.taskId === taskId, "ext-tasks sent tasks/cancel", ack?.request);
    const { resultType, _meta, ...rest } = ack.response.result ?? {};
    expect(ack.response.result && resultType === "complete" && Object.keys(rest).length === 0, "tasks/cancel: an empty ack (resultType complete)", ack.response);
    const { outcome } = await execution.settle();
    expect(outcome.status === "cancelled", "local outcome cancelled", outcome);

    const view = await session.task(taskId).snapshot();
    expect(view.status === "cancelled", "tasks/get after tasks/cancel: cancelled", view.raw);
    const bundle = await pendingBundle(base, taskId);
    expect(bundle?.questions[0].prompt === prompt, "the question stays open in GET /pending", bundle);
  } finally {
    await close();
  }
}

async function foreignToken(base) {
  const token = await agentSession(base, "tasks owner");
  const stranger = await agentSession(base, "tasks stranger");
  const { session, wire, close } = await tasksSession(base, token);
  const other = await tasksSession(base, stranger);
  try {
    const { execution } = await callAsTask(session, wire, question(uniquePrompt("Not yours to read")));
    const taskId = execution.handle.taskId;
    // Raw: the exact codes.
    expectRpcError(await rpc(base, stranger, "tasks/get", { taskId }), -32602, "another session's tasks/get");
    expectRpcError(await rpc(base, token, "tasks/get", { taskId: "no-such-task" }), -32602, "tasks/get of an unknown id");
    // ext-tasks: the stranger's controller is refused the same way.
    const refused = await other.session.task(taskId).snapshot().then((v) => v, (e) => e);
    expect(refused instanceof JsonRpcResponseError && refused.code === -32602, "ext-tasks snapshot with another session's token: -32602", refused?.response ?? String(refused));
    // The stranger cannot cancel it either.
    const cancelled = await rpc(base, stranger, "tasks/cancel", { taskId });
    const still = await rpc(base, token, "tasks/get", { taskId });
    expect(still.result?.status === "working", `still working after another session's tasks/cancel (which got ${JSON.stringify(cancelled)})`, still);
    expect("error" in cancelled, "another session's tasks/cancel is an error (spec: SHOULD for a task unknown to the caller)", cancelled);
  } finally {
    await other.close();
    await close();
  }
}

async function notDeclared(base) {
  const token = await agentSession(base, "tasks not declared");
  const { client, sent } = await sdkClient(base, token);
  try {
    const prompt = uniquePrompt("Asked without the extension");
    const call = client.callTool({ name: TOOL, arguments: question(prompt) }, undefined, {
      onprogress: () => {},
      timeout: 60_000,
      resetTimeoutOnProgress: true,
    });
    const bundle = await waitForPrompt(base, prompt);
    const request = sent.find((m) => m.method === "tools/call");
    const declared = request?.params?._meta?.["io.modelcontextprotocol/clientCapabilities"]?.extensions ?? {};
    expect(request && !(TASKS in declared), "the plain SDK client's tools/call does not declare the extension", request?.params?._meta);
    await answer(base, bundle.pending_id, "blocking");
    const result = await call;
    expect(result.resultType !== "task" && result.taskId === undefined, "an ordinary CallToolResult, not a task", result);
    expectAnswered(result, bundle.pending_id, "blocking");

    // Raw: the package always declares the extension, so these are by hand.
    for (const method of ["tasks/get", "tasks/cancel"]) {
      const refused = await rpc(base, token, method, { taskId: bundle.pending_id }, { declare: false });
      expectRpcError(refused, -32021, `${method} without the extension`);
      // As the spec's example: the error names the missing extension.
      const required = refused.error.data?.requiredCapabilities?.extensions;
      expect(required && TASKS in required, `${method}'s -32021 names the extension in data.requiredCapabilities`, refused);
    }
  } finally {
    await client.close();
  }
}

// Restarts the server: returns the new one (same port, same SQLite file).
async function restart(running) {
  const port = new URL(running.base).port;
  running.server.kill("SIGKILL");
  await running.exited;
  const again = await startServer(binary, { database, listen: `127.0.0.1:${port}` });
  if (again.base !== running.base) throw new Error(`restarted at ${again.base}, not ${running.base}`);
  return again;
}

async function survivesRestart(running) {
  const base = running.base;
  const token = await agentSession(base, "tasks restart");
  const referenceFile = join(scratch, "task-reference.json");
  const prompt = uniquePrompt("Across a restart");
  {
    const { session, wire, close } = await tasksSession(base, token);
    const { execution } = await callAsTask(session, wire, question(prompt));
    // The package's recovery path: persist the reference, release ownership
    // (no cancel), as a client about to go away would.
    await execution.handoff((reference) => writeFileSync(referenceFile, JSON.stringify(reference)));
    await execution.result();
    await close();
  }
  const reference = JSON.parse(readFileSync(referenceFile, "utf8"));
  const again = await restart(running);
  running.server = again.server;
  running.exited = again.exited;

  // Raw: the task is still there for its token.
  const got = await rpc(base, token, "tasks/get", { taskId: reference.taskId });
  expect(got.result?.status === "working" && got.result.taskId === reference.taskId, "raw tasks/get after the restart: working", got);
  const bundle = await pendingBundle(base, reference.taskId);
  expect(bundle?.questions[0].prompt === prompt, "still pending after the restart", bundle);

  // ext-tasks: a fresh client resumes it and sees it through.
  const { session, close } = await tasksSession(base, token);
  try {
    const execution = await session.resumeTask(reference);
    expect(execution.kind === "task" && execution.handle.taskId === reference.taskId, "resumed execution", execution.handle);
    await answer(base, reference.taskId, "after the restart");
    const { outcome } = await settleWithin(execution, 30_000);
    expectCompleted(outcome);
    expectAnswered(outcome.result, reference.taskId, "after the restart");
  } finally {
    await close();
  }
}

// ---------------------------------------------------------------- run

const running = await startServer(binary, { database });
await runChecks([
  ["discover declares the tasks extension", () => discover(running.base)],
  ["task answered over REST (ext-tasks settle)", () => answered(running.base)],
  ["task expiry (expires_in_seconds 1)", () => expiry(running.base)],
  ["task cancelled (ext-tasks cancel)", () => cancel(running.base)],
  ["another session's token", () => foreignToken(running.base)],
  ["client without the extension (blocking call, -32021)", () => notDeclared(running.base)],
  ["task survives a server restart", () => survivesRestart(running)],
], running, scratch);
