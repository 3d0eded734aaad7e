// Exploration runs (kept so the findings in README.md can be re-checked): one scripted Claude Code
// session with stub-hook.mjs on every event, printing the payloads, the screens and the tool_results.
// Usage: [JUDGE_MODE=auto|acceptEdits|bypassPermissions|plan] node explore.mjs SCENARIO   (see `scenarios` below)
import fs from 'node:fs';
import path from 'node:path';
import { startAnthropicStandIn, resultText } from './standin-anthropic.mjs';
import { scratchClaude, startClaude, prompt, quit } from './lib/claude.mjs';
import { until } from './lib/tmux.mjs';
import { readPayloads, summary } from './lib/payloads.mjs';

const HERE = path.dirname(new URL(import.meta.url).pathname);
const ask = (questions) => ({ blocks: [{ type: 'tool_use', name: 'AskUserQuestion', input: { questions } }], stop: 'tool_use' });
const bash = (command) => ({ blocks: [{ type: 'tool_use', name: 'Bash', input: { command, description: 'Write a marker file' } }], stop: 'tool_use' });
const DB = { question: 'Which database should the service use?', header: 'Database', multiSelect: false,
  options: [{ label: 'PostgreSQL', description: 'Shared server' }, { label: 'SQLite', description: 'One file' }] };
const LANGS = { question: 'Which "languages" should\nwe support?', header: 'Languages', multiSelect: true,
  options: [{ label: 'Rust', description: 'r' }, { label: 'Go', description: 'g' }, { label: 'Zig', description: 'z' }] };
const pre = (updatedInput) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput } });
const perm = (decision) => ({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } });

