// answer_with_me_kandev on `clarify serve`'s `/mcp` (issue 30 item 1), from
// an independent client: the official TypeScript SDK v2
// (`@modelcontextprotocol/client`) over its StreamableHTTPClientTransport,
// in both protocol eras it speaks: the initialize handshake (2025-11-25,
// where the server sends `elicitation/create` during the call) and the
// 2026-07-28 era (pinned; the call returns `input_required` with forms and
// a sealed `requestState`, and the SDK retries with the answers). In each:
// a form per waiting bundle, filled in by the client's elicitation handler,
// reaches the bundle through the one claim (REST shows it with provenance
// "mcp" and the client's name; the asking agent's wait gets it), and a
// dismissed form leaves its bundle waiting; a REST answer sent while the
// form is open wins, and the tool's result names it; a client without
// forms is told so, with what waits. In the 2026-07-28 era also, by hand
// (the SDK's manual mode): a tampered requestState (bytes flipped, the
// bundle it names swapped for another) and a replayed one are refused and
// answer nothing. Prints 'N passed, N failed'.
//
// Usage: node answer_with_me_check.mjs PATH_TO_CLARIFY_BINARY

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

import { startServer, restOk as restOkAt, runChecks } from "./harness.mjs";

const binary = resolve(process.argv[2]);
const scratch = mkdtempSync(join(tmpdir(), "clarify-answer-with-me-"));
const TOOL = "answer_with_me_kandev";

const running = await startServer(binary, { database: join(scratch, "clarify.db") });
const { base } = running;

// REST on this server as a person, or as the asking agent with its token.
const restOk = (method, path, body, token) => restOkAt(base, method, path, body, token);

