// Context (issue 29 item 3): the overlay is headed by its task (and the
// session, when the task has several), a step carries its question's
// title, expiry turns amber then red, and a bundle is one transcript card,
// not also a second "waiting" card beside the overlay.
import { test, expect } from '../fixtures';
import { ask, askExpiring, newSession } from '../helpers';

test('the overlay is headed by the task, and by the session when there are several', async ({ page, request }) => {
  const first = await newSession(request, 'Migrate billing');
  await ask(request, first, [{ prompt: 'Cut over tonight?', options: [{ label: 'Yes' }, { label: 'No' }] }]);
  await page.goto(`/s/${first.sessionId}`);
  await expect(page.getByTestId('clarification-heading')).toHaveText('Migrate billing');
  await expect(page.getByRole('dialog', { name: 'Migrate billing' })).toBeVisible();

  const second = await request.post(`/api/v1/tasks/${first.taskId}/sessions`, {
    data: { description: 'frontend agent', resume: { command: ['/bin/true'] } },
  });
  expect(second.status()).toBe(201);
  const body = await second.json();
  await ask(request, { sessionId: body.id, agentToken: body.agent_token }, [
    { prompt: 'Which router?', options: [{ label: 'A' }, { label: 'B' }] },
  ]);
  await page.goto(`/s/${body.id}`);
  await expect(page.getByTestId('clarification-heading')).toHaveText('Migrate billing — frontend agent');
});

test('steps carry their titles; the bundle is one card once settled, none while the overlay shows it', async ({ page, request }) => {
  const session = await newSession(request, 'titles');
  await ask(
    request,
    session,
    [
      { title: 'Database', prompt: 'Which one?', options: [{ label: 'SQLite' }, { label: 'PostgreSQL' }] },
      { title: 'Port', prompt: 'Which port?', options: [{ label: '5432' }, { label: '6543' }] },
    ],
    'We are **migrating**.',
  );
  await page.goto(`/s/${session.sessionId}`);
  const steps = page.getByTestId('clarification-step');
  await expect(steps).toHaveText(['1Database', '2Port']);
  await expect(steps.nth(1)).toHaveAccessibleName('Question 2: Port');
  // The overlay shows the waiting bundle; the transcript does not repeat it.
  await expect(page.getByTestId('transcript-question')).toHaveCount(0);

  await page.getByTestId('clarification-option').nth(1).click();
  await page.getByTestId('clarification-option').first().click();
  await page.getByTestId('clarification-submit').click();
  const card = page.getByTestId('transcript-bundle');
  await expect(card).toHaveCount(1);
  await expect(card.locator('.context strong')).toHaveText('migrating');
  await expect(card.locator('.question-title')).toHaveText(['Database', 'Port']);
  await expect(card.getByTestId('transcript-outcome')).toHaveText(['Answered: PostgreSQL', 'Answered: 5432']);
  await expect(card.getByTestId('transcript-provenance')).toHaveCount(1);
});

test('expiry: plain over 5 minutes, amber under 5, red under 1', async ({ page, request }) => {
  for (const [seconds, urgency] of [
    [600, ''],
    [240, 'soon'],
    [40, 'urgent'],
  ] as const) {
    const asked = await askExpiring(request, seconds);
    await page.goto(`/s/${asked.sessionId}`);
    await expect(page.getByTestId('clarification-expiry')).toHaveAttribute('data-urgency', urgency);
  }
});
