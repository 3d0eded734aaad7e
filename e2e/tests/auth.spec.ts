// With --auth: the login page (paste a token), logout, and per-user
// visibility of tasks in the browser (issue 6, item 5; A1–A3).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as apiRequest } from '@playwright/test';
import { test, expect, startServer, stopServer, createToken } from '../fixtures';

test('login, logout, and a second user does not see the first user’s task', async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'clarify-e2e-auth-'));
  const alice = createToken(dir, 'alice');
  const bob = createToken(dir, 'bob');
  const { server, child } = await startServer(['--auth'], dir);
  try {
    const api = await apiRequest.newContext({
      baseURL: server.url,
      extraHTTPHeaders: { Authorization: `Bearer ${alice}` },
    });
    const workspace = await (await api.post('/api/v1/workspaces', { data: { name: 'alice ws' } })).json();
    const task = await api.post('/api/v1/tasks', { data: { title: 'alice’s task', workspace_id: workspace.id } });
    expect(task.status()).toBe(201);

    // Nobody is logged in: every page shows the login form.
    await page.goto(`${server.url}/`);
    await expect(page.getByTestId('login-token')).toBeVisible();
    // Where a token comes from, and why one was refused (issue 29).
    await expect(page.getByTestId('login-hint')).toContainText('clarify token create --user NAME');
    await page.getByTestId('login-token').fill('clk_pat_not_a_token');
    await page.getByTestId('login-submit').click();
    await expect(page.getByRole('alert')).toContainText('unknown, revoked or expired');
    await page.getByTestId('login-token').fill('my password');
    await page.getByTestId('login-submit').click();
    await expect(page.getByRole('alert')).toContainText('not an access token');

    await page.getByTestId('login-token').fill(bob);
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('logout')).toBeVisible();
    await expect(page.getByTestId('who')).toHaveText('Logged in as bob');
    // Nothing waits for bob yet: the inbox says how an agent asks.
    await expect(page.getByTestId('inbox-connect')).toContainText('claude mcp add clarify -- clarify mcp');
    await expect(page.getByText('No tasks yet.')).toBeVisible();
    await expect(page.getByText('alice’s task')).toHaveCount(0);

    await page.getByTestId('logout').click();
    await expect(page.getByTestId('login-token')).toBeVisible();
    await page.getByTestId('login-token').fill(alice);
    await page.getByTestId('login-submit').click();
    await expect(page.getByText('alice’s task')).toBeVisible();
    await api.dispose();
  } finally {
    await stopServer(child, dir);
  }
});
