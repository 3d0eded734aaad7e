// Issue 16, the human's side: one-click answers, markdown, the inbox, the
// tab's count, opt-in notifications, dark mode and phone widths.
import AxeBuilder from '@axe-core/playwright';
import type { Page, Request } from '@playwright/test';
import { test, expect } from '../fixtures';
import { ask, newSession } from '../helpers';

function posts(page: Page): Request[] {
  const seen: Request[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().endsWith('/respond')) seen.push(r);
  });
  return seen;
}

async function serious(page: Page) {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

const yesNo = [{ label: 'Yes' }, { label: 'No' }];

test('auto-advance: each pick moves to the next card, and only the last waits for Submit', async ({ page, request }) => {
  const session = await newSession(request);
  const pendingId = await ask(request, session, [
    { prompt: 'First?', options: [{ label: 'A' }, { label: 'B' }] },
    { prompt: 'Second?', options: [{ label: 'C' }, { label: 'D' }] },
    { prompt: 'Third?', options: [{ label: 'E' }, { label: 'F' }] },
  ]);
  await page.goto(`/s/${session.sessionId}`);
  const sent = posts(page);
  const prompt = page.getByTestId('clarification-prompt');
  await expect(prompt).toHaveText('First?');
  await page.getByTestId('clarification-option').nth(1).click();
  await expect(prompt).toHaveText('Second?');
  await page.getByTestId('clarification-option').nth(0).click();
  await expect(prompt).toHaveText('Third?');
  await page.getByTestId('clarification-option').nth(1).click();
  // The last card stays, answered, until the human submits.
  await expect(page.getByTestId('clarification-progress')).toHaveText('3 of 3 answered');
  await expect(page.getByTestId('clarification-overlay')).toBeVisible();
  expect(sent).toHaveLength(0);

  const waiting = request.get(`/api/v1/clarification/${pendingId}/wait?timeout=60`, {
    headers: { Authorization: `Bearer ${session.agentToken}` },
    timeout: 60_000,
  });
  await page.getByTestId('clarification-submit').click();
  await expect(page.getByTestId('clarification-overlay')).toHaveCount(0);
  const answers = (await (await waiting).json()).response.answers;
  expect(answers.map((a: { selected_options: string[] }) => a.selected_options)).toEqual([
    ['q1_opt2'],
    ['q2_opt1'],
    ['q3_opt2'],
  ]);
  expect(sent).toHaveLength(1);
});

test('an option clicked after typing joins the words, and Submit sends both (issue 29)', async ({ page, request }) => {
  const session = await newSession(request);
  const pendingId = await ask(request, session, [{ prompt: 'Where may the data live?', options: yesNo }]);
  await page.goto(`/s/${session.sessionId}`);
  const sent = posts(page);
  await page.getByTestId('clarification-input').fill('only in eu because of GDPR');
  await page.getByTestId('clarification-option').first().click();
  await page.waitForTimeout(300);
  expect(sent).toHaveLength(0);
  await expect(page.getByTestId('clarification-input')).toHaveValue('only in eu because of GDPR');
  await expect(page.getByTestId('clarification-option').first()).toHaveAttribute('aria-pressed', 'true');
  await page.getByTestId('clarification-submit').click();
  await expect(page.getByTestId('clarification-overlay')).toHaveCount(0);
  const stored = await (await request.get(`/api/v1/clarification/${pendingId}`)).json();
  expect(stored.response.answers[0]).toMatchObject({
    question_id: 'q1',
    selected_options: ['q1_opt1'],
    custom_text: 'only in eu because of GDPR',
  });
});

test('typing free text never submits', async ({ page, request }) => {
  const session = await newSession(request);
  await ask(request, session, [{ prompt: 'Why?', options: yesNo }]);
  await page.goto(`/s/${session.sessionId}`);
  const sent = posts(page);
  await page.getByTestId('clarification-input').fill('because');
  await page.waitForTimeout(300);
  expect(sent).toHaveLength(0);
  await expect(page.getByTestId('clarification-overlay')).toBeVisible();
});

test('markdown: bold and code render, a script tag is only text, links open safely', async ({ page, request }) => {
  const session = await newSession(request);
  await ask(
    request,
    session,
    [
      {
        title: 'Pick a **store**',
        prompt: 'Use **bold** and `code` <script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2"> [docs](https://example.com/docs)',
        options: [{ label: '`sqlite`' }, { label: '*postgres*' }],
      },
    ],
    '- first point\n- second point\n\n```\nlet x = 1;\n```',
  );
  await page.goto(`/s/${session.sessionId}`);
  const prompt = page.getByTestId('clarification-prompt');
  await expect(prompt.locator('strong')).toHaveText('bold');
  await expect(prompt.locator('code')).toHaveText('code');
  await expect(prompt).toContainText('<script>window.__pwned = 1</script>');
  expect(await page.locator('[data-testid=clarification-overlay] script, [data-testid=clarification-overlay] img').count()).toBe(0);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  const link = prompt.locator('a');
  await expect(link).toHaveAttribute('href', 'https://example.com/docs');
  await expect(link).toHaveAttribute('rel', 'noopener noreferrer');
  await expect(page.locator('.question-title strong')).toHaveText('store');
  await expect(page.getByTestId('clarification-option').first().locator('code')).toHaveText('sqlite');
  const context = page.getByTestId('clarification-context');
  await expect(context.locator('li')).toHaveText(['first point', 'second point']);
  await expect(context.locator('pre code')).toHaveText('let x = 1;');
});

test('the inbox lists waiting bundles oldest first, updates live, and answers in place', async ({ page, request }) => {
  const first = await newSession(request, 'inbox: first task');
  const firstId = await ask(request, first, [{ prompt: 'Asked first?', options: yesNo }]);
  const second = await newSession(request, 'inbox: second task');
  const secondId = await ask(request, second, [
    { prompt: 'Asked second?', options: yesNo },
    { prompt: 'And this?', options: yesNo },
  ]);
  await page.goto('/');
  const inbox = page.getByTestId('inbox');
  await expect(inbox.getByRole('heading', { name: 'Waiting for you' })).toBeVisible();
  const rows = page.getByTestId('inbox-row');
  const ids = async () => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-pending-id')));
  await expect.poll(async () => (await ids()).includes(secondId)).toBe(true);
  const order = await ids();
  expect(order.indexOf(firstId)).toBeLessThan(order.indexOf(secondId));
  const row = rows.filter({ has: page.locator(`[data-pending-id="${secondId}"]`) }).or(page.locator(`[data-pending-id="${secondId}"]`));
  // Rows sit under their task's title (issue 46 item 8).
  await expect(row.getByTestId('inbox-task')).toContainText('inbox: second task');
  await expect(row).toContainText('Asked second?');
  await expect(row).toContainText('2 questions');
  await expect(row).toContainText('now');

  // A second agent asks while the page is open: its row appears, last.
  const third = await newSession(request, 'inbox: third task');
  const thirdId = await ask(request, third, [{ prompt: 'Asked live?', options: yesNo }]);
  await expect(rows.last()).toHaveAttribute('data-pending-id', thirdId);
  await expect(rows.last()).toContainText('Asked live?');

  // The row opens the overlay in place; one click answers it.
  const firstRow = page.locator(`[data-pending-id="${firstId}"]`);
  await firstRow.getByRole('button', { name: /Asked first\?/ }).click();
  await expect(firstRow.getByTestId('clarification-overlay')).toBeVisible();
  await firstRow.getByTestId('clarification-option').first().click();
  await expect(page.getByTestId('inbox-notice')).toContainText('Answer sent.', { timeout: 15_000 });
  await expect(page.locator(`[data-pending-id="${firstId}"]`)).toHaveCount(0);
  expect((await (await request.get(`/api/v1/clarification/${firstId}`)).json()).status).toBe('answered');
});

test('the tab title and icon count what waits', async ({ page, request }) => {
  // The server's own count (this worker's earlier tests left questions open).
  const waiting = async () => (await (await request.get('/api/v1/pending')).json()).count as number;
  const before = await waiting();
  await page.goto('/');
  await expect(page).toHaveTitle(before === 0 ? 'Clarify' : `(${before}) Clarify`);
  // Rows, not bundles: alike bundles left by earlier tests share one.
  const rows = await page.getByTestId('inbox-row').count();
  const session = await newSession(request, 'counted');
  await ask(request, session, [{ prompt: 'Counted?', options: yesNo }]);
  await expect(page).toHaveTitle(`(${before + 1}) Clarify`);
  await expect(page.getByTestId('inbox-row')).toHaveCount(rows + 1);
  const icon = await page.locator('link[rel=icon]').getAttribute('href');
  expect(decodeURIComponent(icon ?? '')).toContain(`>${before + 1}</text>`);
  // On every page, not only the inbox.
  await page.goto(`/s/${session.sessionId}`);
  await expect(page).toHaveTitle(`(${before + 1}) Clarify`);
});

test('notifications: permission is asked only after a click, and a hidden tab is told', async ({ page, request }) => {
  await page.addInitScript(() => {
    const w = window as unknown as Record<string, unknown>;
    w.__asked = 0;
    w.__shown = [];
    class FakeNotification {
      static permission = 'default';
      static requestPermission() {
        (w.__asked as number)++;
        (w.__asked as number);
        w.__asked = (w.__asked as number);
        FakeNotification.permission = 'granted';
        return Promise.resolve('granted');
      }
      constructor(title: string, options: { body?: string; tag?: string }) {
        (w.__shown as unknown[]).push({ title, body: options?.body, tag: options?.tag });
      }
    }
    w.Notification = FakeNotification;
  });
  await page.goto('/');
  const notify = page.getByTestId('notify-me');
  await expect(notify).toBeVisible();
  expect(await page.evaluate(() => (window as unknown as { __asked: number }).__asked)).toBe(0);
  await notify.click();
  await expect(notify).toHaveCount(0);
  expect(await page.evaluate(() => (window as unknown as { __asked: number }).__asked)).toBe(1);

  // The first list has arrived (only later arrivals are news).
  await expect(page.getByTestId('inbox-row').or(page.getByTestId('inbox-empty')).first()).toBeVisible();
  // The tab goes to the background; a question arrives.
  await page.evaluate(() => Object.defineProperty(document, 'hidden', { configurable: true, get: () => true }));
  const session = await newSession(request, 'notified');
  const pendingId = await ask(request, session, [{ prompt: 'Notify about me?', options: yesNo }]);
  await expect
    .poll(() => page.evaluate(() => (window as unknown as { __shown: { body: string; tag: string }[] }).__shown))
    .toContainEqual({ title: 'An agent is waiting for your answer', body: 'Notify about me?', tag: pendingId });
});

for (const colorScheme of ['light', 'dark'] as const) {
  test(`axe finds nothing serious in the ${colorScheme} theme (inbox and overlay)`, async ({ page, request }) => {
    await page.emulateMedia({ colorScheme });
    const session = await newSession(request, `accessible in ${colorScheme}`);
    await ask(
      request,
      session,
      [
        { prompt: 'Which **database**?', options: [{ label: 'SQLite' }, { label: 'PostgreSQL' }] },
        { prompt: 'Which checks?', multi_select: true, options: [{ label: 'lint' }, { label: 'test' }] },
      ],
      'Context with `code`.',
    );
    await page.goto('/');
    await expect(page.getByTestId('inbox-row').first()).toBeVisible();
    expect(await serious(page)).toEqual([]);
    await page.goto(`/s/${session.sessionId}`);
    await page.getByTestId('clarification-option').first().click();
    await expect(page.getByTestId('clarification-checkbox').first()).toBeVisible();
    await page.getByTestId('clarification-checkbox').first().click();
    expect(await serious(page)).toEqual([]);
  });
}

test('dark mode: the theme follows the system, screenshots of the inbox and the overlay', async ({ page, request }, info) => {
  await page.emulateMedia({ colorScheme: 'dark' });
  const session = await newSession(request, 'Migrate the replicas');
  await ask(
    request,
    session,
    [{ title: 'Database', prompt: 'Which **database** should the replicas use? See `DESIGN.md`.', options: [{ label: 'SQLite' }, { label: 'PostgreSQL' }] }],
    'We are setting up replicas for the `orders` service.',
  );
  await page.goto('/');
  await expect(page.getByTestId('inbox-row').first()).toBeVisible();
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  expect(background).toBe('rgb(15, 17, 21)');
  await page.screenshot({ path: info.outputPath('inbox-dark.png'), fullPage: true });
  await page.goto(`/s/${session.sessionId}`);
  await expect(page.getByTestId('clarification-overlay')).toBeVisible();
  await page.screenshot({ path: info.outputPath('overlay-dark.png'), fullPage: true });
});

test('360 px: no sideways scroll and nothing cut, on the inbox and the overlay', async ({ page, request }) => {
  await page.setViewportSize({ width: 360, height: 740 });
  const session = await newSession(request, 'A task with a rather long title that has to wrap on a phone');
  await ask(
    request,
    session,
    [
      { prompt: 'A long question that must wrap: `a_very_long_identifier_that_could_push_the_layout_sideways_if_nothing_wraps`?', options: [{ label: 'An option label that is long enough to wrap on a narrow phone screen' }, { label: 'No' }] },
      { prompt: 'Second?', options: yesNo },
    ],
    '```\na code block with a line far longer than the phone is wide, which must scroll inside its own box\n```',
  );
  for (const path of ['/', `/s/${session.sessionId}`]) {
    await page.goto(path);
    await expect(page.locator(path === '/' ? '[data-testid=inbox-row]' : '[data-testid=clarification-overlay]').first()).toBeVisible();
    expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(360);
  }
  // Every control of the overlay lies within the screen's width.
  for (const button of await page.locator('[data-testid=clarification-overlay] button').all()) {
    const box = await button.boundingBox();
    expect(box, 'a visible control').not.toBeNull();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(360);
  }
});
