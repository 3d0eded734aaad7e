// An accessibility scan of the overlay, the task list and the transcript
// with axe: no serious or critical violations (issue 6, item 6).
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { test, expect } from '../fixtures';
import { ask, newSession } from '../helpers';

async function serious(page: Page) {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

test('the overlay has no serious or critical axe violations', async ({ page, request }) => {
  const session = await newSession(request);
  await ask(
    request,
    session,
    [
      { prompt: 'Which database?', options: [{ label: 'SQLite' }, { label: 'PostgreSQL' }] },
      { prompt: 'Which port?', options: [{ label: '5432' }, { label: '6543' }] },
    ],
    'Shared context.',
  );
  await page.goto(`/s/${session.sessionId}`);
  await page.getByTestId('clarification-option').first().click();
  expect(await serious(page)).toEqual([]);

  // The over-limit state too: error text and the invalid field.
  await page.getByTestId('clarification-input').fill('x'.repeat(2001));
  await expect(page.getByTestId('clarification-rune-error')).toBeVisible();
  expect(await serious(page)).toEqual([]);
});

test('the task list has no serious or critical axe violations', async ({ page, request }) => {
  const session = await newSession(request, 'accessible task');
  await ask(request, session, [{ prompt: 'Ok?', options: [{ label: 'Yes' }, { label: 'No' }] }]);
  await page.goto('/');
  await expect(page.getByTestId('task-pending-indicator').first()).toBeVisible();
  expect(await serious(page)).toEqual([]);
});
