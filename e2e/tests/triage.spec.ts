// Triage at keyboard speed (issue 29 item 4): j/k through the inbox, Enter
// or a number opens (issue 46 item 2: never an answer unseen), and after an
// answer focus goes to the row that took its place.
import type { Page } from '@playwright/test';
import { test, expect } from '../fixtures';
import { ask, newSession } from '../helpers';

const yesNo = [{ label: 'Yes' }, { label: 'No' }];

/** The pending id of the row whose button has focus. */
async function focusedRow(page: Page): Promise<string | null> {
  return page.evaluate(() => document.activeElement?.closest('[data-testid=inbox-row]')?.getAttribute('data-pending-id') ?? null);
}

test('j/k move, a number opens a row, the answer is held then sent, focus moves on', async ({ page, request }) => {
  const ids: string[] = [];
  for (const title of ['triage one', 'triage two', 'triage three']) {
    const session = await newSession(request, title);
    ids.push(await ask(request, session, [{ prompt: `${title}?`, options: yesNo }]));
  }
  const pair = await newSession(request, 'triage pair');
  const pairId = await ask(request, pair, [
    { prompt: 'First of two?', options: yesNo },
    { prompt: 'Second of two?', options: yesNo },
  ]);
  await page.goto('/');
  const rows = page.getByTestId('inbox-row');
  await expect(page.locator(`[data-pending-id="${pairId}"]`)).toBeVisible();
  const order = async () => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-pending-id')));
  const all = await order();
  const at = (id: string) => all.indexOf(id);

  // Nothing focused: j goes to the first row; then down and back up.
  await page.keyboard.press('j');
  expect(await focusedRow(page)).toBe(all[0]);
  await page.locator(`[data-pending-id="${ids[0]}"] > button.row`).focus();
  await page.keyboard.press('j');
  expect(await focusedRow(page)).toBe(all[at(ids[0]) + 1]);
  await page.keyboard.press('k');
  expect(await focusedRow(page)).toBe(ids[0]);

  // A number on a closed row opens it and answers nothing (issue 46 item
  // 2); inside, the number picks; the answer is held for Undo, then sent.
  const next = all[at(ids[0]) + 1];
  const first = page.locator(`[data-pending-id="${ids[0]}"]`);
  await page.keyboard.press('2');
  await expect(first.getByTestId('clarification-overlay')).toBeVisible();
  expect((await (await request.get(`/api/v1/clarification/${ids[0]}`)).json()).status).toBe('pending');
  await page.keyboard.press('2');
  await expect(first).toHaveCount(0);
  await expect(page.getByTestId('inbox-held')).toContainText('“triage one?”: No.');
  await expect.poll(() => focusedRow(page)).toBe(next);
  await expect(page.getByTestId('inbox-notice')).toContainText('Answer sent.', { timeout: 15_000 });
  const view = await (await request.get(`/api/v1/clarification/${ids[0]}`)).json();
  expect(view.response.answers[0].selected_options).toEqual(['q1_opt2']);

  // A two-question row opens the same way, and its own keys answer it.
  await page.locator(`[data-pending-id="${pairId}"] > button.row`).focus();
  await page.keyboard.press('1');
  const overlay = page.locator(`[data-pending-id="${pairId}"] [data-testid=clarification-overlay]`);
  await expect(overlay).toBeVisible();
  expect((await (await request.get(`/api/v1/clarification/${pairId}`)).json()).status).toBe('pending');
  await page.keyboard.press('1');
  await page.keyboard.press('2');
  await page.keyboard.press('Control+Enter');
  await expect(page.locator(`[data-pending-id="${pairId}"]`)).toHaveCount(0);
  await expect.poll(() => focusedRow(page)).not.toBeNull();
});

test('a number on a row whose answer was begun opens it with the draft, sending nothing', async ({ page, request }) => {
  const session = await newSession(request, 'triage begun');
  const id = await ask(request, session, [{ prompt: 'Begun in the overlay?', options: yesNo }]);
  await page.goto('/');
  const row = page.locator(`[data-pending-id="${id}"]`);
  await row.locator('button.row').click();
  await row.getByTestId('clarification-input').fill('only if it is cheap');
  // Closed from its row.
  await row.locator('button.row').click();
  await expect(row.getByTestId('clarification-overlay')).toHaveCount(0);
  await row.locator('button.row').focus();
  await page.keyboard.press('1');
  // The option alone would have lost the words: the overlay opens instead.
  await expect(row.getByTestId('clarification-input')).toHaveValue('only if it is cheap');
  await expect(page.getByTestId('inbox-notice')).toBeHidden();
  await expect(page.getByTestId('inbox-held')).toBeHidden();
  expect((await (await request.get(`/api/v1/clarification/${id}`)).json()).status).toBe('pending');
});
