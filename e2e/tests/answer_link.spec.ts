// The answer link's Confirm in a real browser (issue 45 item 1): the page
// withheld its referrer, so Chromium posted `Origin: null` and the
// same-origin layer answered raw JSON with 403. Opened from the pending
// stream as a phone or a chat app would, pressed as a person presses it,
// on the desktop and on a phone, light and dark; the answer is recorded as
// the link's, and every page is styled like the overlay.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { test, expect } from '../fixtures';
import { newSession, ask } from '../helpers';

/** The answer link `/api/v1/pending/stream` gives for `label` of `pendingId`. */
async function streamedLink(baseURL: string, pendingId: string, label: string): Promise<string> {
  const stop = new AbortController();
  const response = await fetch(`${baseURL}/api/v1/pending/stream`, { signal: stop.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended without the question');
      buffered += decoder.decode(value, { stream: true });
      for (const line of buffered.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const notice = JSON.parse(line.slice(5));
        if (notice.pending_id !== pendingId) continue;
        const action = (notice.actions ?? []).find((a: { label: string }) => a.label === label);
        if (action) return action.url as string;
      }
      buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
    }
  } finally {
    stop.abort();
  }
}

async function serious(page: Page) {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

// The page refused its own Confirm on both names of the machine.
const looks = [
  { name: 'desktop, light', viewport: { width: 1280, height: 800 }, colorScheme: 'light' as const, host: '127.0.0.1' },
  { name: 'phone, dark', viewport: { width: 390, height: 844 }, colorScheme: 'dark' as const, host: 'localhost' },
];

for (const look of looks) {
  test.describe(look.name, () => {
    test.use({ viewport: look.viewport, colorScheme: look.colorScheme });

    test('Confirm on the link\'s page answers, as channel link, on a styled page', async ({ page, request, baseURL }) => {
      const session = await newSession(request, `Release (${look.name})`);
      const pendingId = await ask(request, session, [
        { prompt: `Which plan, ${look.name}?`, options: [{ label: 'Plan A' }, { label: 'Plan B' }] },
      ]);
      const streamed = new URL(await streamedLink(baseURL!, pendingId, 'Plan A'));
      streamed.hostname = look.host;
      const url = streamed.toString();

      await page.goto(url);
      const confirm = page.getByTestId('link-confirm');
      await expect(confirm).toHaveText('Confirm: Plan A');
      // Styled like the overlay: its font, its button, its theme.
      const font = await page.evaluate(() => getComputedStyle(document.body).fontFamily);
      expect(font).not.toMatch(/^"?Times/);
      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      expect(background).toBe(look.colorScheme === 'dark' ? 'rgb(15, 17, 21)' : 'rgb(255, 255, 255)');
      const buttonBox = await confirm.boundingBox();
      expect(buttonBox!.x + buttonBox!.width).toBeLessThanOrEqual(look.viewport.width);
      expect(await serious(page)).toEqual([]);
      await page.screenshot({ path: test.info().outputPath('link-open.png') });

      await confirm.click();
      const outcome = page.getByRole('status');
      await expect(outcome).toHaveAttribute('data-outcome', 'won');
      await expect(outcome).toContainText('Answered');
      await expect(outcome).toContainText('Plan A');
      await expect(page.locator('body')).not.toContainText('"error"');
      expect(await serious(page)).toEqual([]);
      await page.screenshot({ path: test.info().outputPath('link-won.png') });

      const view = await (await request.get(`/api/v1/clarification/${pendingId}`)).json();
      expect(view.status).toBe('answered');
      expect(view.answered_by.channel).toBe('link');

      // A second press (the back button, a second device) is told the winner.
      await page.goto(url);
      await expect(page.getByRole('status')).toHaveAttribute('data-outcome', 'lost');
      await expect(page.getByTestId('link-confirm')).toHaveCount(0);
    });
  });
}
