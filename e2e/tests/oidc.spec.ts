// Issue 49 item 3: sign in with the team's identity provider, in a real
// browser against a real OpenID provider (panva's oidc-provider, run by
// e2e/oidc/provider.mjs): the login page offers it (light and dark, phone
// and desktop, axe clean), the provider's form signs in, the inbox opens signed in, a question
// an agent asked is answered there, and signing out ends the session.
import AxeBuilder from '@axe-core/playwright';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { request as apiRequest, type Page } from '@playwright/test';
import { test, expect, startServer, stopServer, createToken } from '../fixtures';
import { ask, newSession } from '../helpers';

/** A free port on 127.0.0.1: the provider must know Clarify's redirect URI
 * before Clarify, which must know the provider's issuer, starts. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as { port: number };
  await new Promise((done) => probe.close(done));
  return port;
}

/** The provider, with Clarify's client sending browsers back to `redirectUri`. */
async function startProvider(redirectUri: string): Promise<{ issuer: string; child: ChildProcess }> {
  const child = spawn('node', [resolve(__dirname, '../oidc/provider.mjs')], {
    env: { ...process.env, OIDC_CLIENT_ID: 'clarify', OIDC_CLIENT_SECRET: 'e2e-secret', OIDC_REDIRECT_URI: redirectUri },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const issuer = await new Promise<string>((done, fail) => {
    createInterface({ input: child.stdout! }).once('line', done);
    child.once('exit', (code) => fail(new Error(`the provider exited with ${code} (npm ci in e2e/oidc?)`)));
  });
  return { issuer, child };
}

async function judge(page: Page, name: string) {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.id} ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), name).toEqual([]);
  await page.screenshot({ path: join(test.info().project.outputDir, 'screens', `49-${name}.png`) });
}

test('sign in with the identity provider, answer in the inbox, sign out', async ({ page }) => {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const provider = await startProvider(`${publicUrl}/api/v1/auth/oidc/callback`);
  const dir = mkdtempSync(join(tmpdir(), 'clarify-e2e-oidc-'));
  // The agents' host has a token; the person has none, only the provider.
  const host = createToken(dir, 'agent-host');
  process.env.CLARIFY_OIDC_CLIENT_SECRET = 'e2e-secret';
  const { server, child } = await startServer([
    '--auth', '--public-url', publicUrl,
    '--oidc-issuer', provider.issuer, '--oidc-client-id', 'clarify',
    // The provider is on loopback: admitted as an operator admits theirs.
    '--allow-webhook-network', '127.0.0.1/32',
  ], dir, `127.0.0.1:${port}`);
  delete process.env.CLARIFY_OIDC_CLIENT_SECRET;
  try {
    expect(server.url).toBe(publicUrl);
    // The login page offers the provider beside the token form.
    await page.goto(`${server.url}/`);
    await expect(page.getByTestId('login-token')).toBeVisible();
    const signIn = page.getByTestId('oidc-signin');
    await expect(signIn).toBeVisible();
    await expect(signIn).toHaveText('Sign in with 127.0.0.1');
    for (const [size, viewport] of [['phone', { width: 390, height: 844 }], ['desktop', { width: 1280, height: 800 }]] as const) {
      await page.setViewportSize(viewport);
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        await expect(signIn).toBeInViewport();
        await judge(page, `oidc-login-${colorScheme}-${size}`);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });

    // At the provider: its own sign-in form.
    await signIn.click();
    await expect(page).toHaveURL(new RegExp(`^${provider.issuer}/interaction/`));
    await page.locator('input[name="login"]').fill('ada');
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();

    // Back in the inbox, signed in as the provider's preferred_username.
    await expect(page).toHaveURL(`${server.url}/`);
    await expect(page.getByTestId('who')).toHaveText('Logged in as ada');
    await expect(page.getByTestId('oidc-signin')).toBeHidden();

    // An agent asks; the person answers in the inbox.
    const api = await apiRequest.newContext({ baseURL: server.url, extraHTTPHeaders: { Authorization: `Bearer ${host}` } });
    const session = await newSession(api, 'oidc task');
    const pendingId = await ask(api, session, [{ prompt: 'Ship it through the provider?', options: [{ label: 'Yes' }, { label: 'No' }] }]);
    const row = page.locator(`[data-pending-id="${pendingId}"]`);
    await row.locator('button.row').click();
    await row.getByTestId('clarification-option').first().click();
    await expect(page.getByTestId('inbox-notice')).toContainText('Answer sent.', { timeout: 15_000 });
    const view = await (await api.get(`/api/v1/clarification/${pendingId}`)).json();
    expect(view.status).toBe('answered');
    expect(view.response.answers[0].selected_options).toEqual(['q1_opt1']);
    await judge(page, 'oidc-answered');

    // Signing out ends the session the provider's sign-in began.
    await page.getByTestId('logout').click();
    await expect(page.getByTestId('login-token')).toBeVisible();
    const me = await (await page.request.get(`${server.url}/api/v1/auth/me`)).json();
    expect(me.user).toBeNull();
    await api.dispose();
  } finally {
    await stopServer(child, dir);
    provider.child.kill();
  }
});
