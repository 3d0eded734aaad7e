#!/usr/bin/env node
// A stand-in for `clarify hook` (issue 47 item 1) while the Rust one is being built: the same job
// over the same REST API, so the judges in run.mjs can run end to end today and the lead can switch
// them to the real program (`run.mjs --hook=clarify`). Kept small and literal; it is also a worked
// example of the outputs README.md documents. Reads CLARIFY_SERVER; keeps one Clarify session per
// agent session in $JUDGE_HOOK_STATE. Never stalls, never guesses: any failure prints nothing
// (the agent shows its own dialog) and says why on stderr.
import fs from 'node:fs';
import path from 'node:path';

const server = process.env.CLARIFY_SERVER;
const stateDir = process.env.JUDGE_HOOK_STATE;
// The person answered at the terminal first: Claude Code kills this hook; nothing to print.
process.on('SIGTERM', () => process.exit(0));

async function rest(method, route, body, token) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${server}/api/v1${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function ok(method, route, body, token) {
  const r = await rest(method, route, body, token);
  if (r.status < 200 || r.status > 299) throw new Error(`${method} ${route}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

function readState() {
  try {
    return JSON.parse(fs.readFileSync(path.join(stateDir, 'sessions.json'), 'utf8'));
  } catch {
    return {};
  }
}

function writeState(state) {
  fs.writeFileSync(path.join(stateDir, 'sessions.json'), JSON.stringify(state, null, 2));
}

/** The Clarify session of this agent session (one per conversation), made on first use. */
async function session(payload) {
  const state = readState();
  if (state[payload.session_id]) return state[payload.session_id];
  const ws = await ok('POST', '/workspaces', { name: 'hooks' });
  const task = await ok('POST', '/tasks', { title: path.basename(payload.cwd), workspace_id: ws.id });
  const s = await ok('POST', `/tasks/${task.id}/sessions`, {});
  state[payload.session_id] = { token: s.agent_token, open: {} };
  writeState(state);
  return state[payload.session_id];
}

function remember(payload, key, pendingId) {
  const state = readState();
  state[payload.session_id].open[key] = pendingId;
  writeState(state);
}

// Seconds before the agent's own dialog is let through (the question stays open in Clarify).
const terminalAfter = Number(process.env.CLARIFY_HOOK_TERMINAL_AFTER ?? 86400);

/** Asks and waits for the person, until `terminalAfter` (then the agent asks at its terminal). */
async function askAndWait(payload, key, questions) {
  const s = await session(payload);
  const created = await ok('POST', '/clarification/request', { questions }, s.token);
  remember(payload, key, created.pending_id);
  const end = Date.now() + terminalAfter * 1000;
  for (;;) {
    if (Date.now() >= end) throw new Error(`no answer in ${terminalAfter} s`);
    const wait = Math.max(1, Math.min(20, Math.ceil((end - Date.now()) / 1000)));
    const r = await rest('GET', `/clarification/${created.pending_id}/wait?timeout=${wait}`, undefined, s.token);
    if (r.status === 200) return { pendingId: created.pending_id, outcome: r.body };
    if (r.status >= 500 || r.status === 404 || r.status === 409) throw new Error(`wait: ${r.status} ${JSON.stringify(r.body)}`);
  }
}

const keyOf = (payload) => `${payload.tool_name}:${JSON.stringify(payload.tool_input?.questions ?? payload.tool_input)}`;
const permission = (decision) => ({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } });

async function askUserQuestion(payload) {
  const asked = payload.tool_input.questions;
  const questions = asked.map((q) => ({
    prompt: q.question,
    multi_select: Boolean(q.multiSelect),
    options: q.options.map((o) => ({ label: o.label, description: o.description ?? '' })),
  }));
  const { outcome } = await askAndWait(payload, keyOf(payload), questions);
  const response = outcome.response;
  if (response.rejected) {
    return permission({ behavior: 'deny', message: `The user declined${response.reject_reason ? `: ${response.reject_reason}` : '.'}` });
  }
  const answers = {};
  asked.forEach((q, i) => {
    const a = response.answers.find((x) => x.question_id === `q${i + 1}`);
    // Option ids are assigned q<N>_opt<M> in order (no ids are sent).
    const labels = (a?.selected_options ?? []).map((id) => q.options[Number(id.split('_opt')[1]) - 1]?.label).filter(Boolean);
    if (a?.custom_text) labels.push(a.custom_text);
    // The form Claude Code's own dialog produces: labels joined by ", ".
    answers[q.question] = labels.join(', ');
  });
  return permission({ behavior: 'allow', updatedInput: { ...payload.tool_input, answers } });
}

function shown(payload) {
  const input = payload.tool_input ?? {};
  if (input.command) return input.command;
  if (input.file_path) return input.file_path;
  if (input.url) return input.url;
  return JSON.stringify(input);
}

/** The session rule "Allow for this session" adds: this exact command for Bash, else the tool. */
function sessionRule(payload) {
  const rule = payload.tool_name === 'Bash' ? { toolName: 'Bash', ruleContent: payload.tool_input.command } : { toolName: payload.tool_name };
  return [{ type: 'addRules', rules: [rule], behavior: 'allow', destination: 'session' }];
}

async function approval(payload) {
  // Codex's payloads carry turn_id; it refuses a decision with updatedPermissions (fails closed).
  const claude = payload.turn_id === undefined;
  const labels = claude ? ['Allow once', 'Allow for this session', 'Deny'] : ['Allow once', 'Deny'];
  const { outcome } = await askAndWait(payload, keyOf(payload), [{
    prompt: `Allow ${payload.tool_name}: \`${shown(payload)}\`?`,
    options: labels.map((label) => ({ label })),
  }]);
  const response = outcome.response;
  const a = response.answers?.[0];
  const picked = labels[Number(a?.selected_options?.[0]?.split('_opt')[1]) - 1];
  if (!response.rejected && picked === 'Allow once') return permission({ behavior: 'allow' });
  if (!response.rejected && picked === 'Allow for this session') return permission({ behavior: 'allow', updatedPermissions: sessionRule(payload) });
  const reason = response.reject_reason || a?.custom_text || '';
  return permission({ behavior: 'deny', message: reason ? `Denied in Clarify: ${reason}` : 'Denied in Clarify.' });
}

