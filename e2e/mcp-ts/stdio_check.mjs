// Independent MCP clients against `clarify mcp`, the stdio server an
// agent's client starts (issue 25): the official TypeScript SDK v1
// (`@modelcontextprotocol/sdk`, the initialize handshake) and v2
// (`@modelcontextprotocol/client`, pinned to the 2026-07-28 era) through
// their StdioClientTransport, and the MCP Inspector CLI (`--strict` on the
// tool list, then a call). Each asks, is answered over REST by this script
// as a person would be, and must get `User answered: …`. Prints
// 'N passed, N failed'.
//
// Usage: node stdio_check.mjs PATH_TO_CLARIFY_BINARY

import { execFile } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";

import { startServer, rest, runChecks } from "./harness.mjs";

// Absolute: servers are started from other working directories.
const binary = resolve(process.argv[2]);
const here = dirname(fileURLToPath(import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "clarify-stdio-"));

function repository(name) {
  const dir = join(scratch, name);
  mkdirSync(join(dir, ".git"), { recursive: true });
  writeFileSync(join(dir, ".git", "HEAD"), "ref: refs/heads/main\n");
  return dir;
}

// Waits for the question `prompt` to be listed, checks its task is the
// project, and answers it in free text.
async function answer(base, prompt, project, text) {
  for (let i = 0; i < 400; i++) {
    const { bundles } = (await rest(base, "GET", "/pending")).body;
    const bundle = bundles.find((b) => b.questions[0].prompt === prompt);
    if (bundle) {
      const task = (await rest(base, "GET", `/tasks/${bundle.task_id}`)).body;
      if (task.title !== project) throw new Error(`task ${task.title}, not ${project}`);
      await rest(base, "POST", `/clarification/${bundle.pending_id}/respond`, {
        answers: [{ question_id: "q1", selected_options: [], custom_text: text }],
      });
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${prompt} never became pending`);
}

const question = (prompt) => ({ questions: [{ prompt, options: [{ label: "now" }, { label: "later" }] }] });

function expectAnswered(result, text) {
  if (result.isError) throw new Error(`tool error: ${JSON.stringify(result.content)}`);
  const summary = result.structuredContent?.summary;
  if (summary !== `User answered: ${text}`) throw new Error(`summary ${summary}`);
}

async function sdk(base, name, Client, Stdio, options) {
  const project = `ts-${name}`;
  const client = new Client({ name: `clarify-e2e-${name}`, version: "1.0.0" }, options);
  const transport = new Stdio({ command: binary, args: ["mcp", "--server", base], cwd: repository(project), stderr: "ignore" });
  await client.connect(transport);
  try {
    if (name === "v2" && client.getNegotiatedProtocolVersion() !== "2026-07-28") {
      throw new Error(`negotiated ${client.getNegotiatedProtocolVersion()}`);
    }
    const { tools } = await client.listTools();
    if (tools.map((t) => t.name).join() !== "ask_user_question_kandev") throw new Error(JSON.stringify(tools));
    const prompt = `TypeScript SDK ${name}?`;
    const call = client.callTool(
      { name: "ask_user_question_kandev", arguments: question(prompt) },
      undefined,
      // Progress keeps the call open past the timeout, as in a real client.
      { onprogress: () => {}, timeout: 60_000, resetTimeoutOnProgress: true },
    );
    await answer(base, prompt, project, `from ${name}`);
    expectAnswered(await call, `from ${name}`);
  } finally {
    await client.close();
  }
}

function inspector(args, cwd) {
  const cli = join(here, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, "--cli", ...args], { cwd, env: { ...process.env, MCP_CATALOG_PATH: join(scratch, "catalog.json") }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? error.code ?? 1 : 0, stdout, stderr }));
  });
}

async function inspectorCli(base) {
  const project = "ts-inspector";
  const cwd = repository(project);
  // The server URL by environment: `--server` would be read as the
  // Inspector's own flag.
  const target = ["--cwd", cwd, "-e", `CLARIFY_SERVER=${base}`, binary, "mcp"];
  const listed = await inspector([...target, "--method", "tools/list", "--strict"], cwd);
  if (listed.code !== 0) throw new Error(`tools/list --strict exited ${listed.code}: ${listed.stderr}`);
  if (!listed.stdout.includes("ask_user_question_kandev")) throw new Error(listed.stdout);
  const prompt = "Inspector CLI?";
  const call = inspector([...target, "--method", "tools/call", "--tool-name", "ask_user_question_kandev",
    "--tool-arg", `questions=${JSON.stringify(question(prompt).questions)}`], cwd);
  await answer(base, prompt, project, "from the inspector");
  const called = await call;
  if (called.code !== 0) throw new Error(`tools/call exited ${called.code}: ${called.stderr}`);
  expectAnswered(JSON.parse(called.stdout), "from the inspector");
}

const running = await startServer(binary, { database: join(scratch, "clarify.db") });
const { base } = running;
await runChecks([
  ["typescript-sdk v1 (initialize)", () => sdk(base, "v1", ClientV1, StdioV1, {})],
  ["typescript-sdk v2 (2026-07-28)", () => sdk(base, "v2", ClientV2, StdioV2, { versionNegotiation: { mode: { pin: "2026-07-28" } } })],
  ["mcp inspector cli", () => inspectorCli(base)],
], running, scratch);
