// Issue 49 item 2: the Activity page as a person reaches it — logged in,
// the header's "Activity" link — with its charts and each chart's numbers
// in a table, readable in light and dark on a desktop and a phone, axe
// finding nothing serious; another span is one link away.
import AxeBuilder from '@axe-core/playwright';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as apiRequest } from '@playwright/test';
import { ask, newSession } from '../helpers';
import { createToken, expect, startServer, stopServer, test } from '../fixtures';

const yesNo = [{ label: 'Yes' }, { label: 'No' }];

test('the Activity page shows the team’s questions in charts and tables, light and dark, desktop and phone', async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'clarify-e2e-activity-'));
  const alice = createToken(dir, 'alice');
  const bob = createToken(dir, 'bob');
  const { server, child } = await startServer(['--auth'], dir);
  const as = (token: string, client?: string) =>
    apiRequest.newContext({
      baseURL: server.url,
      extraHTTPHeaders: { Authorization: `Bearer ${token}`, ...(client ? { 'x-clarify-client': client } : {}) },
    });
  try {
    const api = await as(alice);
    const billing = await newSession(api, 'Migrate billing to PostgreSQL');
    const keys = await newSession(api, 'Rotate the signing keys');
    // One question a session (a session waits on one bundle at a time), several a task.
    const another = async (taskId: string) => {
      const body = await (await api.post(`/api/v1/tasks/${taskId}/sessions`, { data: {} })).json();
      return { sessionId: body.id as string, agentToken: body.agent_token as string };
    };
    const asked: string[] = [];
    for (const [session, prompt] of [
      [billing, 'Keep the old table until Friday?'],
      [await another(billing.taskId), 'Run the backfill tonight?'],
      [await another(billing.taskId), 'Drop the legacy index?'],
      [keys, 'Rotate now or at the weekend?'],
      [await another(keys.taskId), 'Tell the partners first?'],
    ] as const) {
      asked.push(await ask(api, session, [{ prompt, options: yesNo }]));
    }
    const pick = { answers: [{ question_id: 'q1', selected_options: ['q1_opt1'] }] };
    const bobCli = await as(bob, 'cli');
    for (const [who, id, body] of [
      [api, asked[0], pick],
      [api, asked[1], pick],
      [bobCli, asked[3], pick],
      [bobCli, asked[4], { rejected: true, reject_reason: 'ask the team lead' }],
    ] as const) {
      expect((await who.post(`/api/v1/clarification/${id}/respond`, { data: body })).status()).toBe(200);
    }

    await page.goto(server.url);
    await page.getByTestId('login-token').fill(alice);
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('logout')).toBeVisible();
    await page.getByRole('link', { name: 'Activity' }).click();
    await expect(page.getByRole('heading', { name: 'Activity', level: 2 })).toBeVisible();
    await expect(page.getByTestId('activity-summary')).toContainText('5 asked, 4 answered');
    // Each chart's numbers, as a screen reader reads them.
    const today = page.getByTestId('per-day').locator('tbody tr').last();
    await expect(today.locator('td').nth(0)).toHaveText('5');
    await expect(today.locator('td').nth(1)).toHaveText('4');
    await expect(page.getByRole('table', { name: 'Answers by person' })).toContainText('bob');
    await expect(page.getByRole('table', { name: 'Answers by channel' })).toContainText('cli (from the command line)');
    await expect(page.getByRole('table', { name: 'Tasks that ask most' })).toContainText('Migrate billing to PostgreSQL');
    await expect(page.getByTestId('waiting')).toContainText('Drop the legacy index?');

    for (const [size, viewport] of [['desktop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]] as const) {
      await page.setViewportSize(viewport);
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        const { violations } = await new AxeBuilder({ page }).analyze();
        const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        expect(bad.map((v) => `${v.id} ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), `${colorScheme} ${size}`).toEqual([]);
        // Nothing runs off a phone's screen.
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
        await page.screenshot({ path: join(test.info().project.outputDir, 'screens', `49-activity-${colorScheme}-${size}.png`), fullPage: true });
      }
    }

    await page.getByRole('link', { name: '7 days' }).click();
    await expect(page).toHaveURL(/\/activity\?days=7$/);
    // Six quiet days are one row, then today's.
    await expect(page.getByTestId('per-day').locator('tbody tr')).toHaveCount(2);
    await expect(page.getByTestId('per-day').locator('tbody th').first()).toContainText(' to ');
    await expect(page.getByRole('link', { name: '7 days' })).toHaveAttribute('aria-current', 'page');
    // Back to the inbox, still logged in: the one question left waits there.
    await page.getByRole('link', { name: 'Clarify' }).click();
    await expect(page.getByText('Drop the legacy index?')).toBeVisible();
    await api.dispose();
    await bobCli.dispose();
  } finally {
    await stopServer(child, dir);
  }
});
