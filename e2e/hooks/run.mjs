// Issue 47's judges: the real Claude Code and Codex CLIs (pinned in package.json), with only their
// model APIs replaced by scripted stand-ins, against a real `clarify serve`. The hooks are installed
// as a user would (`clarify hooks install …`), the person answers in Clarify over REST or at the
// agent's terminal (tmux), and each judge checks what reached the model.
//
// Usage: node run.mjs CLARIFY_BIN [--hook=clarify|hook-only|stub] [--only=SUBSTRING]
//   --hook=clarify (the default): `clarify hooks install claude --project` / `… codex` and `clarify hook`.
//   --hook=hook-only: `clarify hook`, in settings the judge writes (before `clarify hooks install` exists).
//   --hook=stub: stub-clarify-hook.mjs does the hook's job over REST (until `clarify hook` exists);
//     checks that only the real program can pass (channel "terminal") are reported as skipped.
// Prints 'ok NAME', 'skip NAME: why' or 'FAILED NAME: …', then 'N passed, N failed'; exits 1 on a failure.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startAnthropicStandIn, resultText } from './standin-anthropic.mjs';
import { startOpenAIStandIn, outputText } from './standin-openai.mjs';
import * as claude from './lib/claude.mjs';
import * as codex from './lib/codex.mjs';
import { until, pressWhile } from './lib/tmux.mjs';
import { client, optionId, installClaudeHooks, installCodexHooks, startClarify } from './lib/clarify.mjs';
import { startChannels, tap, slackPress, telegramPress } from './lib/channels.mjs';

const args = process.argv.slice(2);
const bin = path.resolve(args.find((a) => !a.startsWith('--')) ?? process.env.CLARIFY_BIN ?? '');
const mode = (args.find((a) => a.startsWith('--hook=')) ?? '--hook=clarify').slice('--hook='.length);
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length);
if (!fs.existsSync(bin) || !['clarify', 'hook-only', 'stub'].includes(mode)) {
  console.error('usage: node run.mjs CLARIFY_BIN [--hook=clarify|hook-only|stub] [--only=SUBSTRING]');
  process.exit(2);
}