/** The person answered at the terminal: settle the open bundle with that answer. */
async function terminalAnswer(payload) {
  const s = readState()[payload.session_id];
  const pendingId = s?.open[keyOf({ ...payload, tool_input: { questions: payload.tool_input.questions } })];
  if (!pendingId) return;
  const answers = payload.tool_input.questions.map((q, i) => {
    const given = payload.tool_input.answers?.[q.question] ?? '';
    const picked = q.options.flatMap((o, j) => (given.split(', ').includes(o.label) ? [`q${i + 1}_opt${j + 1}`] : []));
    return { question_id: `q${i + 1}`, selected_options: picked, custom_text: picked.length ? '' : given };
  });
  // Loses quietly when Clarify's own answer already won (the hook answered first).
  await rest('POST', `/clarification/${pendingId}/respond`, { answers });
}

async function sessionEnd(payload) {
  const s = readState()[payload.session_id];
  for (const pendingId of Object.values(s?.open ?? {})) await rest('POST', `/clarification/${pendingId}/cancel`, {});
}

async function main() {
  const payload = JSON.parse(fs.readFileSync(0, 'utf8'));
  const event = payload.hook_event_name;
  if (event === 'PermissionRequest') {
    return payload.tool_name === 'AskUserQuestion' ? askUserQuestion(payload) : approval(payload);
  }
  if (event === 'PostToolUse' && payload.tool_name === 'AskUserQuestion') await terminalAnswer(payload);
  if (event === 'SessionEnd') await sessionEnd(payload);
  return undefined;
}

try {
  const out = await main();
  if (out) process.stdout.write(JSON.stringify(out));
} catch (error) {
  process.stderr.write(`clarify hook (stub): ${error.message}; the agent asks at the terminal\n`);
}
