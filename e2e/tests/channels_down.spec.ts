// Issue 48 item 4: a channel that cannot connect is said above the inbox,
// as a person loading it sees it (here Telegram's API is a port nothing
// listens on), readable in light and dark, with axe finding nothing serious;
// the banner is the server's, so the page works as before under it.
import AxeBuilder from '@axe-core/playwright';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { startServer, stopServer } from '../fixtures';

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as { port: number };
  await new Promise((done) => probe.close(done));
  return port;
}

test('a channel that is down is said above the inbox, in light and dark, on a desktop and a phone', async ({ page }) => {
  const port = await closedPort();
  const { server, child, dir } = await startServer([
    '--telegram-bot-token', '123:test', '--telegram-chat-id', '-100',
    '--telegram-api-url', `http://127.0.0.1:${port}`,
  ]);
  try {
    // The first poll fails at once; the banner is written into the next page served.
    await expect.poll(async () => (await (await fetch(`${server.url}/healthz`)).json()).channels.telegram.down, { timeout: 10_000 }).toBe(true);
    for (const [size, viewport] of [['desktop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]] as const) {
     await page.setViewportSize(viewport);
     for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      await page.goto(server.url);
      const banner = page.getByTestId('channels-down');
      await expect(banner).toBeVisible();
      await expect(banner).toContainText('Telegram is not connected');
      await expect(banner).toHaveAttribute('role', 'status');
      // The inbox still loads under it.
      await expect(page.getByRole('banner')).toBeVisible();
      const { violations } = await new AxeBuilder({ page }).analyze();
      const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad.map((v) => `${v.id} ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), `${colorScheme} ${size}`).toEqual([]);
      await page.screenshot({ path: join(test.info().project.outputDir, 'screens', `48-channel-down-${colorScheme}-${size}.png`) });
     }
    }
  } finally {
    await stopServer(child, dir);
  }
});
