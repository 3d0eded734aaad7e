#!/usr/bin/env node
// A stand-in for `clarify hook` used to learn (and keep checking) what the agents accept:
// records each payload to $JUDGE_HOOK_DIR, then prints the canned answer for "<event>:<tool>"
// (or "<event>") from $JUDGE_HOOK_DIR/answers.json; with none it prints nothing (the agent's own dialog).
// Each answer is the JSON to print, or {"delayMs", "output"} to print it late.
import fs from 'node:fs';
import path from 'node:path';

const dir = process.env.JUDGE_HOOK_DIR;
const input = fs.readFileSync(0, 'utf8');
const payload = JSON.parse(input);
const file = path.join(dir, `${process.hrtime.bigint()}-${process.pid}.json`);
fs.writeFileSync(file, input);
// Tells the judge whether the agent let the hook finish or killed it first.
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => { fs.writeFileSync(`${file}.killed`, sig); process.exit(1); });
let answers = {};
try {
  answers = JSON.parse(fs.readFileSync(path.join(dir, 'answers.json'), 'utf8'));
} catch {
  /* no canned answers: stay silent */
}
let answer = answers[`${payload.hook_event_name}:${payload.tool_name}`] ?? answers[payload.hook_event_name];
// {"delayMs": N, "output": …} answers late, as a person on a phone does.
if (answer && typeof answer === 'object' && 'delayMs' in answer) {
  await new Promise((r) => setTimeout(r, answer.delayMs));
  answer = answer.output;
}
// "SUGGESTIONS" stands for the payload's own permission_suggestions (what "always allow" applies).
if (answer?.hookSpecificOutput?.decision?.updatedPermissions === 'SUGGESTIONS') {
  answer.hookSpecificOutput.decision.updatedPermissions = payload.permission_suggestions;
}
if (answer !== undefined) process.stdout.write(typeof answer === 'string' ? answer : JSON.stringify(answer));
fs.writeFileSync(`${file}.finished`, '');
