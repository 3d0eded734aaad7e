// Issue 46, the inbox polished: each item as a person meets it, at desktop
// and phone sizes, light and dark, with axe on every page touched and
// screenshots kept in test-results/screens (looked at before closing it).
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { APIRequestContext, Page } from '@playwright/test';
import { test, expect, startServer, stopServer } from '../fixtures';
import { ask, newSession } from '../helpers';

const sizes = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

/** Axe (serious and critical) in light and dark, and a screenshot of each. */
async function judge(page: Page, name: string) {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    const { violations } = await new AxeBuilder({ page }).analyze();
    const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(bad.map((v) => `${v.id} ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), `${name} ${colorScheme}`).toEqual([]);
    const size = page.viewportSize()!.width > 500 ? 'desktop' : 'phone';
    await page.screenshot({ path: join(test.info().project.outputDir, 'screens', `46-${name}-${colorScheme}-${size}.png`) });
  }
}

const yesNo = [{ label: 'Yes' }, { label: 'No' }];
let n = 0;
/** Words no other test's question has (alike ones would fold together). */
const unique = (text: string) => `${text} #${++n}-${Math.random().toString(36).slice(2, 7)}`;

async function status(request: APIRequestContext, id: string) {
  return (await (await request.get(`/api/v1/clarification/${id}`)).json()).status as string;
}

/** Whether `locator`'s box is inside the window. */
async function inView(page: Page, testId: string) {
  const box = await page.getByTestId(testId).first().boundingBox();
  const height = page.viewportSize()!.height;
  return box !== null && box.y >= 0 && box.y + box.height <= height;
}

for (const [size, viewport] of Object.entries(sizes)) {
  test.describe(size, () => {
    test.use({ viewport, hasTouch: size === 'phone', isMobile: size === 'phone' });

    test(`item 1 and 11: a long Markdown prompt is one line; opened, its table is a table (${size})`, async ({ page, request }) => {
      const session = await newSession(request, unique('retry policy'));
      const prompt = unique('Which backoff should `retry.rs` use?') +
        '\n\n```rust\nfn next_delay(attempt: u32) -> Duration {\n    Duration::from_millis(100 << attempt)\n}\n```\n\n' +
        '| Policy | Max wait |\n|---|---|\n| exponential | 30 s |\n| fixed | 1 s |\n\nPick one.';
      const id = await ask(request, session, [{ prompt, options: [{ label: 'exponential' }, { label: 'fixed' }] }]);
      const titled = await ask(request, session, [{ title: unique('Ship on Friday'), prompt: 'Long\n\nbody text here', options: yesNo }]);
      await page.goto('/');
      const row = page.locator(`[data-pending-id="${id}"]`);
      await expect(row.getByTestId('inbox-row-line')).toContainText('Which backoff should retry.rs use?');
      await expect(row.getByTestId('inbox-row-line')).not.toContainText('next_delay');
      const box = await row.locator('button.row').boundingBox();
      expect(box!.height).toBeLessThan(100);
      await expect(page.locator(`[data-pending-id="${titled}"]`).getByTestId('inbox-row-line')).toContainText('Ship on Friday');
      await row.locator('button.row').click();
      await expect(row.locator('table th').first()).toHaveText('Policy');
      // One choice has round badges; several (below) square boxes.
      const round = await row.getByTestId('clarification-option').first().locator('.badge').evaluate((el) => getComputedStyle(el).borderRadius);
      expect(round).toBe('50%');
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await judge(page, 'opened-row');

      // Item 11: several choices look like several before any click.
      const multi = await ask(request, session, [
        { prompt: unique('Which regions?'), multi_select: true, options: [{ label: 'eu' }, { label: 'us' }] },
      ]);
      await page.goto('/');
      const multiRow = page.locator(`[data-pending-id="${multi}"]`);
      await multiRow.locator('button.row').click();
      const checkbox = multiRow.getByTestId('clarification-checkbox').first();
      expect(await checkbox.locator('.badge').evaluate((el) => getComputedStyle(el).borderRadius)).not.toBe('50%');
      await checkbox.click();
      const badge = checkbox.locator('.badge');
      expect(await badge.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    });

    test(`item 2 and 3: a number opens; the answer is held in a toast in view, Undo takes it back (${size})`, async ({ page, request }) => {
      // Enough rows that the one answered sits below the first screen.
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const session = await newSession(request, unique(`toast task ${i}`));
        ids.push(await ask(request, session, [{ prompt: unique(`Toast question ${i}?`), options: yesNo }]));
      }
      const last = ids[ids.length - 1];
      await page.goto('/');
      const row = page.locator(`[data-pending-id="${last}"]`);
      await row.locator('button.row').scrollIntoViewIfNeeded();
      await row.locator('button.row').focus();
      await page.keyboard.press('2');
      // Opened, nothing answered.
      await expect(row.getByTestId('clarification-overlay')).toBeVisible();
      expect(await status(request, last)).toBe('pending');
      const scrolled = await page.evaluate(() => window.scrollY);
      await row.getByTestId('clarification-option').nth(1).click();
      const held = page.getByTestId('inbox-held');
      await expect(held).toContainText('Toast question 7');
      await expect(held).toContainText(': No.');
      expect(await inView(page, 'inbox-held')).toBe(true);
      // The view stays where the person is.
      expect(Math.abs((await page.evaluate(() => window.scrollY)) - scrolled)).toBeLessThan(200);
      // A picture now; axe runs on the toast after the send (the hold is short).
      await page.screenshot({ path: join(test.info().project.outputDir, 'screens', `46-toast-held-${size}.png`) });
      // Undo: the row is back, opened, with the choice; nothing was sent.
      await page.getByTestId('inbox-undo').click();
      await expect(row.getByTestId('clarification-overlay')).toBeVisible();
      await expect(row.getByTestId('clarification-option').nth(1)).toHaveAttribute('aria-pressed', 'true');
      await page.waitForTimeout(6_000); // longer than the hold: proving nothing is sent needs the window to pass
      expect(await status(request, last)).toBe('pending');
      // Answered again: sent once the window ends, said in view.
      await row.getByTestId('clarification-option').first().click();
      await expect(page.getByTestId('inbox-notice')).toContainText('Answer sent.', { timeout: 15_000 });
      expect(await inView(page, 'inbox-notice')).toBe(true);
      const view = await (await request.get(`/api/v1/clarification/${last}`)).json();
      expect(view.response.answers[0].selected_options).toEqual(['q1_opt1']);
      await judge(page, 'toast-sent');
    });

    test(`item 5 and 6: Esc closes the row; "Decline…" declines with the reason, said as a decline (${size})`, async ({ page, request }) => {
      const session = await newSession(request, unique('decline task'));
      const prompt = unique('Deploy tonight?');
      const id = await ask(request, session, [{ prompt, options: [{ label: 'Skip tonight' }, { label: 'Go' }] }]);
      await page.goto('/');
      const row = page.locator(`[data-pending-id="${id}"]`);
      await row.locator('button.row').click();
      await expect(row.getByTestId('clarification-overlay')).toBeVisible();
      await page.keyboard.press('Escape');
      await expect(row.getByTestId('clarification-overlay')).toHaveCount(0);
      await expect(row.locator('button.row')).toHaveAttribute('aria-expanded', 'false');
      await expect(page.getByTestId('clarification-expand')).toHaveCount(0);
      await expect(row.locator('button.row')).toBeFocused();
      await row.locator('button.row').click();
      await expect(row.locator('button.row')).toHaveAttribute('aria-expanded', 'true');
      await expect(row.getByTestId('clarification-skip')).toHaveText('Decline…');
      await row.getByTestId('clarification-skip').click();
      await row.getByTestId('clarification-decline-reason').fill('not this week');
      await row.getByTestId('clarification-decline').click();
      await expect(page.getByTestId('inbox-held')).toContainText('Declined “Deploy tonight?');
      await expect(page.getByTestId('inbox-held')).toContainText('“not this week”');
      await expect(page.getByTestId('inbox-notice')).toContainText('Declined and sent.', { timeout: 15_000 });
      expect(await status(request, id)).toBe('rejected');
      await page.goto(`/s/${session.sessionId}`);
      await expect(page.getByTestId('transcript-outcome')).toHaveText('Declined: “not this week”');
    });

    test(`item 4 and 9: the session page says each question's state as the API does; who else tried (${size})`, async ({ page, request }) => {
      // No resume target: an answer is kept for the agent, so it starts no
      // new turn that would supersede the others.
      const session = await newSession(request, unique('three at once'), null);
      const first = await ask(request, session, [{ prompt: unique('First of three?'), options: yesNo }]);
      const second = await ask(request, session, [{ prompt: unique('Second of three?'), options: yesNo }]);
      await ask(request, session, [{ prompt: unique('Third of three?'), options: yesNo }]);
      // The second is answered twice over REST: the later one loses.
      const body = { answers: [{ question_id: 'q1', selected_options: ['q1_opt1'] }] };
      expect((await request.post(`/api/v1/clarification/${second}/respond`, { data: body })).status()).toBe(200);
      expect((await request.post(`/api/v1/clarification/${second}/respond`, { data: body })).status()).toBe(200);
      expect((await (await request.get(`/api/v1/clarification/${first}`)).json()).active).toBe(true);
      await page.goto(`/s/${session.sessionId}`);
      await expect(page.getByRole('heading', { level: 2 }).first()).toBeVisible();
      const outcomes = page.getByTestId('transcript-outcome');
      await expect(outcomes.first()).toContainText('Waiting for an answer');
      await expect(page.getByTestId('transcript-question').filter({ hasText: 'Not answered' })).toHaveCount(0);
      const log = page.getByTestId('attempts-log');
      await expect(log).toContainText('2 tried to answer');
      await log.locator('summary').click();
      await expect(log).toContainText('too late');
      await judge(page, 'session');
    });

    test(`item 7: one answer for alike questions names its agents before it is given (${size})`, async ({ page, request }) => {
      const prompt = unique('Which cache for the shards?');
      const titles = [unique('shard a'), unique('shard b'), unique('shard c')];
      const ids: string[] = [];
      for (const t of titles) ids.push(await ask(request, await newSession(request, t), [{ prompt, options: yesNo }]));
      await page.goto('/');
      const alike = page.locator(`[data-pending-id="${ids[0]}"]`).getByTestId('inbox-alike');
      for (const t of titles) await expect(alike).toContainText(t);
      await expect(alike).toContainText('Answers 3 agents');
    });

    test(`item 8 and 10: rows grouped by task with counts, a filter from ten, pages that load and say not found (${size})`, async ({ page, request }) => {
      const grouped = await newSession(request, unique('grouped task'));
      const mark = unique('groupmark');
      for (let i = 0; i < 3; i++) await ask(request, grouped, [{ prompt: `${mark} question ${i}?`, options: yesNo }]);
      for (let i = 0; i < 9; i++) await ask(request, await newSession(request, unique('filler')), [{ prompt: unique('Filler?'), options: yesNo }]);
      await page.goto('/');
      const heading = page.getByTestId('inbox-task').filter({ hasText: 'grouped task' });
      await expect(heading).toHaveCount(1);
      await expect(heading.getByTestId('inbox-task-count')).toHaveText('(3)');
      await page.getByTestId('inbox-filter').fill(mark);
      await expect(page.getByTestId('inbox-row')).toHaveCount(3);
      await judge(page, 'inbox-filtered');
      await page.getByTestId('inbox-filter').fill('');

      const missing = await page.goto('/no/such/page');
      expect(missing!.status()).toBe(404);
      await expect(page.getByTestId('not-found')).toHaveText('Page not found');
      await page.goto('/t/00000000-0000-0000-0000-000000000000');
      await expect(page.getByTestId('task-title')).toHaveText('No such task');
      await expect(page.locator('meta[name="description"]')).toHaveAttribute('content', /Clarify/);
    });
  });
}

// Leaving for another page is what is checked: a tab closed by Playwright
// drops the keep-alive request now and then in headless Chromium (seen in
// 2 of 3 runs), where a person's browser keeps it.
test('item 2: an answer held for Undo is sent at once when the person leaves the page, never lost', async ({ browser, request, server }) => {
  const session = await newSession(request, unique('closing tab'));
  const id = await ask(request, session, [{ prompt: unique('Sent as the tab closes?'), options: yesNo }]);
  const page = await browser.newPage();
  await page.goto(server.url);
  const row = page.locator(`[data-pending-id="${id}"]`);
  await row.locator('button.row').click();
  await row.getByTestId('clarification-option').first().click();
  await expect(page.getByTestId('inbox-held')).toBeVisible();
  await page.goto('about:blank');
  await expect.poll(async () => status(request, id), { timeout: 10_000 }).toBe('answered');
  await page.close();
});

test('item 10 and 11: a fresh inbox shows no placeholders before its data, then how to ask and to try the demo', async ({ page }) => {
  const { server, child, dir } = await startServer();
  try {
    // Every text the page ever showed, so a flash of "No tasks yet" or a
    // placeholder task name is caught even if it lasts one frame.
    await page.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      new MutationObserver(() => seen.push(document.body?.innerText ?? '')).observe(document, { subtree: true, childList: true, characterData: true });
    });
    await page.goto(server.url);
    await expect(page.getByTestId('inbox-connect')).toContainText('clarify serve --demo');
    await expect(page.getByText('No tasks yet.')).toBeVisible();
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    expect(seen.some((t) => t.includes('A task'))).toBe(false);
    await judge(page, 'empty');
  } finally {
    await stopServer(child, dir);
  }
});

test('item 11: the login error shows code as code, not backticks', async ({ page }) => {
  const { server, child, dir } = await startServer(['--auth']);
  try {
    await page.goto(`${server.url}/login`);
    await page.locator('input').first().fill('clk_pat_not_a_real_token');
    await page.locator('button[type=submit]').click();
    const error = page.getByTestId('login-error');
    await expect(error).toBeVisible();
    await expect(error).not.toContainText('`');
    await expect(error.locator('code')).toContainText('clarify token create');
  } finally {
    await stopServer(child, dir);
  }
});
