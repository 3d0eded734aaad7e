// Issue 18, expiry in the browser: a countdown while the question waits,
// and when its time is up it closes as timed out.
import { test, expect } from '../fixtures';
import { askExpiring, newSession } from '../helpers';

test('a countdown shows in the overlay and the inbox', async ({ page, request }) => {
  const asked = await askExpiring(request, 600);
  await page.goto(`/s/${asked.sessionId}`);
  await expect(page.getByTestId('clarification-expiry')).toHaveText(/^Expires in (10|9) min$/);
  await page.goto('/');
  const row = page.locator(`[data-pending-id="${asked.pendingId}"]`);
  await expect(row.getByTestId('clarification-expiry')).toHaveText(/^Expires in (10|9) min$/);
});

test('when its time is up the overlay closes and the transcript says it timed out', async ({ page, request }) => {
  const asked = await askExpiring(request, 3);
  await page.goto(`/s/${asked.sessionId}`);
  await expect(page.getByTestId('clarification-expiry')).toHaveText(/^Expires in [1-3] s$/);
  await expect(page.getByTestId('clarification-overlay')).toHaveCount(0, { timeout: 10_000 });
  await expect(page.getByTestId('transcript-outcome')).toHaveText('Timed out');
});

test('the default is marked, and when chosen at expiry the transcript says nobody answered', async ({ page, request }) => {
  const session = await newSession(request);
  const response = await request.post('/api/v1/clarification/request', {
    headers: { Authorization: `Bearer ${session.agentToken}` },
    data: {
      session_id: session.sessionId,
      expires_in_seconds: 3,
      questions: [{ prompt: 'Deploy?', default_option_id: 'q1_opt2', options: [{ label: 'Now' }, { label: 'Later' }] }],
    },
  });
  expect(response.status()).toBe(201);
  await page.goto(`/s/${session.sessionId}`);
  const marked = page.getByTestId('clarification-option').nth(1);
  await expect(marked.getByTestId('clarification-default')).toHaveText('chosen if nobody answers');
  await expect(page.getByTestId('clarification-default')).toHaveCount(1);
  await expect(page.getByTestId('clarification-overlay')).toHaveCount(0, { timeout: 10_000 });
  await expect(page.getByTestId('transcript-outcome')).toHaveText('Answered: Later');
  await expect(page.getByTestId('transcript-provenance')).toHaveText(
    /^Nobody answered: the defaults were chosen, \d+ s after it was asked$/,
  );
});
