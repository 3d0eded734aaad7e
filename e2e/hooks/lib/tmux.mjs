// Drives a terminal program under tmux (its own socket), as a person at the keyboard would:
// send-keys to type, capture-pane to read the screen.
import { execFileSync } from 'node:child_process';

export class Tmux {
  constructor(socket) {
    this.socket = socket;
  }

  run(args) {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** Starts `argv` in a detached 160x50 window with exactly `env` set on top of tmux's own. */
  start({ cwd, env, argv }) {
    const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    this.run(['new-session', '-d', '-s', 'main', '-x', '160', '-y', '50', '-c', cwd, ...envArgs, ...argv]);
  }

  screen() {
    try {
      return this.run(['capture-pane', '-p', '-t', 'main']);
    } catch {
      return '';
    }
  }

  keys(...keys) {
    this.run(['send-keys', '-t', 'main', ...keys]);
  }

  /** Types literal text (no key-name lookup), then nothing else. */
  type(text) {
    this.run(['send-keys', '-t', 'main', '-l', text]);
  }

  alive() {
    try {
      this.run(['has-session', '-t', 'main']);
      return true;
    } catch {
      return false;
    }
  }

  kill() {
    try {
      this.run(['kill-server']);
    } catch {
      /* already gone */
    }
  }
}

/** Polls `check` (every 100 ms) until it returns a truthy value or `ms` pass; returns that value. */
export async function until(what, check, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Presses `key` while `dialog` is on the screen, as a person would. Both CLIs ignore keys for a
 * moment after a dialog appears (measured: a key sent at once is lost), so wait before each press.
 */
export function pressWhile(tmux, dialog, key) {
  return until('the dialog to close', async () => {
    await new Promise((r) => setTimeout(r, 800));
    if (!dialog.test(tmux.screen())) return true;
    tmux.keys(key);
    return false;
  }, 15000);
}

/**
 * Starts `argv` under a tmux of its own (named after `name`) and resolves once `ready` (polled; it
 * may press keys to get past a notice) is true; shows the screen in the error when it never is.
 */
export async function launch(name, { cwd, env, argv }, what, ready) {
  const tmux = new Tmux(`clarify-judge-${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  tmux.start({ cwd, env, argv });
  await until(what, () => ready(tmux), 30000).catch((error) => {
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

/** Ends the TUI as a person does (`key` twice: Ctrl-D, Ctrl-C), so SessionEnd hooks run. */
export async function quitWith(tmux, key, what) {
  if (!tmux.alive()) return;
  tmux.keys(key);
  await new Promise((r) => setTimeout(r, 400));
  try {
    if (tmux.alive()) tmux.keys(key);
  } catch {
    /* it exited between the check and the key */
  }
  await until(what, () => !tmux.alive(), 15000).catch(() => tmux.kill());
  tmux.kill();
}
