// The Clarify side of the judges: the server under test, what a person does over REST (the inbox,
// an answer, a denial), and how the hooks get installed: by `clarify hooks install` (the real
// program) or, until it exists, by writing stub-clarify-hook.mjs into the agents' settings.
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import fs from 'node:fs';
import path from 'node:path';
import { until } from './tmux.mjs';

const HERE = path.dirname(new URL(import.meta.url).pathname);
export const STUB_HOOK = path.resolve(HERE, '../stub-clarify-hook.mjs');

/**
 * Starts `bin serve` on a free port with the SQLite file `database` and `args`; resolves to
 * {server, exited, base} once it says where it listens (it binds before saying so).
 */
export async function startClarify(bin, { database, args = [] }) {
  const server = spawn(bin, ['serve', '--listen', '127.0.0.1:0', '--database-url', `sqlite://${database}`, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((r) => server.once('exit', r));
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: server.stdout }).once('line', resolve);
    server.once('exit', (code) => reject(new Error(`clarify exited ${code} before listening`)));
  });
  if (!line.startsWith('listening on ')) throw new Error(`clarify said ${line}`);
  return { server, exited, base: line.slice('listening on '.length) };
}

export function client(base) {
  // Bundles already pending when a judge starts belong to an earlier judge: never its answer.
  const stale = new Set();
  async function rest(method, route, body) {
    const res = await fetch(`${base}/api/v1${route}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed = text;
    try { parsed = JSON.parse(text); } catch { /* not JSON: kept as text */ }
    return { status: res.status, body: parsed };
  }
  return {
    rest,
    pending: async () => (await rest('GET', '/pending')).body.bundles,
    /**
     * The pending bundle that passes `test` (given the bundle), once it is listed. Approvals are
     * found by their command anywhere in the bundle: the prompt, the context or the call shown.
     */
    waitPending: (what, test, ms = 30000) =>
      until(`a pending bundle: ${what}`, async () => (await rest('GET', '/pending')).body.bundles.find((b) => !stale.has(b.pending_id) && test(b)), ms),
    /** The bundles pending now, less earlier judges'. */
    pendingNow: async () => (await rest('GET', '/pending')).body.bundles.filter((b) => !stale.has(b.pending_id)),
    /** Marks every bundle pending now as an earlier judge's. */
    forgetPending: async () => {
      for (const b of (await rest('GET', '/pending')).body.bundles) stale.add(b.pending_id);
    },
    bundle: async (id) => (await rest('GET', `/clarification/${id}`)).body,
    respond: async (id, submission) => {
      const r = await rest('POST', `/clarification/${id}/respond`, submission);
      if (r.status !== 200 || !r.body.claimed) throw new Error(`respond ${id}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
  };
}

/** The option of `bundle`'s question `q` (0-based) labelled `label`. */
export function optionId(bundle, label, q = 0) {
  const o = bundle.questions[q].options.find((x) => x.label === label || new RegExp(label, 'i').test(x.label));
  if (!o) throw new Error(`no option ${label} in ${JSON.stringify(bundle.questions[q].options)}`);
  return o.option_id;
}

function clarifyRun(bin, args, opts) {
  const r = spawnSync(bin, args, { encoding: 'utf8', ...opts });
  if (r.status !== 0) throw new Error(`clarify ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** The hook command the judge writes itself: `clarify hook` ("hook-only") or the stub. */
function hookCommand(mode, bin, agent) {
  return mode === 'hook-only' ? `${JSON.stringify(bin)} hook --agent ${agent}` : `node ${STUB_HOOK}`;
}

/**
 * Installs the Claude Code hooks in `scratch.project`. `mode` "clarify": the one documented line,
 * `clarify hooks install claude --project`; "hook-only" (before `hooks install` exists) and "stub":
 * the judge writes the settings, calling `clarify hook` or stub-clarify-hook.mjs.
 */
export function installClaudeHooks({ mode, bin, scratch, env }) {
  const settingsPath = path.join(scratch.project, '.claude', 'settings.json');
  if (mode === 'clarify') {
    clarifyRun(bin, ['hooks', 'install', 'claude', '--project'], { cwd: scratch.project, env: { ...process.env, ...env, HOME: scratch.home } });
  } else {
    const hook = (matcher) => [{ matcher, hooks: [{ type: 'command', command: hookCommand(mode, bin, 'claude'), timeout: 600 }] }];
    const hooks = { PermissionRequest: hook('*'), PostToolUse: hook('AskUserQuestion'), SessionEnd: hook('*') };
    // clarify hook's design answers AskUserQuestion before the dialog (PreToolUse); the stub answers it in PermissionRequest.
    if (mode === 'hook-only') hooks.PreToolUse = hook('AskUserQuestion');
    fs.writeFileSync(settingsPath, JSON.stringify({ hooks }, null, 2));
  }
  const settings = JSON.parse(fs.readFileSync(settingsPath, 'utf8'));
  if (!settings.hooks || Object.keys(settings.hooks).length === 0) throw new Error(`no hooks installed: ${JSON.stringify(settings)}`);
  // 2.1.332 defaults to "auto" mode, whose classifier decides instead of asking; the judges ask.
  settings.permissions = { ...(settings.permissions ?? {}), defaultMode: 'default' };
  fs.writeFileSync(settingsPath, JSON.stringify(settings, null, 2));
  return settings;
}

/**
 * The same for Codex: `clarify hooks install codex` (into CODEX_HOME), or the judge's own hooks.json.
 * `terminalAfter` (seconds) goes to the install line; the other modes read CLARIFY_HOOK_TERMINAL_AFTER.
 */
export function installCodexHooks({ mode, bin, scratch, env, terminalAfter }) {
  const hooksPath = path.join(scratch.codexHome, 'hooks.json');
  if (mode === 'clarify') {
    // The installed command carries its own --terminal-after, which beats the environment.
    const flags = terminalAfter === undefined ? [] : ['--terminal-after', terminalAfter];
    clarifyRun(bin, ['hooks', 'install', 'codex', ...flags], { cwd: scratch.project, env: { ...process.env, ...env, HOME: scratch.home, CODEX_HOME: scratch.codexHome } });
    const config = fs.readFileSync(path.join(scratch.codexHome, 'config.toml'), 'utf8');
    if (!fs.existsSync(hooksPath) && !/\[\[?hooks/.test(config)) throw new Error('clarify hooks install codex wrote no hooks');
    return;
  }
  const hook = [{ matcher: '*', hooks: [{ type: 'command', command: hookCommand(mode, bin, 'codex'), timeout: 600 }] }];
  fs.writeFileSync(hooksPath, JSON.stringify({ hooks: { PermissionRequest: hook, SessionEnd: hook } }, null, 2));
}
