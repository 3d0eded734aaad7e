// A question for someone in particular (issue 29 item 6), with --auth so
// the page knows who is looking: what is assigned to alice comes first
// under "For you", another person's says so, and the overlay reassigns.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { request as apiRequest } from '@playwright/test';
import { test, expect, startServer, stopServer, createToken } from '../fixtures';

test('"For you" first, another person\'s named, and reassigned from the overlay', async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'clarify-e2e-assignee-'));
  const alice = createToken(dir, 'alice');
  const { server, child } = await startServer(['--auth'], dir);
  try {
    const api = await apiRequest.newContext({ baseURL: server.url, extraHTTPHeaders: { Authorization: `Bearer ${alice}` } });
    const workspace = await (await api.post('/api/v1/workspaces', { data: { name: 'team' } })).json();
    const ask = async (title: string, prompt: string, assignee?: string) => {
      const task = await (await api.post('/api/v1/tasks', { data: { title, workspace_id: workspace.id } })).json();
      const session = await (await api.post(`/api/v1/tasks/${task.id}/sessions`, { data: {} })).json();
      const response = await api.post('/api/v1/clarification/request', {
        headers: { Authorization: `Bearer ${session.agent_token}` },
        data: { questions: [{ prompt, options: [{ label: 'Yes' }, { label: 'No' }] }], ...(assignee ? { assignee } : {}) },
      });
      expect(response.status()).toBe(201);
      return (await response.json()).pending_id as string;
    };
    const plain = await ask('plain task', 'Anyone?');
    const forBob = await ask('bob task', 'Bob, ship it?', 'bob');
    const forAlice = await ask('alice task', 'Alice, rotate keys?', 'alice');

    await page.goto(`${server.url}/`);
    await page.getByTestId('login-token').fill(alice);
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('inbox-for-you')).toHaveText('For you');
    const mine = page.getByTestId('inbox-mine');
    await expect(mine.getByTestId('inbox-row')).toHaveCount(1);
    await expect(mine.locator(`[data-pending-id="${forAlice}"]`)).toBeVisible();
    // "For you" comes before the rest, though it was asked last.
    const order = await page.getByTestId('inbox-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-pending-id')));
    expect(order.indexOf(forAlice)).toBeLessThan(order.indexOf(plain));
    const bobRow = page.locator(`[data-pending-id="${forBob}"]`);
    await expect(bobRow.getByTestId('inbox-assignee')).toHaveText('for bob');

    // Reassigned to alice from its overlay: it moves under "For you", live.
    await bobRow.locator('button.row').click();
    await expect(bobRow.getByTestId('clarification-assignee')).toHaveText('For bob · reassign');
    await bobRow.getByTestId('clarification-assignee').click();
    expect((await new AxeBuilder({ page }).include('[data-testid=clarification-assign]').analyze()).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
    await bobRow.getByTestId('clarification-assign-input').fill('alice');
    await bobRow.getByTestId('clarification-assign-save').click();
    await expect(mine.locator(`[data-pending-id="${forBob}"]`)).toBeVisible();
    const view = await (await api.get(`/api/v1/clarification/${forBob}`)).json();
    expect(view.assignee).toBe('alice');

    // Alice answers it; her own answer reads "by you" in the transcript.
    // Moved under "For you", it stays open where it now is.
    const moved = mine.locator(`[data-pending-id="${forBob}"]`);
    await expect(moved.getByTestId('clarification-overlay')).toBeVisible();
    await moved.getByTestId('clarification-option').first().click();
    await expect(page.getByTestId('inbox-notice')).toContainText('Answer sent.', { timeout: 15_000 });
    await page.goto(`${server.url}/t/${view.task_id}`);
    await expect(page.getByTestId('transcript-provenance')).toContainText('Answered by you in the browser');
    await api.dispose();
  } finally {
    await stopServer(child, dir);
  }
});
