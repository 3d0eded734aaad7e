// Screenshots of issue 29's inbox (light and dark, desktop and phone): a
// grouped row, an assigned question, the offline banner, and the form kept
// when someone else answered first. Each state is also checked with axe,
// so the pictures are of pages that pass. Written to test-results/screens.
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { APIRequestContext, Page } from '@playwright/test';
import { test, expect } from '../fixtures';
import { newSession } from '../helpers';

const sizes = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

async function shoot(page: Page, name: string) {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    const { violations } = await new AxeBuilder({ page }).analyze();
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id), name).toEqual([]);
    const size = page.viewportSize()!.width > 500 ? 'desktop' : 'phone';
    await page.screenshot({ path: join(test.info().project.outputDir, 'screens', `${name}-${colorScheme}-${size}.png`), fullPage: true });
  }
}

async function askAs(request: APIRequestContext, title: string, prompt: string, extra: object = {}) {
  const session = await newSession(request, title);
  const response = await request.post('/api/v1/clarification/request', {
    headers: { Authorization: `Bearer ${session.agentToken}` },
    data: { questions: [{ prompt, options: [{ label: 'Postgres' }, { label: 'SQLite' }] }], ...extra },
  });
  expect(response.status()).toBe(201);
  return { ...session, pendingId: (await response.json()).pending_id as string };
}

for (const [size, viewport] of Object.entries(sizes)) {
  test.describe(size, () => {
    test.use({ viewport, hasTouch: size === 'phone', isMobile: size === 'phone' });

    test(`the inbox with a grouped row and an assigned question (${size})`, async ({ page, request }) => {
      for (let i = 0; i < 3; i++) {
        await askAs(request, `billing shard ${i}`, `Screens ${size}: which database for the shard?`, { context: `shard ${i}` });
      }
      const assigned = await askAs(request, 'rotate the signing keys', `Screens ${size}: rotate now or at the weekend?`, {
        assignee: 'bob',
      });
      await page.goto('/');
      await expect(page.getByTestId('inbox-alike').first()).toBeVisible();
      await expect(page.getByTestId('inbox-assignee').first()).toBeVisible();
      await shoot(page, 'inbox');
      // The assigned question, opened, its reassign field unfolded.
      const row = page.locator(`[data-pending-id="${assigned.pendingId}"]`);
      await row.locator('button.row').click();
      await row.getByTestId('clarification-assignee').click();
      await expect(row.getByTestId('clarification-assign-input')).toBeVisible();
      await shoot(page, 'assigned');
    });

    test(`the offline banner (${size})`, async ({ page, request }) => {
      const asked = await askAs(request, 'offline picture', `Screens ${size}: ship it?`);
      // Every socket is closed as it opens: the server "is gone".
      await page.routeWebSocket('**/api/v1/ws', (ws) => ws.close());
      await page.goto(`/s/${asked.sessionId}`);
      await page.getByTestId('clarification-input').fill('after the freeze');
      await expect(page.getByTestId('offline-banner')).toBeVisible();
      await shoot(page, 'offline');
    });

    test(`the form kept when someone else answered first (${size})`, async ({ page, context, request }) => {
      const asked = await askAs(request, 'lost race picture', `Screens ${size}: which region?`);
      await page.goto(`/s/${asked.sessionId}`);
      await page.getByTestId('clarification-input').fill('eu only, because of GDPR');
      const other = await context.newPage();
      await other.goto(`/s/${asked.sessionId}`);
      await other.getByTestId('clarification-option').nth(1).click();
      await expect(page.getByTestId('clarification-overtaken')).toBeVisible();
      await other.close();
      await shoot(page, 'overtaken');
    });
  });
}
