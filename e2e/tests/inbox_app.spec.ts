// The inbox as an MCP App (issue 30 item 2) in real Chromium: a test host
// built on the extension's own host bridge (`AppBridge` from
// @modelcontextprotocol/ext-apps, bundled for the browser by esbuild)
// renders `ui://clarify/inbox` in a sandboxed frame under the CSP the
// resource declares, and passes the app's tool calls to a real MCP client
// (the TypeScript SDK v2) connected to a real server's /mcp. The app lists
// a question, a click answers it (the one claim; provenance `mcp` and the
// client's name), and a question answered elsewhere updates in the app.
import AxeBuilder from '@axe-core/playwright';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { request as http, type APIRequestContext } from '@playwright/test';
import { build } from 'esbuild';
import type { ChildProcess } from 'node:child_process';
import { test, expect, startServer, stopServer } from '../fixtures';
import { ask, newSession } from '../helpers';

const URI = 'ui://clarify/inbox';
const MIME = 'text/html;profile=mcp-app';
const HOST = 'http://host.test';
const CLIENT = 'clarify-e2e-app-host';

// The host page: AppBridge on a sandboxed iframe (scripts only, an opaque
// origin), the resource's CSP as a meta tag, every tool call of the app
// sent to the test's MCP client, and only to tools the app may call.
const HOST_PAGE = `<!DOCTYPE html><html lang="en"><head><title>test host</title></head><body>
<script type="module">
import { AppBridge, PostMessageTransport } from "${HOST}/bridge.js";
window.startApp = async ({ html, csp, toolResult, appTools }) => {
  const frame = document.createElement("iframe");
  frame.title = "Clarify inbox";
  frame.setAttribute("sandbox", "allow-scripts allow-forms");
  frame.style.width = "640px";
  frame.style.height = "600px";
  document.body.append(frame);
  const bridge = new AppBridge(null, { name: "${CLIENT}", version: "1.0.0" }, { serverTools: {} }, { hostContext: { theme: "light", displayMode: "inline" } });
  bridge.oncalltool = async (params) => {
    if (!appTools.includes(params.name)) throw new Error("not callable from the app: " + params.name);
    return window.callServerTool(params);
  };
  bridge.onsizechange = ({ height }) => { if (height) frame.style.height = height + "px"; };
  const started = new Promise((done) => { bridge.oninitialized = done; });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  const list = (name) => (csp && csp[name] || []).join(" ");
  const policy = "default-src 'none'; script-src 'unsafe-inline' " + list("resourceDomains") +
    "; style-src 'unsafe-inline' " + list("resourceDomains") + "; connect-src " + (list("connectDomains") || "'none'") +
    "; img-src data: " + list("resourceDomains") + "; frame-src " + (list("frameDomains") || "'none'") + "; object-src 'none'; base-uri 'none'";
  frame.srcdoc = html.replace("<head>", '<head><meta http-equiv="Content-Security-Policy" content="' + policy + '">');
  await started;
  await bridge.sendToolResult(toolResult);
};
</script></body></html>`;

let bridgeBundle = '';
let child: ChildProcess;
let dir: string;
let base: string;
let api: APIRequestContext;
let client: Client;

async function connect(name: string, apps: boolean): Promise<Client> {
  const capabilities = apps ? { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [MIME] } } } : {};
  const mcp = new Client({ name, version: '1.0.0' }, { capabilities });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  return mcp;
}