const scenarios = {
  // PreToolUse allow + answers; then the Bash PermissionRequest allowed by the hook.
  preAllow: { turns: [ask([DB]), bash('echo ran > ran.txt')],
    answers: { 'PreToolUse:AskUserQuestion': pre({ questions: [DB], answers: { [DB.question]: 'SQLite' } }),
      'PermissionRequest:Bash': perm({ behavior: 'allow' }) } },
  // PermissionRequest on AskUserQuestion answering it (no PreToolUse answer); Bash denied with a message.
  permAnswerDeny: { turns: [ask([DB]), bash('echo ran > ran.txt')],
    answers: { 'PermissionRequest:AskUserQuestion': perm({ behavior: 'allow', updatedInput: { questions: [DB], answers: { [DB.question]: 'PostgreSQL' } } }),
      'PermissionRequest:Bash': perm({ behavior: 'deny', message: 'Denied in Clarify: not on Fridays' }) } },
  // PreToolUse deny for AskUserQuestion (the decline path) with a reason.
  preDeny: { turns: [ask([DB])],
    answers: { 'PreToolUse:AskUserQuestion': { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'The user declined: not now' } } } },
  // Multi-select + quotes/newline answered by the hook.
  preMulti: { turns: [ask([LANGS, DB])],
    answers: { 'PreToolUse:AskUserQuestion': pre({ questions: [LANGS, DB], answers: { [LANGS.question]: 'Rust, Zig', [DB.question]: 'my own "db"\nline 2' } }) } },
  // Terminal: multi-select (1, 3, then submit) and free text for the second question; recorded PostToolUse.
  terminalMulti: { turns: [ask([LANGS, DB])], answers: {}, interact: 'multi' },
  // Terminal: Esc on the dialog (decline).
  terminalEsc: { turns: [ask([DB])], answers: {}, interact: 'esc' },
  // PermissionRequest answering AskUserQuestion 6 s late: does the dialog show meanwhile, and does the late answer win?
  permLate: { turns: [ask([DB]), bash('echo ran > ran.txt')], interact: 'watch',
    answers: { 'PermissionRequest:AskUserQuestion': { delayMs: 6000, output: perm({ behavior: 'allow', updatedInput: { questions: [DB], answers: { [DB.question]: 'SQLite' } } }) },
      'PermissionRequest:Bash': { delayMs: 6000, output: perm({ behavior: 'deny', message: 'Denied late in Clarify' }) } } },
  // The same, but the person answers at the terminal first (2 s): the hook's later answer must not count.
  permLateTerminalFirst: { turns: [ask([DB])], interact: 'keys',
    answers: { 'PermissionRequest:AskUserQuestion': { delayMs: 6000, output: perm({ behavior: 'allow', updatedInput: { questions: [DB], answers: { [DB.question]: 'PostgreSQL' } } }) } } },
  // PreToolUse waiting 6 s: is the dialog held back meanwhile?
  preLate: { turns: [ask([DB])], interact: 'watch',
    answers: { 'PreToolUse:AskUserQuestion': { delayMs: 6000, output: pre({ questions: [DB], answers: { [DB.question]: 'SQLite' } }) } } },
  // PreToolUse killed by its 3 s timeout: does the dialog show then (never stall)?
  preTimeout: { turns: [ask([DB])], interact: 'keys', timeout: 3,
    answers: { 'PreToolUse:AskUserQuestion': { delayMs: 20000, output: pre({ questions: [DB], answers: { [DB.question]: 'PostgreSQL' } }) } } },
  // A hook that fails (exit 1, stderr): the dialog?
  preFails: { turns: [ask([DB])], interact: 'keys', answers: { 'PreToolUse:AskUserQuestion': 'not json at all' } },
  // More real payloads for the recorded-payload tests: a multi-select question with quotes and a
  // newline, then Write, Read, Edit and WebFetch approvals (allowed; WebFetch denied: no network).
  recordMore: { turns: [ask([LANGS, DB]),
    { blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: 'PROJECT/notes.txt', content: 'one\ntwo\n' } }], stop: 'tool_use' },
    { blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: 'PROJECT/notes.txt' } }], stop: 'tool_use' },
    { blocks: [{ type: 'tool_use', name: 'Edit', input: { file_path: 'PROJECT/notes.txt', old_string: 'two', new_string: 'three' } }], stop: 'tool_use' },
    { blocks: [{ type: 'tool_use', name: 'WebFetch', input: { url: 'https://example.com/docs', prompt: 'Summarize the page' } }], stop: 'tool_use' }],
    answers: { 'PermissionRequest:AskUserQuestion': perm({ behavior: 'allow', updatedInput: { questions: [LANGS, DB], answers: { [LANGS.question]: 'Rust, Zig', [DB.question]: 'SQLite' } } }),
      'PermissionRequest:WebFetch': perm({ behavior: 'deny', message: 'No network in the judge' }),
      PermissionRequest: perm({ behavior: 'allow' }) } },
  // "Allow for this session": allow with updatedPermissions; the same command again must not ask.
  allowSession: { turns: [bash('echo one >> ran.txt'), bash('echo two >> ran.txt')],
    answers: { 'PermissionRequest:Bash': perm({ behavior: 'allow', updatedPermissions: [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'echo:*' }], behavior: 'allow', destination: 'session' }] }) } },
  // The same, handing back the payload's permission_suggestions.
  allowSuggested: { turns: [bash('echo one >> ran.txt'), bash('echo two >> ran.txt')],
    answers: { 'PermissionRequest:Bash': perm({ behavior: 'allow', updatedPermissions: 'SUGGESTIONS' }) } },
  // And a rule for a command with no redirection.
  allowSessionRule: { turns: [bash('touch a.txt'), bash('touch b.txt')],
    answers: { 'PermissionRequest:Bash': perm({ behavior: 'allow', updatedPermissions: [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'touch:*' }], behavior: 'allow', destination: 'session' }] }) } },
  // A silent hook: the terminal dialog, answered with a key.
  terminal: { turns: [ask([DB]), bash('echo ran > ran.txt')], answers: {}, interact: 'keys' },
};

