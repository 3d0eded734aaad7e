// Exploration run for Codex (kept so README.md's findings can be re-checked): the model asks to run
// a command with escalation; stub-hook.mjs on every event answers PermissionRequest with ANSWER_JSON
// (or stays silent and the run answers the TUI's dialog with KEY). Usage: node explore-codex.mjs [ANSWER_JSON] [KEY]
import fs from 'node:fs';
import path from 'node:path';
import { startOpenAIStandIn, outputText } from './standin-openai.mjs';
import { scratchCodex, startCodex, prompt, quit } from './lib/codex.mjs';
import { until } from './lib/tmux.mjs';
import { readPayloads, summary } from './lib/payloads.mjs';

const HERE = path.dirname(new URL(import.meta.url).pathname);
const [answer, key] = process.argv.slice(2);
const call = { type: 'call', name: 'exec_command', arguments: { cmd: 'echo ran > ran.txt', justification: 'Write a marker file?', sandbox_permissions: 'require_escalated' } };
const standIn = await startOpenAIStandIn({ marker: 'JUDGE', turns: [[call]], log: (m) => console.log(m) });
const events = ['PreToolUse', 'PermissionRequest', 'PostToolUse', 'SessionStart', 'SessionEnd', 'Stop', 'UserPromptSubmit'];
const hooks = Object.fromEntries(events.map((e) => [e, [{ matcher: '*', hooks: [{ type: 'command', command: path.join(HERE, 'stub-hook.mjs'), timeout: 30 }] }]]));
const scratch = scratchCodex({ baseUrl: standIn.url, hooks });
const hookDir = path.join(scratch.root, 'hook');
fs.mkdirSync(hookDir);
if (answer) fs.writeFileSync(path.join(hookDir, 'answers.json'), JSON.stringify({ PermissionRequest: JSON.parse(answer) }));
const tmux = await startCodex({ scratch, env: { JUDGE_HOOK_DIR: hookDir } });
await prompt(tmux, 'JUDGE: write the marker');
const snap = (l) => console.log(`---- ${l}\n${tmux.screen().split('\n').filter((x) => x.trim() && !/[⣀-⣿]/.test(x)).join('\n')}`);
await until('the end of the turn or a dialog', () => standIn.outputs().length > 0 || /Would you like to run/.test(tmux.screen()), 30000).catch((e) => console.log(e.message));
snap('after prompt');
if (key && /Would you like to run/.test(tmux.screen())) {
  tmux.keys(key);
  await until('the tool output', () => standIn.outputs().length > 0, 15000).catch((e) => console.log(e.message));
}
await new Promise((r) => setTimeout(r, 1500));
snap('end');
await quit(tmux);
const payloads = readPayloads(hookDir);
console.log('events:', summary(payloads));
for (const p of payloads) if (/Post|SessionEnd/.test(p.hook_event_name)) console.log(JSON.stringify(p));
for (const o of standIn.outputs()) console.log('OUTPUT:', JSON.stringify(outputText(o)));
for (const r of standIn.requests) console.log('REQ', r.main, JSON.stringify(Object.fromEntries(Object.entries(r.body).filter(([k]) => !['input', 'tools', 'instructions'].includes(k)))).slice(0, 400), JSON.stringify(r.body.input?.slice(4)).slice(0, 600));
console.log('project files:', fs.readdirSync(scratch.project), scratch.root);
await standIn.close();
