#!/usr/bin/env node
// A stand-in for `clarify hook` used to learn (and keep checking) what the agents accept:
// records each payload to $JUDGE_HOOK_DIR, then prints the canned answer for "<event>:<tool>"
// (or "<event>") from $JUDGE_HOOK_DIR/answers.json; with none it prints nothing (the agent's own dialog).
import fs from 'node:fs';
import path from 'node:path';

const dir = process.env.JUDGE_HOOK_DIR;
const input = fs.readFileSync(0, 'utf8');
const payload = JSON.parse(input);
fs.writeFileSync(path.join(dir, `${process.hrtime.bigint()}-${process.pid}.json`), input);
let answers = {};
try {
  answers = JSON.parse(fs.readFileSync(path.join(dir, 'answers.json'), 'utf8'));
} catch {
  /* no canned answers: stay silent */
}
const answer = answers[`${payload.hook_event_name}:${payload.tool_name}`] ?? answers[payload.hook_event_name];
if (answer !== undefined) process.stdout.write(typeof answer === 'string' ? answer : JSON.stringify(answer));
