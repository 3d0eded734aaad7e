// A real `clarify` server per worker: bound to 127.0.0.1:0 with its own
// SQLite file, its URL read from the line it prints once it is listening.
import { test as base, expect } from '@playwright/test';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export interface Server {
  url: string;
}

export const binary = process.env.CLARIFY_BIN ?? resolve(__dirname, '../target/debug/clarify');

/**
 * Starts `clarify serve` (with `extraArgs`) on the SQLite file in `dir`,
 * listening on `listen` (a free port unless a test restarts a server where
 * its pages still are).
 */
export async function startServer(
  extraArgs: string[] = [],
  dir = mkdtempSync(join(tmpdir(), 'clarify-e2e-')),
  listen = '127.0.0.1:0',
): Promise<{ server: Server; child: ChildProcess; dir: string }> {
  // The tests' sessions resume through /bin/true: the one program allowed.
  const args = ['serve', '--listen', listen, '--allow-resume-command', '/bin/true'];
  const child = spawn(binary, [...args, ...extraArgs], {
    cwd: dir,
    env: { ...process.env, CLARIFY_DATABASE_URL: `sqlite://${join(dir, 'clarify.db')}` },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const match = /^listening on (http:\/\/\S+)( \(auth on\))?$/.exec(line);
      if (match) resolveUrl(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`clarify exited early with ${code}`)));
    child.once('error', reject);
  });
  return { server: { url }, child, dir };
}

/** Stops a server `startServer` started and removes its folder. */
export async function stopServer(child: ChildProcess, dir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    await new Promise((done) => child.once('exit', done));
  }
  rmSync(dir, { recursive: true, force: true });
}

/** A personal access token for `user` (made if new) in `dir`'s database. */
export function createToken(dir: string, user: string): string {
  const out = execFileSync(binary, ['token', 'create', '--user', user, '--database-url', `sqlite://${join(dir, 'clarify.db')}`], {
    encoding: 'utf8',
  });
  return out.trim().split('\n').pop()!;
}

export const test = base.extend<{}, { server: Server }>({
  server: [
    async ({}, use) => {
      const { server, child, dir } = await startServer();
      await use(server);
      await stopServer(child, dir);
    },
    { scope: 'worker' },
  ],
  baseURL: async ({ server }, use) => use(server.url),
});

export { expect };