const name = process.argv[2];
const sc = scenarios[name];
if (!sc) throw new Error(`scenario? ${Object.keys(scenarios).join(' ')}`);
const scratch = scratchClaude({});
const turns = JSON.parse(JSON.stringify(sc.turns).replaceAll('PROJECT/', `${scratch.project}/`));
const standIn = await startAnthropicStandIn({ marker: 'JUDGE', turns, log: (m) => console.log(m) });
const hookDir = path.join(scratch.root, 'hook');
fs.mkdirSync(hookDir);
fs.writeFileSync(path.join(hookDir, 'answers.json'), JSON.stringify(sc.answers));
const events = ['PreToolUse', 'PermissionRequest', 'PostToolUse', 'PostToolUseFailure', 'PermissionDenied', 'SessionEnd', 'Notification', 'Stop'];
const hooks = Object.fromEntries(events.map((e) => [e, [{ matcher: '*', hooks: [{ type: 'command', command: path.join(HERE, 'stub-hook.mjs'), timeout: sc.timeout ?? 30 }] }]]));
fs.writeFileSync(path.join(scratch.project, '.claude', 'settings.json'), JSON.stringify({ permissions: { defaultMode: process.env.JUDGE_MODE ?? 'default' }, hooks }));
const tmux = await startClaude({ scratch, baseUrl: standIn.url, env: { JUDGE_HOOK_DIR: hookDir } });
await prompt(tmux, 'JUDGE: go');
const mainCount = () => standIn.requests.filter((r) => r.main).length;
const snap = (label) => console.log(`---- screen ${label}\n${tmux.screen().split('\n').filter((l) => l.trim()).join('\n')}`);
const wantMain = turns.length + 1;
const deadline = Date.now() + 20000;
while (mainCount() < wantMain && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 500));
  const s = tmux.screen();
  if (sc.interact && /Enter to select|Do you want to proceed|Submit answers/.test(s)) {
    snap('dialog');
    if (sc.interact === 'watch') { await new Promise((r) => setTimeout(r, 1500)); continue; }
    if (sc.interact === 'esc') tmux.keys('Escape');
    else if (sc.interact === 'keys') tmux.keys(/proceed/.test(s) ? '1' : '2');
    else if (sc.interact === 'multi') {
      if (/Review your answers|Submit answers/.test(s)) tmux.keys('Enter');
      else if (/Languages/.test(s.split('\n').find((l) => l.includes('☐') || l.includes('☒') || l.includes('✔')) ?? '') && /\[ \]/.test(s)) {
        tmux.keys('Space'); await new Promise((r) => setTimeout(r, 200)); tmux.keys('Down', 'Down'); await new Promise((r) => setTimeout(r, 200));
        tmux.keys('Space'); await new Promise((r) => setTimeout(r, 200)); snap('multi-picked'); tmux.keys('Tab');
      } else { tmux.keys('3'); await new Promise((r) => setTimeout(r, 300)); tmux.type('my own "db"'); await new Promise((r) => setTimeout(r, 300)); tmux.keys('Enter'); }
    }
    await new Promise((r) => setTimeout(r, 1200));
  }
}
await new Promise((r) => setTimeout(r, 800));
snap('end');
await quit(tmux);
const payloads = readPayloads(hookDir);
console.log('---- events:', summary(payloads));
for (const p of payloads) if (/Post|Denied|Failure/.test(p.hook_event_name)) console.log(JSON.stringify(p));
console.log('---- tool_results the stand-in received:');
for (const r of standIn.results()) console.log(JSON.stringify({ is_error: r.is_error, text: resultText(r) }));
console.log('---- files in project:', fs.readdirSync(scratch.project));
console.log('---- hook ends:', fs.readdirSync(hookDir).filter((f) => /\.(killed|finished)$/.test(f)).map((f) => `${f}=${fs.readFileSync(path.join(hookDir, f), 'utf8')}`).join(' '));
console.log('---- scratch:', scratch.root);
await standIn.close();