test.beforeAll(async () => {
  const bundled = await build({
    entryPoints: [require.resolve('@modelcontextprotocol/ext-apps/app-bridge')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  bridgeBundle = bundled.outputFiles[0].text;
  // A server of its own: the app lists every question it may see.
  ({ child, dir, server: { url: base } } = await startServer());
  api = await http.newContext({ baseURL: base });
  client = await connect(CLIENT, true);
});

test.afterAll(async () => {
  await client?.close();
  await api?.dispose();
  if (child) await stopServer(child, dir);
});

test('the inbox app lists a question, a click answers it, and one answered elsewhere updates', async ({ page }) => {
  // The tool names the page; the app's own tool is for the app only, and
  // listed only to a host that renders apps.
  const tools = (await client.listTools()).tools;
  const list = tools.find((t) => t.name === 'list_pending_questions_kandev')!;
  expect((list._meta as any).ui.resourceUri).toBe(URI);
  const appTools = tools
    .filter((t) => ((t._meta as any)?.ui?.visibility ?? ['model', 'app']).includes('app'))
    .map((t) => t.name);
  expect(appTools).toContain('answer_in_inbox_kandev');
  expect(((tools.find((t) => t.name === 'answer_in_inbox_kandev')!._meta as any).ui.visibility)).toEqual(['app']);
  const plain = await connect('clarify-e2e-plain', false);
  expect((await plain.listTools()).tools.map((t) => t.name)).not.toContain('answer_in_inbox_kandev');
  await plain.close();

  const resource = await client.readResource({ uri: URI });
  const contents = resource.contents[0] as { text: string; mimeType: string; _meta?: any };
  expect(contents.mimeType).toBe(MIME);
  expect(contents._meta.ui.csp.connectDomains).toEqual([]);

  const session = await newSession(api, 'inbox app task');
  // Markup in a question is text, never markup: the page has no way to
  // run it (textContent only, a CSP without any source).
  const PROMPT = 'Which cache for the app? <img src=x onerror="parent.pwned=1">';
  const first = await ask(api, session, [{ prompt: PROMPT, options: [{ label: 'Redis' }, { label: 'Memcached' }] }]);
  const toolResult = await client.callTool({ name: 'list_pending_questions_kandev', arguments: {} });

  await page.exposeFunction('callServerTool', (params: { name: string; arguments?: Record<string, unknown> }) =>
    client.callTool({ name: params.name, arguments: params.arguments ?? {} }),
  );
  await page.route(`${HOST}/**`, (route) => {
    const path = new URL(route.request().url()).pathname;
    if (path === '/bridge.js') return route.fulfill({ contentType: 'text/javascript', body: bridgeBundle });
    return route.fulfill({ contentType: 'text/html', body: HOST_PAGE });
  });
  await page.goto(`${HOST}/`);
  await page.evaluate(
    (args) => (window as any).startApp(args),
    { html: contents.text, csp: contents._meta.ui.csp, toolResult, appTools },
  );

  const app = page.frameLocator('iframe');
  const card = app.getByRole('article', { name: PROMPT });
  await expect(card).toBeVisible();
  await expect(card.locator('legend')).toHaveText(PROMPT);
  await expect(app.locator('img')).toHaveCount(0);
  await card.getByLabel('Memcached').check();
  await card.getByRole('textbox').fill('kept while the list refreshes');

  // Asked after the app opened: it appears with the next refresh, and the
  // words typed in the first card are still there.
  // Each on a session of its own: answering one resumes its agent, whose
  // next turn would close another of the same turn.
  const second = await ask(api, await newSession(api, 'inbox app task 2'), [{ prompt: 'Which queue for the app?', options: [{ label: 'SQS' }, { label: 'NATS' }] }]);
  const next = app.getByRole('article', { name: 'Which queue for the app?' });
  await expect(next).toBeVisible({ timeout: 10_000 });
  await expect(card.getByRole('textbox')).toHaveValue('kept while the list refreshes');

  await card.getByRole('button', { name: 'Answer' }).click();
  await expect(card.getByRole('status')).toHaveText('Answered.');
  const view = await (await api.get(`/api/v1/clarification/${first}`)).json();
  expect(view.status).toBe('answered');
  expect(view.answered_by).toMatchObject({ channel: 'mcp', client: CLIENT });
  expect(JSON.stringify(view)).toContain('kept while the list refreshes');
  expect(await page.evaluate(() => (window as any).pwned)).toBeUndefined();

  // Answered over REST: the app says so.
  const answered = await api.post(`/api/v1/clarification/${second}/respond`, {
    data: { answers: [{ question_id: 'q1', selected_options: ['q1_opt2'] }] },
  });
  expect(answered.status()).toBe(200);
  await expect(next.getByRole('status')).toHaveText('Answered or closed elsewhere.', { timeout: 10_000 });
  await expect(next.getByRole('button', { name: 'Answer' })).toBeDisabled();

  // Declined in the app: the agent is told so.
  const third = await ask(api, await newSession(api, 'inbox app task 3'), [{ prompt: 'Which region for the app?', options: [{ label: 'eu' }, { label: 'us' }] }]);
  const last = app.getByRole('article', { name: 'Which region for the app?' });
  await expect(last).toBeVisible({ timeout: 10_000 });
  await last.getByRole('button', { name: 'Decline' }).click();
  await expect(last.getByRole('status')).toHaveText('Declined.');
  expect((await (await api.get(`/api/v1/clarification/${third}`)).json()).status).toBe('rejected');

  // The app inside its frame: no serious or critical axe violations.
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`)).toEqual([]);
});
