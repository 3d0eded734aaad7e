// A scratch Claude Code install: HOME with onboarding, the dummy key and the project's trust
// already accepted (so no first-run dialogs), a project dir, and the real CLI under tmux.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Tmux, until, pressWhile } from './tmux.mjs';

const HERE = path.dirname(new URL(import.meta.url).pathname);
export const CLAUDE_BIN = path.resolve(HERE, '../node_modules/.bin/claude');
const DUMMY_KEY = 'sk-ant-api03-clarify-judge-dummy-key-0000000000';

/** Makes HOME and project dirs under one scratch root; `settings` becomes .claude/settings.json. */
export function scratchClaude({ settings }) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'clarify-judge-'));
  const home = path.join(root, 'home');
  const project = path.join(root, 'project');
  fs.mkdirSync(path.join(project, '.claude'), { recursive: true });
  fs.mkdirSync(home);
  fs.writeFileSync(
    path.join(home, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: 'dark',
      autoUpdates: false,
      customApiKeyResponses: { approved: [DUMMY_KEY.slice(-20)], rejected: [] },
      projects: { [project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
    }),
  );
  if (settings) writeSettings(project, settings);
  return { root, home, project };
}

export function writeSettings(project, settings) {
  fs.writeFileSync(path.join(project, '.claude', 'settings.json'), JSON.stringify(settings, null, 2));
}

export function readSettings(project) {
  return JSON.parse(fs.readFileSync(path.join(project, '.claude', 'settings.json'), 'utf8'));
}

/** Starts the interactive TUI against the stand-in; returns the Tmux handle once the prompt shows. */
export async function startClaude({ scratch, baseUrl, env = {} }) {
  const tmux = new Tmux(`clarify-judge-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  tmux.start({
    cwd: scratch.project,
    env: {
      HOME: scratch.home,
      ANTHROPIC_BASE_URL: baseUrl,
      ANTHROPIC_API_KEY: DUMMY_KEY,
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      ...env,
    },
    argv: [CLAUDE_BIN],
  });
  await until('the Claude Code prompt', () => /mode on|edits on|for shortcuts/.test(tmux.screen()), 30000).catch((error) => {
    error.message += `\n--- screen:\n${tmux.screen()}`;
    tmux.kill();
    throw error;
  });
  return tmux;
}

/** Types a prompt and submits it. */
export async function prompt(tmux, text) {
  tmux.type(text);
  await new Promise((r) => setTimeout(r, 300));
  tmux.keys('Enter');
}

/** Ends the session as a person does (Ctrl-D twice), so SessionEnd hooks run. */
export async function quit(tmux) {
  if (!tmux.alive()) return;
  tmux.keys('C-d');
  await new Promise((r) => setTimeout(r, 400));
  try {
    if (tmux.alive()) tmux.keys('C-d');
  } catch {
    /* it exited between the check and the key */
  }
  await until('Claude Code to exit', () => !tmux.alive(), 15000).catch(() => tmux.kill());
  tmux.kill();
}

/** Presses `key` in Claude Code's open dialog (see pressWhile). */
export const pressInDialog = (tmux, key, dialog = /Enter to select/) => pressWhile(tmux, dialog, key);
