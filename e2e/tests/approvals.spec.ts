// Approvals in the browser (issue 47: "the call, then the buttons"): a
// permission prompt asked as an approval shows the tool and its call as
// code, never run, and is answered like any bundle, through the one claim.
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { test, expect } from '../fixtures';
import { newSession } from '../helpers';

for (const [size, viewport] of Object.entries({ desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } })) {
  test(`an approval shows its call as code and is allowed from the inbox (${size})`, async ({ page, request }) => {
    await page.setViewportSize(viewport);
    const session = await newSession(request, `approval ${size}`);
    const call = `npm publish --tag next-${size} && echo "<done>"`;
    const asked = await request.post('/api/v1/clarification/request', {
      headers: { Authorization: `Bearer ${session.agentToken}` },
      data: {
        session_id: session.sessionId,
        kind: 'approval',
        tool_call: { tool: 'Bash', call },
        questions: [{ prompt: `Allow Bash (${size})?`, options: [{ label: 'Allow once' }, { label: 'Deny' }] }],
      },
    });
    expect(asked.status()).toBe(201);
    const id = (await asked.json()).pending_id as string;
    await page.goto('/');
    const row = page.locator(`[data-pending-id="${id}"]`);
    await row.locator('button.row').click();
    const approval = row.getByTestId('clarification-approval');
    await expect(approval.locator('pre code')).toHaveText(call);
    await expect(approval).toContainText('Allow Bash to run:');
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      const { violations } = await new AxeBuilder({ page }).analyze();
      expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
      await page.screenshot({ path: join(test.info().project.outputDir, 'screens', `47-approval-${colorScheme}-${size}.png`) });
    }
    await row.getByTestId('clarification-option').first().click();
    await expect(page.getByTestId('inbox-notice')).toContainText('Answer sent.', { timeout: 15_000 });
    const view = await (await request.get(`/api/v1/clarification/${id}`)).json();
    expect(view.kind).toBe('approval');
    expect(view.response.answers[0].selected_options).toEqual(['q1_opt1']);
  });
}
