// The ground, shown (issue 29 item 2): the server really stops (SIGKILL,
// as a crash) and really comes back on the same port and SQLite file; the
// page says so within 2 s, keeps what was typed, and drops its stale error.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as apiRequest } from '@playwright/test';
import { test, expect, startServer, stopServer } from '../fixtures';
import { askOne } from '../helpers';

test('the server stops: a banner within 2 s, the draft kept, plain words; it returns: all cleared, and the answer goes', async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'clarify-e2e-ground-'));
  let { server, child } = await startServer([], dir);
  const listen = new URL(server.url).host;
  try {
    const api = await apiRequest.newContext({ baseURL: server.url });
    const asked = await askOne(api, 'Keep the cache?');
    await page.goto(`${server.url}/s/${asked.sessionId}`);
    await page.getByTestId('clarification-input').fill('only for reads');
    await expect(page.getByTestId('offline-banner')).toHaveCount(0);

    child.kill('SIGKILL');
    await new Promise((done) => child.once('exit', done));
    await expect(page.getByTestId('offline-banner')).toBeVisible({ timeout: 2_000 });
    await expect(page.getByTestId('offline-banner')).toContainText('Cannot reach the server');

    // A send while it is down: said in words, no TypeError, nothing lost.
    await page.getByTestId('clarification-option').first().click();
    await page.getByTestId('clarification-submit').click();
    const error = page.getByTestId('clarification-error');
    await expect(error).toContainText('the server cannot be reached');
    await expect(error).not.toContainText('TypeError');
    await expect(page.getByTestId('clarification-input')).toHaveValue('only for reads');

    ({ server, child } = await startServer([], dir, listen));
    await expect(page.getByTestId('offline-banner')).toHaveCount(0, { timeout: 15_000 });
    await expect(error).toHaveCount(0);
    await expect(page.getByTestId('clarification-input')).toHaveValue('only for reads');
    await page.getByTestId('clarification-submit').click();
    await expect(page.getByTestId('transcript-outcome')).toHaveText('Answered: SQLite, “only for reads”');
    await api.dispose();
  } finally {
    await stopServer(child, dir);
  }
});
