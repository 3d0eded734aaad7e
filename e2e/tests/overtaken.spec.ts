// Someone else answers while a person is mid-answer (issue 29 item 1): two
// real tabs on one question, in the task page and in the inbox. The form
// does not vanish: it says who answered what, and the draft stays readable.
import AxeBuilder from '@axe-core/playwright';
import { test, expect } from '../fixtures';
import { ask, askOne, newSession } from '../helpers';

test('task page: the other tab answers first; this one says so and keeps its draft', async ({ page, context, request }) => {
  const asked = await askOne(request, 'Which store?');
  await page.goto(`/s/${asked.sessionId}`);
  await page.getByTestId('clarification-input').fill('SQLite, but only for the cache');

  const other = await context.newPage();
  await other.goto(`/s/${asked.sessionId}`);
  await other.getByTestId('clarification-option').nth(1).click();
  await expect(other.getByTestId('transcript-outcome')).toHaveText('Answered: PostgreSQL');

  const card = page.getByTestId('clarification-overtaken');
  await expect(card).toBeVisible();
  await expect(page.getByTestId('clarification-overlay')).toHaveCount(0);
  await expect(page.getByTestId('overtaken-winner')).toContainText('Answered in the browser');
  await expect(page.getByTestId('overtaken-winner')).toContainText(': PostgreSQL — your draft was not sent.');
  await expect(page.getByTestId('overtaken-draft')).toHaveValue('SQLite, but only for the cache');
  await expect(page.getByTestId('transcript-outcome')).toHaveText('Answered: PostgreSQL');
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    const { violations } = await new AxeBuilder({ page }).include('[data-testid=clarification-overtaken]').analyze();
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
  }
  await page.getByTestId('overtaken-dismiss').click();
  await expect(card).toHaveCount(0);
  // The draft is gone from the tab's storage too: a reload shows no card.
  await page.reload();
  await expect(page.getByTestId('transcript-outcome')).toHaveText('Answered: PostgreSQL');
  await expect(card).toHaveCount(0);
});

test('inbox: a bundle declined in another tab mid-answer shows the decline and the draft', async ({ page, context, request }) => {
  const session = await newSession(request, 'overtaken in the inbox');
  const pendingId = await ask(request, session, [
    // Its own words: alike bundles left by other tests would share its row.
    { prompt: 'First, in the inbox?', options: [{ label: 'A' }, { label: 'B' }] },
    { prompt: 'Second, in the inbox?', options: [{ label: 'C' }, { label: 'D' }] },
  ]);
  await page.goto('/');
  const row = page.locator(`[data-pending-id="${pendingId}"]`);
  await row.getByRole('button').first().click();
  await row.getByTestId('clarification-option').first().click();
  await expect(row.getByTestId('clarification-progress')).toHaveText('1 of 2 answered');

  const other = await context.newPage();
  await other.goto(`/s/${session.sessionId}`);
  await other.getByTestId('clarification-skip').click();
  await other.getByTestId('clarification-decline-reason').fill('not now');
  await other.getByTestId('clarification-decline').click();
  await expect(other.getByTestId('clarification-overlay')).toHaveCount(0);

  await expect(row).toHaveCount(0);
  await expect(page.getByTestId('overtaken-winner')).toContainText('Declined in the browser');
  // The reason is the agent's to read once (R2b), not replayed to others.
  await expect(page.getByTestId('overtaken-winner')).toContainText('— your draft was not sent.');
  await expect(page.getByTestId('clarification-overtaken')).toContainText('You had chosen: A');
});

test('a page that answers itself is never told it was overtaken', async ({ page, request }) => {
  const asked = await askOne(request);
  // The socket's word of the answer, which reloads the page: the moment a
  // wrong "overtaken" would show.
  // Three reads of the session: the first load, the one after the POST,
  // the one after the socket's event.
  const frames: string[] = [];
  page.on('websocket', (ws) => ws.on('framereceived', (f) => frames.push(String(f.payload))));
  let reads = 0;
  page.on('response', (r) => {
    if (r.url().endsWith(`/api/v1/sessions/${asked.sessionId}`)) reads += 1;
  });
  await page.goto(`/s/${asked.sessionId}`);
  await page.getByTestId('clarification-input').fill('mine');
  await page.getByTestId('clarification-submit').click();
  await expect(page.getByTestId('transcript-outcome')).toHaveText('Answered: “mine”');
  await expect.poll(() => frames.filter((f) => f.includes(asked.pendingId)).length).toBeGreaterThan(0);
  await expect.poll(() => reads).toBeGreaterThanOrEqual(3);
  await expect(page.getByTestId('clarification-overtaken')).toHaveCount(0);
});
