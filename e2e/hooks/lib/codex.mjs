// A scratch Codex install: CODEX_HOME whose config.toml points the model at the stand-in, asks
// before commands (approval_policy on-request, read-only sandbox) and trusts the project; the
// real TUI under tmux. `codex exec` cannot be used: it forces approval_policy "never", so no
// approval (and no PermissionRequest hook) ever happens there (measured on 0.171.0).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launch, prompt, quitWith } from './tmux.mjs';

export { prompt };

const HERE = path.dirname(new URL(import.meta.url).pathname);
export const CODEX_BIN = path.resolve(HERE, '../node_modules/.bin/codex');

/** Makes CODEX_HOME (config.toml, and hooks.json when `hooks` is given) and a project dir. */
export function scratchCodex({ baseUrl, hooks }) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'clarify-judge-codex-'));
  const home = path.join(root, 'home');
  const codexHome = path.join(home, '.codex');
  const project = path.join(root, 'project');
  fs.mkdirSync(codexHome, { recursive: true });
  fs.mkdirSync(project);
  fs.writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      // gpt-5.5 gets plain function tools; the newest model's catalog entry switches to a JS "code mode".
      'model = "gpt-5.5"',
      'model_provider = "standin"',
      'approval_policy = "on-request"',
      'sandbox_mode = "read-only"',
      '[model_providers.standin]',
      'name = "standin"',
      `base_url = "${baseUrl}"`,
      'env_key = "STANDIN_KEY"',
      'wire_api = "responses"',
      `[projects.${JSON.stringify(project)}]`,
      'trust_level = "trusted"',
      // Marks the "Meet <new model>" upgrade notice as seen, as answering "Use existing model" does.
      '[notice.model_migrations]',
      '"gpt-5.5" = "gpt-6-sol"',
      '',
    ].join('\n'),
  );
  if (hooks) fs.writeFileSync(path.join(codexHome, 'hooks.json'), JSON.stringify({ hooks }, null, 2));
  return { root, home, codexHome, project };
}

/**
 * Starts the TUI; `bypassHookTrust` passes --dangerously-bypass-hook-trust (Codex otherwise skips
 * hooks nobody has reviewed in /hooks). Dismisses the model-upgrade notice; resolves at the prompt.
 */
export function startCodex({ scratch, env = {}, bypassHookTrust = true }) {
  return launch('codex', {
    cwd: scratch.project,
    env: { HOME: scratch.home, CODEX_HOME: scratch.codexHome, STANDIN_KEY: 'dummy', ...env },
    argv: [CODEX_BIN, ...(bypassHookTrust ? ['--dangerously-bypass-hook-trust'] : [])],
  }, 'the Codex prompt', async (tmux) => {
    const s = tmux.screen();
    if (/Use existing model/.test(s)) {
      tmux.keys('2');
      await new Promise((r) => setTimeout(r, 300));
      if (/Use existing model/.test(tmux.screen())) tmux.keys('Enter');
      return false;
    }
    return /Ask Codex to do anything|for shortcuts/.test(s);
  });
}

/** Ends the TUI as a person does (Ctrl-C twice), so SessionEnd hooks run. */
export const quit = (tmux) => quitWith(tmux, 'C-c', 'Codex to exit');
