// The phone (issue 29 item 7): at 390×844 an inbox row gives its task's
// title the row's width, and a multi-select option's tick stays inside
// its box.
import { test, expect } from '../fixtures';
import { ask, newSession } from '../helpers';

test.use({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });

test('a row\'s title is not squeezed, the hints are hidden, and a tick stays in its box', async ({ page, request }) => {
  const session = await newSession(request, 'A task with a longer title than a phone row used to allow');
  const pendingId = await ask(request, session, [
    { prompt: 'Which regions, on the phone?', multi_select: true, options: [{ label: 'eu' }, { label: 'us' }] },
  ]);
  await page.goto('/');
  const row = page.locator(`[data-pending-id="${pendingId}"]`);
  const title = await row.locator('.row-question').boundingBox();
  const button = await row.locator('button.row').boundingBox();
  expect(title!.width).toBeGreaterThan(button!.width * 0.8);
  // Touch: no keys to hint at (the inbox's and, opened, the overlay's).
  expect(await page.evaluate(() => matchMedia('(pointer: coarse)').matches)).toBe(true);
  await expect(page.locator('.hint.keys').first()).toBeAttached();
  await expect(page.locator('.hint.keys').first()).toBeHidden();

  await row.locator('button.row').click();
  const checkbox = row.getByTestId('clarification-checkbox').first();
  await checkbox.click();
  await expect(checkbox).toHaveAttribute('aria-checked', 'true');
  const badge = checkbox.locator('.badge');
  const fits = await badge.evaluate((el) => el.scrollWidth <= el.clientWidth);
  expect(fits).toBe(true);
  const box = await badge.boundingBox();
  const outer = await checkbox.boundingBox();
  expect(box!.x + box!.width).toBeLessThanOrEqual(outer!.x + outer!.width);
});
