// Issue 18, provenance: the transcript says who answered, how, and when.
import { test, expect } from '../fixtures';
import { askOne } from '../helpers';

test('the transcript says the answer came from the browser, and how long after the ask', async ({ page, request }) => {
  const asked = await askOne(request);
  await page.goto(`/s/${asked.sessionId}`);
  await page.getByTestId('clarification-option').first().click();
  await expect(page.getByTestId('transcript-provenance')).toHaveText(
    /^Answered in the browser, \d+ s after it was asked$/,
  );
  const view = await (await request.get(`/api/v1/clarification/${asked.pendingId}`)).json();
  expect(view.answered_by).toEqual({ user: 'anonymous', channel: 'browser', client: '' });
});
