// A scratch Claude Code install: HOME with onboarding, the dummy key and the project's trust
// already accepted (so no first-run dialogs), a project dir, and the real CLI under tmux.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launch, pressWhile, prompt, quitWith } from './tmux.mjs';

export { prompt };

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
export function startClaude({ scratch, baseUrl, env = {} }) {
  return launch('claude', {
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
  }, 'the Claude Code prompt', (tmux) => /mode on|edits on|for shortcuts/.test(tmux.screen()));
}

/** Ends the session as a person does (Ctrl-D twice), so SessionEnd hooks run. */
export const quit = (tmux) => quitWith(tmux, 'C-d', 'Claude Code to exit');

/** Presses `key` in Claude Code's open dialog (see pressWhile). */
export const pressInDialog = (tmux, key, dialog = /Enter to select/) => pressWhile(tmux, dialog, key);
