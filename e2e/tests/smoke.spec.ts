// The wasm build of clarify-core in a real browser: the overlay's rune
// counter applies N8b's limit exactly as the server does (W4a).
import { test, expect } from '../fixtures';
import { askOne } from '../helpers';

test('the served page loads the wasm core and counts runes at the N8b boundary', async ({ page, request }) => {
  const asked = await askOne(request);
  await page.goto(`/s/${asked.sessionId}`);
  const input = page.getByTestId('clarification-input');
  const counter = page.getByTestId('clarification-rune-counter');
  const submit = page.getByTestId('clarification-submit');
  await expect(counter).toHaveText(/^0 \/ 2000$/);

  // 2000 emoji: 4000 UTF-16 units, which maxLength=2000 would refuse.
  await input.fill('😀'.repeat(2000));
  await expect(counter).toHaveText(/^2000 \/ 2000$/);
  await expect(page.getByTestId('clarification-rune-error')).toHaveCount(0);
  await expect(submit).toBeEnabled();

  await input.fill('😀'.repeat(2001));
  await expect(counter).toHaveText(/^2001 \/ 2000$/);
  await expect(page.getByTestId('clarification-rune-error')).toBeVisible();
  await expect(submit).toBeDisabled();

  // Multi-byte text is counted by code points, not bytes.
  await input.fill('本'.repeat(2000));
  await expect(counter).toHaveText(/^2000 \/ 2000$/);
  await expect(submit).toBeEnabled();
  // Never maxLength=2000 (W4a).
  expect(await input.getAttribute('maxlength')).toBeNull();
});
