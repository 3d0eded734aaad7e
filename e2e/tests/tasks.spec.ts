// The task list to triage from (issue 29 item 4): newest first, each task
// with its outcome and last activity, filtered by workspace and "waiting".
import { test, expect } from '../fixtures';

test('newest first with outcomes; by workspace; waiting only', async ({ page, request }) => {
  const workspace = await (await request.post('/api/v1/workspaces', { data: { name: 'triage ws' } })).json();
  const task = async (title: string) => {
    const t = await (await request.post('/api/v1/tasks', { data: { title, workspace_id: workspace.id } })).json();
    const s = await (await request.post(`/api/v1/tasks/${t.id}/sessions`, { data: { resume: { command: ['/bin/true'] } } })).json();
    const asked = await request.post('/api/v1/clarification/request', {
      headers: { Authorization: `Bearer ${s.agent_token}` },
      data: { questions: [{ prompt: `${title}?`, options: [{ label: 'Yes' }, { label: 'No' }] }] },
    });
    return (await asked.json()).pending_id as string;
  };
  // A task in no workspace, so that "All" holds more than this workspace's
  // two whichever tests ran before on this server.
  expect((await request.post('/api/v1/tasks', { data: { title: 'tl elsewhere' } })).status()).toBe(201);
  const answered = await task('tl answered');
  expect((await request.post(`/api/v1/clarification/${answered}/respond`, { data: { rejected: true } })).status()).toBe(200);
  await task('tl waiting');

  await page.goto('/');
  await page.getByTestId('tasks-workspace').selectOption({ label: 'triage ws' });
  const items = page.getByTestId('task-item');
  await expect(items).toHaveCount(2);
  await expect(items.nth(0)).toContainText('tl waiting');
  await expect(items.nth(0).getByTestId('task-pending-indicator')).toBeVisible();
  await expect(items.nth(1)).toContainText('tl answered');
  await expect(items.nth(1).getByTestId('task-outcome')).toHaveText('declined');
  await expect(items.nth(1).getByTestId('task-activity')).toHaveText('just now');

  await page.getByTestId('tasks-waiting').check();
  await expect(items).toHaveCount(1);
  await expect(items.first()).toContainText('tl waiting');
  // The reload for this workspace answers late, after the one for all
  // workspaces: the newest filter's list must stay (a full run once
  // showed the older, two tasks, after "All").
  await page.route(`**/api/v1/tasks?*waiting=false&workspace_id=${workspace.id}`, async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 400));
    await route.continue();
  });
  await page.getByTestId('tasks-waiting').uncheck();
  await page.getByTestId('tasks-workspace').selectOption({ label: 'All' });
  await expect.poll(() => items.count()).toBeGreaterThan(2);
  // And it stays so once the late answer has come.
  await page.waitForLoadState('networkidle');
  expect(await items.count()).toBeGreaterThan(2);
});
