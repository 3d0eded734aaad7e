// The same question from many agents, answered once (issue 29 item 5):
// alike bundles are one inbox row with a count; one answer settles each
// through its own claim; one answered elsewhere keeps its winner; a person
// may still answer each on its own.
import type { APIRequestContext, Page } from '@playwright/test';
import { test, expect } from '../fixtures';
import { newSession } from '../helpers';

/** `n` agents, each in its own task, asking the same with its own context. */
async function askAlike(request: APIRequestContext, prompt: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const session = await newSession(request, `migration shard ${i}`);
    const response = await request.post('/api/v1/clarification/request', {
      headers: { Authorization: `Bearer ${session.agentToken}` },
      data: { context: `shard ${i}`, questions: [{ prompt, options: [{ label: 'Postgres' }, { label: 'SQLite' }] }] },
    });
    expect(response.status()).toBe(201);
    ids.push((await response.json()).pending_id);
  }
  return ids;
}

async function view(request: APIRequestContext, id: string) {
  return (await request.get(`/api/v1/clarification/${id}`)).json();
}

function row(page: Page, id: string) {
  return page.locator(`[data-pending-id="${id}"]`);
}

test('three agents asking the same are one row; one click answers all three', async ({ page, request }) => {
  const ids = await askAlike(request, 'Which store for shard data?', 3);
  await page.goto('/');
  const group = row(page, ids[0]);
  await expect(group.getByTestId('inbox-alike')).toContainText('Answers 3 agents');
  await expect(row(page, ids[1])).toHaveCount(0);
  await expect(row(page, ids[2])).toHaveCount(0);

  await group.locator('button.row').click();
  await group.getByTestId('clarification-option').nth(1).click();
  await expect(page.getByTestId('inbox-notice')).toContainText('Answer sent to all 3 alike questions.', { timeout: 15_000 });
  for (const id of ids) {
    const v = await view(request, id);
    expect(v.status).toBe('answered');
    expect(v.response.answers[0].selected_options).toEqual(['q1_opt2']);
    expect(v.answered_by.alike).toBe(2);
  }
  await page.goto(`/t/${(await view(request, ids[1])).task_id}`);
  await expect(page.getByTestId('transcript-provenance')).toContainText('one answer for 3 alike questions');
});

test('one of the group answered elsewhere meanwhile keeps its winner, and the notice says so', async ({ page, request }) => {
  // Without the socket the page still shows the group of three.
  await page.routeWebSocket('**/api/v1/ws', () => {});
  const ids = await askAlike(request, 'Which queue for shard jobs?', 3);
  await page.goto('/');
  const group = row(page, ids[0]);
  await expect(group.getByTestId('inbox-alike')).toContainText('Answers 3 agents');
  const postgres = await request.post(`/api/v1/clarification/${ids[1]}/respond`, {
    data: { answers: [{ question_id: 'q1', selected_options: ['q1_opt1'] }] },
  });
  expect(postgres.status()).toBe(200);

  await group.locator('button.row').click();
  await group.getByTestId('clarification-option').nth(1).click();
  await expect(page.getByTestId('inbox-notice')).toContainText(
    'Answer sent to 2 of 3 alike questions. 1 had been answered elsewhere first.',
    { timeout: 15_000 },
  );
  expect((await view(request, ids[1])).response.answers[0].selected_options).toEqual(['q1_opt1']);
  expect((await view(request, ids[2])).response.answers[0].selected_options).toEqual(['q1_opt2']);
});

test('"answer each on its own" splits the group into its rows', async ({ page, request }) => {
  const ids = await askAlike(request, 'Which cache for shard reads?', 2);
  await page.goto('/');
  await row(page, ids[0]).getByTestId('inbox-split').click();
  await expect(row(page, ids[0]).getByTestId('inbox-alike')).toHaveCount(0);
  await expect(row(page, ids[1])).toBeVisible();
  await row(page, ids[1]).locator('button.row').click();
  await row(page, ids[1]).getByTestId('clarification-option').first().click();
  await expect(page.getByTestId('inbox-notice')).toContainText('Answer sent.', { timeout: 15_000 });
  expect((await view(request, ids[0])).status).toBe('pending');
  expect((await view(request, ids[1])).answered_by.alike).toBeUndefined();
});