// Say it once, plainly, when the binary lacks what the mode needs (rather than eight failures).
const needs = { clarify: ['hooks', 'install', '--help'], 'hook-only': ['hook', '--help'], stub: ['--help'] }[mode];
if (spawnSync(bin, needs, { encoding: 'utf8' }).status !== 0) {
  console.log(`FAILED setup: \`${path.basename(bin)} ${needs.join(' ')}\` fails: this binary has no \`clarify ${needs.slice(0, -1).join(' ')}\` (try --hook=hook-only or --hook=stub)`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}

class Skip extends Error {}
const check = (cond, what, detail) => {
  if (!cond) throw new Error(`${what}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
};

const DB = { question: 'Which database should the service use?', header: 'Database', multiSelect: false,
  options: [{ label: 'PostgreSQL', description: 'A shared server' }, { label: 'SQLite', description: 'One file' }] };
const LANGS = { question: 'Which "languages" should\nwe support?', header: 'Languages', multiSelect: true,
  options: [{ label: 'Rust', description: 'r' }, { label: 'Go', description: 'g' }, { label: 'Zig', description: 'z' }] };
const askTurn = (questions) => ({ blocks: [{ type: 'tool_use', name: 'AskUserQuestion', input: { questions } }], stop: 'tool_use' });
const bashTurn = (command) => ({ blocks: [{ type: 'tool_use', name: 'Bash', input: { command, description: 'Write a marker file' } }], stop: 'tool_use' });
const MARKER = 'JUDGE';
// `clarify hook --terminal-after 0`: the agent's own dialog at once, the question still open in Clarify.
const TERMINAL_AT_ONCE = { CLARIFY_HOOK_TERMINAL_AFTER: '0' };
// Nothing listens here: the server is down for the hook.
const CLOSED_PORT = 'http://127.0.0.1:9';
/** The bundle asking `question` first; the bundle showing `call` (an approval), wherever it shows it. */
const asking = (question) => (b) => b.questions[0].prompt === question;
const showing = (call) => (b) => JSON.stringify(b).includes(JSON.stringify(call).slice(1, -1));

const scratchRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'clarify-hook-judges-'));
const channels = await startChannels();
const running = await startClarify(bin, { database: path.join(scratchRoot, 'clarify.db'), args: channels.serveArgs });
const clarify = client(running.base);
const hookEnv = (scratch) => {
  const state = path.join(scratch.root, 'hook-state');
  fs.mkdirSync(state, { recursive: true });
  return { CLARIFY_SERVER: running.base, JUDGE_HOOK_STATE: state };
};

/** One Claude Code session: stand-in scripted with `turns`, hooks installed, the prompt sent; `body` runs the scenario. */
async function withClaude(turns, body, extraEnv = {}) {
  const standIn = await startAnthropicStandIn({ marker: MARKER, turns });
  const scratch = claude.scratchClaude({});
  const env = { ...hookEnv(scratch), ...extraEnv };
  installClaudeHooks({ mode, bin, scratch, env });
  let tmux;
  try {
    tmux = await claude.startClaude({ scratch, baseUrl: standIn.url, env });
    await claude.prompt(tmux, `${MARKER}: do the task`);
    await body({ standIn, scratch, tmux });
  } catch (error) {
    if (tmux) error.message += `\n--- screen:\n${tmux.screen().split('\n').filter((l) => l.trim()).join('\n')}`;
    throw error;
  } finally {
    if (tmux) await claude.quit(tmux);
    await standIn.close();
    fs.rmSync(scratch.root, { recursive: true, force: true });
  }
}

async function withCodex(call, body, extraEnv = {}) {
  const standIn = await startOpenAIStandIn({ marker: MARKER, turns: [[call]] });
  const scratch = codex.scratchCodex({ baseUrl: standIn.url });
  const env = { ...hookEnv(scratch), ...extraEnv };
  installCodexHooks({ mode, bin, scratch, env, terminalAfter: extraEnv.CLARIFY_HOOK_TERMINAL_AFTER });
  let tmux;
  try {
    tmux = await codex.startCodex({ scratch, env });
    await codex.prompt(tmux, `${MARKER}: do the task`);
    await body({ standIn, scratch, tmux });
  } catch (error) {
    if (tmux) error.message += `\n--- screen:\n${tmux.screen().split('\n').filter((l) => l.trim() && !/[⣀-⣿]/.test(l)).join('\n')}`;
    throw error;
  } finally {
    if (tmux) await codex.quit(tmux);
    await standIn.close();
    fs.rmSync(scratch.root, { recursive: true, force: true });
  }
}

/** The tool_result of the scripted call once the model has it. */
const claudeResult = (standIn) => until('the tool_result at the stand-in', () => standIn.results()[0], 30000);
const codexOutput = (standIn) => until('the function_call_output at the stand-in', () => standIn.outputs()[0], 30000);
/** Text as Slack's mrkdwn carries it (Clarify escapes &, < and >). */
const slackText = (text) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const marker = (scratch) => fs.existsSync(path.join(scratch.project, 'ran.txt'));

const judges = [
  ['claude: AskUserQuestion answered over REST, the model gets the chosen label', () =>
    withClaude([askTurn([DB])], async ({ standIn }) => {
      const bundle = await clarify.waitPending('the AskUserQuestion', asking(DB.question));
      check(bundle.questions[0].options.map((o) => `${o.label}/${o.description}`).join() === 'PostgreSQL/A shared server,SQLite/One file', 'options with descriptions', bundle.questions[0]);
      await clarify.respond(bundle.pending_id, { answers: [{ question_id: 'q1', selected_options: [optionId(bundle, 'SQLite')], custom_text: '' }] });
      const result = await claudeResult(standIn);
      check(!result.is_error && resultText(result).includes(`"${DB.question}"="SQLite"`), 'tool_result carries SQLite', resultText(result));
    })],
  ['claude: multi-select and free text over REST, in the form the tool expects', () =>
    withClaude([askTurn([LANGS, DB])], async ({ standIn }) => {
      const bundle = await clarify.waitPending('the two-question AskUserQuestion', asking(LANGS.question));
      check(bundle.questions[0].multi_select === true, 'multi_select carried', bundle.questions[0]);
      await clarify.respond(bundle.pending_id, { answers: [
        { question_id: 'q1', selected_options: [optionId(bundle, 'Rust'), optionId(bundle, 'Zig')], custom_text: '' },
        { question_id: 'q2', selected_options: [], custom_text: 'my own "db"' },
      ] });
      const text = resultText(await claudeResult(standIn));
      check(text.includes('="Rust, Zig"') && text.includes('="my own "db""'), 'labels joined by ", " and the free text as itself', text);
    })],
  ['claude: AskUserQuestion answered by one tap on a phone notification (ntfy, its reply topic)', () => {
    const seen = channels.ntfy.length;
    return withClaude([askTurn([DB])], async ({ standIn }) => {
      const bundle = await clarify.waitPending('the AskUserQuestion', asking(DB.question));
      // This bundle's notice: earlier judges asked the same question.
      const notice = await until('the ntfy notice', () => channels.ntfy.slice(seen).find((n) => n.message?.includes(DB.question)
        && n.click?.endsWith(`/t/${bundle.task_id}`) && n.actions?.some((a) => a.label === 'SQLite')), 15000);
      const tapped = await tap(notice.actions.find((a) => a.label === 'SQLite'));
      check(tapped.status === 200, 'the tap was published', tapped);
      const result = await claudeResult(standIn);
      check(resultText(result).includes('="SQLite"'), 'tool_result carries SQLite', resultText(result));
      check((await clarify.bundle(bundle.pending_id)).status === 'answered', 'the bundle answered', bundle.pending_id);
    });
  }],
  ['claude: Bash approval allowed by a Slack button press, the command runs', () => {
    const seen = channels.slack.length;
    return withClaude([bashTurn('echo ran > ran.txt')], async ({ standIn, scratch }) => {
      const bundle = await clarify.waitPending('the Bash approval', showing('echo ran > ran.txt'));
      const post = await until('the Slack post', () => channels.slack.slice(seen).find((c) => c.method === 'chat.postMessage'
        && c.body.text?.includes(slackText(bundle.questions[0].prompt))), 15000);
      const buttons = post.body.blocks.flatMap((b) => b.elements ?? []).filter((e) => e.value);
      const allow = buttons.find((e) => /Allow once|^Allow$/.test(e.text?.text));
      check(allow, 'an Allow button', buttons);
      const pressed = await slackPress(running.base, allow.value);
      check(pressed.status === 200, 'the press answered', pressed);
      const result = await claudeResult(standIn);
      check(!result.is_error && marker(scratch), 'the command ran', resultText(result));
      check((await clarify.bundle(bundle.pending_id)).answered_by?.channel === 'slack', 'answered in Slack', bundle.pending_id);
    });
  }],
  ['claude: AskUserQuestion declined in Clarify with a reason, the model reads the reason', () =>
    withClaude([askTurn([DB])], async ({ standIn }) => {
      const bundle = await clarify.waitPending('the AskUserQuestion', asking(DB.question));
      await clarify.respond(bundle.pending_id, { rejected: true, reject_reason: 'ask me tomorrow' });
      const result = await claudeResult(standIn);
      const text = resultText(result);
      check(result.is_error && /declined/i.test(text) && text.includes('ask me tomorrow'), 'a denial naming the decline and its reason', text);
    })],
  ['claude: Allow for this session, the same command runs again without asking', () =>
    withClaude([bashTurn('touch once.txt'), bashTurn('touch once.txt')], async ({ standIn, scratch }) => {
      const bundle = await clarify.waitPending('the Bash approval', showing('touch once.txt'));
      const session = bundle.questions[0].options.find((o) => /this session/i.test(o.label));
      if (!session) throw new Skip(`no "Allow for this session" option: ${bundle.questions[0].options.map((o) => o.label).join(', ')}`);
      await clarify.respond(bundle.pending_id, { answers: [{ question_id: 'q1', selected_options: [session.option_id], custom_text: '' }] });
      await until('both tool_results', () => standIn.results().length === 2, 30000);
      check(standIn.results().every((r) => !r.is_error), 'both ran', standIn.results().map(resultText));
      const again = (await clarify.pending()).filter(showing('touch once.txt'));
      check(again.length === 0, 'no second approval', again);
      check(marker(scratch) === false && fs.existsSync(path.join(scratch.project, 'once.txt')), 'the file exists', fs.readdirSync(scratch.project));
    })],
  ['claude: Bash approval allowed over REST, the command runs', () =>
    withClaude([bashTurn('echo ran > ran.txt')], async ({ standIn, scratch }) => {
      const bundle = await clarify.waitPending('the Bash approval', showing('echo ran > ran.txt'));
      await clarify.respond(bundle.pending_id, { answers: [{ question_id: 'q1', selected_options: [optionId(bundle, 'Allow once|^Allow$')], custom_text: '' }] });
      const result = await claudeResult(standIn);
      check(!result.is_error, 'the command succeeded', resultText(result));
      check(marker(scratch), 'ran.txt exists', fs.readdirSync(scratch.project));
    })],
  ['claude: Bash approval denied with a reason, the model reads the reason', () =>
    withClaude([bashTurn('echo ran > ran.txt')], async ({ standIn, scratch }) => {
      const bundle = await clarify.waitPending('the Bash approval', showing('echo ran > ran.txt'));
      await clarify.respond(bundle.pending_id, { answers: [{ question_id: 'q1', selected_options: [optionId(bundle, 'Deny')], custom_text: 'not on Fridays' }] });
      const result = await claudeResult(standIn);
      check(result.is_error && resultText(result).includes('not on Fridays'), 'a denial carrying the reason', resultText(result));
      check(!marker(scratch), 'ran.txt absent', fs.readdirSync(scratch.project));
    })],
  ['claude: answered at the terminal, the inbox says so', () =>
    withClaude([askTurn([DB])], async ({ standIn, tmux }) => {
      const bundle = await clarify.waitPending('the AskUserQuestion', asking(DB.question));
      await until('the terminal dialog', () => /Enter to select/.test(tmux.screen()), 10000);
      await claude.pressInDialog(tmux, '2');
      const result = await claudeResult(standIn);
      check(resultText(result).includes('="SQLite"'), 'the terminal answer reached the model', resultText(result));
      const settled = await until('the bundle settled', async () => {
        const b = await clarify.bundle(bundle.pending_id);
        return b.status !== 'pending' && b;
      }, 10000);
      check(!(await clarify.pending()).some((b) => b.pending_id === bundle.pending_id), 'left the inbox', settled);
      check(settled.response?.answers?.[0]?.selected_options?.includes(optionId(bundle, 'SQLite')), 'the terminal answer recorded', settled);
      if (mode === 'stub') throw new Skip(`settled, but channel "${settled.answered_by?.channel}": only clarify hook reports channel "terminal"`);
      check(settled.answered_by?.channel === 'terminal', 'answered_by.channel terminal', settled.answered_by);
    }, TERMINAL_AT_ONCE)],
  ['claude: the session ends, its open question leaves the inbox', () =>
    withClaude([askTurn([DB])], async ({ tmux }) => {
      const bundle = await clarify.waitPending('the AskUserQuestion', asking(DB.question));
      await until('the terminal dialog', () => /Enter to select/.test(tmux.screen()), 10000);
      await claude.pressInDialog(tmux, 'Escape');
      await claude.quit(tmux);
      await until('the bundle gone from the inbox', async () => !(await clarify.pending()).some((b) => b.pending_id === bundle.pending_id), 10000);
    }, TERMINAL_AT_ONCE)],
  ['claude: Clarify is down, the agent asks at its own terminal at once', () =>
    withClaude([askTurn([DB])], async ({ standIn, tmux }) => {
      await until('the terminal dialog', () => /Enter to select/.test(tmux.screen()), 15000);
      await claude.pressInDialog(tmux, '2');
      const text = resultText(await claudeResult(standIn));
      check(text.includes('="SQLite"'), 'the terminal answer reached the model, nothing invented', text);
    }, { CLARIFY_SERVER: CLOSED_PORT })],
  // Once Codex shows its own dialog, an answer in Clarify can no longer reach it: the approval may be
  // withdrawn at once (clarify hook) or at the session's end (the stub); either way it must not linger.
  ['codex: no answer in Clarify, its own dialog approves at the terminal; the approval does not linger', () =>
    withCodex({ type: 'call', name: 'exec_command', arguments: { cmd: 'echo ran > ran.txt', justification: 'Write a marker file?', sandbox_permissions: 'require_escalated' } },
      async ({ standIn, scratch, tmux }) => {
        await until('the Codex approval dialog', () => /Would you like to run/.test(tmux.screen()), 15000);
        await pressWhile(tmux, /Would you like to run/, 'y');
        const out = outputText(await codexOutput(standIn));
        check(/exited with code 0/.test(out) && marker(scratch), 'the command ran', out);
        await codex.quit(tmux);
        await until('no approval for it left in the inbox', async () => !(await clarify.pendingNow()).some(showing('echo ran > ran.txt')), 10000);
      }, TERMINAL_AT_ONCE)],
  ['codex: approval denied by a Telegram button press, the command does not run', () => {
    const seen = channels.telegram.length;
    return withCodex({ type: 'call', name: 'exec_command', arguments: { cmd: 'echo ran > ran.txt', justification: 'Write a marker file?', sandbox_permissions: 'require_escalated' } },
      async ({ standIn, scratch }) => {
        const bundle = await clarify.waitPending('the Codex approval', showing('echo ran > ran.txt'));
        const prompt = bundle.questions[0].prompt;
        const sent = await until('the Telegram message', () => channels.telegram.slice(seen).find((c) => c.method === 'sendMessage'
          && (c.body.text?.includes(prompt) || c.body.text?.includes(slackText(prompt)))), 15000);
        const index = channels.telegram.indexOf(sent);
        const rows = sent.body.reply_markup?.inline_keyboard ?? [];
        const deny = rows.flat().find((b) => /Deny/.test(b.text));
        check(deny, 'a Deny button', rows);
        const pressed = await telegramPress(running.base, deny.callback_data, 501 + index);
        check(pressed.status === 200, 'the press answered', pressed);
        const out = outputText(await codexOutput(standIn));
        check(/Rejected|denied/i.test(out) && !marker(scratch), 'a denial, the command not run', out);
        check((await clarify.bundle(bundle.pending_id)).answered_by?.channel === 'telegram', 'answered in Telegram', bundle.pending_id);
      });
  }],
  ['codex: approval allowed over REST, the command runs', () =>
    withCodex({ type: 'call', name: 'exec_command', arguments: { cmd: 'echo ran > ran.txt', justification: 'Write a marker file?', sandbox_permissions: 'require_escalated' } },
      async ({ standIn, scratch }) => {
        const bundle = await clarify.waitPending('the Codex approval', showing('echo ran > ran.txt'));
        await clarify.respond(bundle.pending_id, { answers: [{ question_id: 'q1', selected_options: [optionId(bundle, 'Allow once|^Allow$')], custom_text: '' }] });
        const out = outputText(await codexOutput(standIn));
        check(/exited with code 0/.test(out), 'the command ran', out);
        check(marker(scratch), 'ran.txt exists', fs.readdirSync(scratch.project));
      })],
  ['codex: approval denied with a reason, the model reads the reason', () =>
    withCodex({ type: 'call', name: 'exec_command', arguments: { cmd: 'echo ran > ran.txt', justification: 'Write a marker file?', sandbox_permissions: 'require_escalated' } },
      async ({ standIn, scratch }) => {
        const bundle = await clarify.waitPending('the Codex approval', showing('echo ran > ran.txt'));
        await clarify.respond(bundle.pending_id, { answers: [{ question_id: 'q1', selected_options: [optionId(bundle, 'Deny')], custom_text: 'not on Fridays' }] });
        const out = outputText(await codexOutput(standIn));
        check(out.includes('not on Fridays'), 'the reason reached the model', out);
        check(!marker(scratch), 'ran.txt absent', fs.readdirSync(scratch.project));
      })],
];

let passed = 0;
let failed = 0;
for (const [name, judge] of judges) {
  if (only && !name.includes(only)) continue;
  try {
    await clarify.forgetPending();
    await judge();
    console.log(`ok ${name}`);
    passed++;
  } catch (error) {
    if (error instanceof Skip) {
      console.log(`skip ${name}: ${error.message.split('\n--- screen')[0]}`);
      continue;
    }
    console.log(`FAILED ${name}: ${error.stack ?? error}`);
    failed++;
  }
}
running.server.kill('SIGTERM');
await running.exited;
await channels.close();
fs.rmSync(scratchRoot, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