function check(condition, what, detail) {
  if (!condition) throw new Error(`${what}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
}

const workspace = async (name) => (await restOk("POST", "/workspaces", { name })).id;

// A task in `workspaceId`, a session (no resume target: the answer is kept
// for the agent's wait), and one pending question `prompt` (yes/no).
async function ask(workspaceId, task, prompt) {
  const { id } = await restOk("POST", "/tasks", { title: task, workspace_id: workspaceId });
  const session = await restOk("POST", `/tasks/${id}/sessions`, {});
  const created = await restOk(
    "POST",
    "/clarification/request",
    { questions: [{ prompt, options: [{ label: "yes" }, { label: "no" }] }] },
    session.agent_token,
  );
  check(created.created === true, `asking ${prompt}`, created);
  return { pendingId: created.pending_id, token: session.agent_token, task, prompt };
}

const view = (asked) => restOk("GET", `/clarification/${asked.pendingId}`);

// What the asking agent's wait gets (its token collects the kept answer).
const agentWait = (asked) => restOk("GET", `/clarification/${asked.pendingId}/wait?timeout=10`, undefined, asked.token);

// Calls the tool; a check that failed in the form handler is the error.
async function call(client, args, options) {
  let result;
  let failure;
  try {
    result = await client.callTool({ name: TOOL, ...args }, options);
  } catch (error) {
    failure = error;
  }
  if (client.formErrors.length) throw client.formErrors[0];
  if (failure) throw failure;
  return result;
}

const textOf = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

const ERAS = {
  initialize: { label: "initialize era (2025-11-25)", options: {}, version: "2025-11-25", era: "legacy" },
  modern: { label: "2026-07-28 era", options: { versionNegotiation: { mode: { pin: "2026-07-28" } } }, version: "2026-07-28", era: "modern" },
};

// A v2 client on /mcp in `era`; with `forms`, one that declares form
// elicitation and fills each form in with `forms(params, ctx)`.
async function connect(era, name, forms) {
  const options = { ...ERAS[era].options };
  if (forms) options.capabilities = { elicitation: { form: {} } };
  const client = new Client({ name, version: "1.0.0" }, options);
  // A check failing inside the handler reaches the server as an error
  // (and the tool says the form was not shown): kept to be told first.
  client.formErrors = [];
  if (forms) {
    client.setRequestHandler("elicitation/create", async (request, ctx) => {
      try {
        return await forms(request.params, ctx);
      } catch (error) {
        client.formErrors.push(error);
        throw error;
      }
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  try {
    check(client.getNegotiatedProtocolVersion() === ERAS[era].version, "negotiated", client.getNegotiatedProtocolVersion());
    check(client.getProtocolEra() === ERAS[era].era, "era", client.getProtocolEra());
    const { tools } = await client.listTools();
    check(tools.some((t) => t.name === TOOL), "tools/list", tools.map((t) => t.name));
  } catch (error) {
    await client.close();
    throw error;
  }
  return client;
}

// The asked bundle a form is for: its message names the task and the prompt.
function formFor(params, asked) {
  const hit = asked.filter((a) => params.message.includes(`"${a.task}"`) && params.message.includes(a.prompt));
  check(hit.length === 1, "a form naming exactly one asked bundle", params.message);
  return hit[0];
}

// The form's fields: a choice among the options by their labels, free
// text, and declining; returns the option id labelled `label`.
function optionLabelled(params, label) {
  check(params.mode === undefined || params.mode === "form", "form mode", params.mode);
  const properties = params.requestedSchema?.properties ?? {};
  for (const field of ["q1", "q1_text", "decline", "decline_reason"]) check(field in properties, `form field ${field}`, Object.keys(properties));
  const option = (properties.q1.oneOf ?? []).find((o) => o.title === label);
  check(option, `option labelled ${label}`, properties.q1);
  return option.const;
}

// In the initialize era a form comes as a server-to-client request (a
// JSON-RPC id); in the 2026-07-28 era from an input_required round, where
// the SDK hands the handler the inputRequests key (b0, b1, ...).
function checkDelivery(era, ctx) {
  const id = ctx.mcpReq.id;
  if (era === "modern") check(typeof id === "string" && /^b\d+$/.test(id), "the form came from an input_required round", id);
  else check(typeof id === "number", "the form came as elicitation/create during the call", id);
}

const lineFor = (result, asked) => {
  const line = result.structuredContent?.results?.find((l) => l.pending_id === asked.pendingId);
  check(line, `a result line for ${asked.prompt}`, result.structuredContent);
  return line;
};

// 1. Each waiting bundle of a workspace as a form, in one call: one
// filled in (answered through the claim, seen by REST and the agent), one
// dismissed (it still waits).
async function forms(era) {
  const clientName = `clarify-e2e-ts-forms-${era}`;
  const ws = await workspace(`ts forms ${era}`);
  const answered = await ask(ws, `ts task answered ${era}`, `Answered in a TypeScript form (${era})?`);
  const dismissed = await ask(ws, `ts task dismissed ${era}`, `Dismissed in a TypeScript form (${era})?`);
  const seen = [];
  let open = 0;
  const client = await connect(era, clientName, async (params, ctx) => {
    checkDelivery(era, ctx);
    const asked = formFor(params, [answered, dismissed]);
    seen.push(asked);
    open++;
    if (asked === dismissed) return { action: "cancel" };
    return { action: "accept", content: { q1: optionLabelled(params, "no"), q1_text: `from typescript (${era})` } };
  });
  try {
    const result = await call(client, { arguments: { workspace_id: ws } });
    check(!result.isError, "tool result", textOf(result));
    check(open === 2 && seen.includes(answered) && seen.includes(dismissed), "a form per waiting bundle", seen.map((a) => a.prompt));
    check(result.structuredContent.results.length === 2, "two lines", result.structuredContent);
    const won = lineFor(result, answered);
    check(won.outcome === "answered", "the filled-in form's outcome", won);
    check(won.response?.answers?.[0]?.selected_options?.[0] === "q1_opt2", "the form's answer in the result", won);
    check(lineFor(result, dismissed).outcome === "skipped", "the dismissed form's outcome", lineFor(result, dismissed));
    check(textOf(result).includes("your answer was sent to the agent"), "the result in words", textOf(result));

    const bundle = await view(answered);
    const answer = bundle.response?.answers?.[0];
    check(answer?.selected_options?.join() === "q1_opt2" && answer.custom_text === `from typescript (${era})`, "the answer on the bundle", bundle);
    check(bundle.answered_by?.channel === "mcp", "provenance channel", bundle.answered_by);
    check(bundle.answered_by?.client === clientName, "provenance names the client", bundle.answered_by);
    const waited = await agentWait(answered);
    check(waited.response?.answers?.[0]?.custom_text === `from typescript (${era})`, "the asking agent's wait", waited);
    check((await view(dismissed)).active === true, "the dismissed bundle still waits", await view(dismissed));

    // Nothing else waits there: no form, a result that says so.
    await restOk("POST", `/clarification/${dismissed.pendingId}/cancel`, {});
    const before = open;
    const empty = await call(client, { arguments: { workspace_id: ws } });
    check(open === before && textOf(empty).startsWith("Nothing waits for you."), "nothing left", textOf(empty));
  } finally {
    await client.close();
  }
}

// 2. A REST answer sent while the form is open wins; the form's answer is
// told so, with what the winner said.
async function race(era) {
  const ws = await workspace(`ts race ${era}`);
  const raced = await ask(ws, `ts task raced ${era}`, `Raced in a TypeScript form (${era})?`);
  const restAnswer = { answers: [{ question_id: "q1", selected_options: ["q1_opt1"], custom_text: `over REST (${era})` }] };
  let forms = 0;
  const client = await connect(era, `clarify-e2e-ts-race-${era}`, async (params, ctx) => {
    checkDelivery(era, ctx);
    formFor(params, [raced]);
    forms++;
    // Someone answers in the browser while the form is open.
    const won = await restOk("POST", `/clarification/${raced.pendingId}/respond`, restAnswer);
    check(won.claimed === true, "the REST answer claims it", won);
    return { action: "accept", content: { q1: optionLabelled(params, "no"), q1_text: `from the form (${era})` } };
  });
  try {
    const result = await call(client, { arguments: { pending_id: raced.pendingId } });
    check(!result.isError, "tool result", textOf(result));
    check(forms === 1, "one form", forms);
    const line = lineFor(result, raced);
    check(line.outcome === "answered_elsewhere", "the form lost", line);
    check(line.response?.answers?.[0]?.custom_text === `over REST (${era})`, "the winner's answer in the line", line);
    const text = textOf(result);
    check(text.includes("someone else answered first") && text.includes(`over REST (${era})`) && text.includes("q1_opt1"), "the result names the other answer", text);
    check(!text.includes("from the form"), "the losing answer is not reported as sent", text);
    const bundle = await view(raced);
    check(JSON.stringify(bundle.response?.answers) === JSON.stringify(line.response.answers), "exactly one winner: REST's", bundle);
    check(bundle.answered_by?.channel !== "mcp", "the winner's provenance is not the form", bundle.answered_by);
    const waited = await agentWait(raced);
    check(waited.response?.answers?.[0]?.custom_text === `over REST (${era})`, "the agent gets the winner's answer", waited);
  } finally {
    await client.close();
  }
}

// `state` with its base64url character at `index` changed.
function flipped(state, index) {
  const c = state[index];
  return state.slice(0, index) + (c === "A" ? "B" : "A") + state.slice(index + 1);
}

// The requestState with the bundle `from` it names swapped for `to`, its seal
// kept: the attack a seal must stop. Undefined when the state is not
// `prefix.base64url(payload).seal` with the pending_id readable inside.
function redirected(state, from, to) {
  const parts = state.split(".");
  if (parts.length !== 3) return undefined;
  const payload = Buffer.from(parts[1], "base64url");
  const at = payload.indexOf(from);
  if (at < 0 || from.length !== to.length) return undefined;
  payload.write(to, at, "latin1");
  return [parts[0], payload.toString("base64url"), parts[2]].join(".");
}

// 3. (2026-07-28) The round by hand (the SDK's manual mode hands back
// inputRequests and requestState): a tampered state is refused and
// answers nothing; a state taken once is refused the second time, whether
// its first use answered or skipped.
async function sealed() {
  const ws = await workspace("ts sealed");
  const target = await ask(ws, "ts task sealed", "Sealed state (TypeScript)?");
  const bystander = await ask(ws, "ts task bystander", "Bystander of a sealed state (TypeScript)?");
  const client = await connect("modern", "clarify-e2e-ts-sealed", async () => {
    throw new Error("manual mode: the handler must not be called");
  });
  const round = async (args) => {
    const first = await call(client, { arguments: args }, { allowInputRequired: true });
    check(first.resultType === "input_required", "input_required", first);
    check(typeof first.requestState === "string" && first.requestState.length > 0, "a requestState", first);
    const keys = Object.keys(first.inputRequests ?? {});
    check(keys.length === 1, "one form in the round", first.inputRequests);
    const request = first.inputRequests[keys[0]];
    check(request.method === "elicitation/create", "an elicitation request", request);
    formFor(request.params, [target]);
    return { key: keys[0], state: first.requestState, params: request.params };
  };
  const retry = (state, responses) =>
    call(client, { arguments: {}, inputResponses: responses, requestState: state }, { allowInputRequired: true });
  const refused = (result, why, what) => {
    check(result.resultType === undefined, `${what}: a result, not another round`, result);
    check(result.isError === true && textOf(result).startsWith(`requestState: ${why}`), what, result);
  };
  const stillWaiting = async (what) => {
    for (const asked of [target, bystander]) {
      const bundle = await view(asked);
      check(bundle.active === true && !bundle.response, `${what}: ${asked.prompt} still waits`, bundle);
    }
  };
  try {
    const one = await round({ pending_id: target.pendingId });
    const accept = (q1) => ({ [one.key]: { action: "accept", content: { q1, q1_text: "sealed" } } });

    // Tampered: bytes of the payload flipped, the seal cut short, the
    // bundle swapped for another with the seal kept, and no seal at all.
    const dot = one.state.indexOf(".");
    const tampered = [
      ["payload flipped", flipped(one.state, Math.floor((dot + 1 + one.state.lastIndexOf(".")) / 2))],
      ["seal flipped", flipped(one.state, one.state.length - 5)],
      ["seal cut", one.state.slice(0, -3)],
      ["made up", "rs1.bm90IGEgc3RhdGU.c2VhbA"],
    ];
    const swapped = redirected(one.state, target.pendingId, bystander.pendingId);
    check(swapped !== undefined, "the requestState's payload names its bundle (rs1.payload.seal)", one.state);
    tampered.push(["bundle swapped", swapped]);
    for (const [what, state] of tampered) {
      check(state !== one.state, `${what} differs`, state);
      refused(await retry(state, accept("q1_opt1")), "not valid", `tampered (${what})`);
      await stillWaiting(`after a tampered state (${what})`);
    }

    // Taken once (the form dismissed: the bundle still waits), then
    // replayed with an answer: refused, nothing answered.
    const skipped = await retry(one.state, { [one.key]: { action: "cancel" } });
    check(!skipped.isError && lineFor(skipped, target).outcome === "skipped", "the genuine state, its form dismissed", skipped);
    refused(await retry(one.state, accept("q1_opt1")), "already used", "replayed after a skip");
    await stillWaiting("after a replay");

    // A fresh round answered, then replayed with another answer: refused,
    // the first answer stands.
    const two = await round({ pending_id: target.pendingId });
    const answered = await retry(two.state, { [two.key]: { action: "accept", content: { q1: "q1_opt1", q1_text: "sealed" } } });
    check(!answered.isError && lineFor(answered, target).outcome === "answered", "the genuine state answers", answered);
    refused(await retry(two.state, { [two.key]: { action: "accept", content: { q1: "q1_opt2", q1_text: "replayed" } } }), "already used", "replayed after an answer");
    const bundle = await view(target);
    check(bundle.response?.answers?.[0]?.custom_text === "sealed" && bundle.response.answers[0].selected_options.join() === "q1_opt1", "the first answer stands", bundle);
    check((await view(bystander)).active === true, "the bystander still waits", await view(bystander));
  } finally {
    await client.close();
  }
}

// 4. A client that declares no elicitation: told so, with what waits.
async function noForms(era) {
  const ws = await workspace(`ts no forms ${era}`);
  const waiting = await ask(ws, `ts task no forms ${era}`, `No forms in this TypeScript client (${era})?`);
  const client = await connect(era, `clarify-e2e-ts-noforms-${era}`);
  try {
    const result = await call(client, { arguments: { workspace_id: ws } });
    check(!result.isError, "tool result", textOf(result));
    const text = textOf(result);
    check(text.includes("cannot show forms"), "says it cannot show forms", text);
    check(text.includes(waiting.pendingId) && text.includes(waiting.prompt) && text.includes("answer_question_kandev"), "lists what waits and how to answer it", text);
    const line = lineFor(result, waiting);
    check(line.outcome === "waiting" && line.note === waiting.prompt, "the waiting line", line);
    check((await view(waiting)).active === true, "it still waits", await view(waiting));
  } finally {
    await client.close();
  }
}

const checks = [];
for (const era of ["initialize", "modern"]) {
  const label = ERAS[era].label;
  checks.push([`${label}: a form per waiting bundle, answered through the claim`, () => forms(era)]);
  checks.push([`${label}: a REST answer while the form is open wins, the form is told`, () => race(era)]);
  if (era === "modern") checks.push([`${label}: a tampered and a replayed requestState are refused`, () => sealed()]);
  checks.push([`${label}: a client without forms is told what waits`, () => noForms(era)]);
}
await runChecks(checks, running, scratch);
