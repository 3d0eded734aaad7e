// What the checks here share (stdio_check, answer_with_me_check,
// tasks_check): starting `clarify serve` on a SQLite file and reading the
// address it listens on (again on the same port after a kill, for a
// restart), REST on its `/api/v1` as a person or as an agent with its
// token, and the run: each check in turn, 'ok NAME' or 'FAILED NAME:
// STACK', then the server stopped, the scratch folder removed, 'N passed,
// N failed' and a non-zero exit on a failure.

import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { createInterface } from "node:readline";

// Starts `binary serve` on `listen` (any free port unless given) with the
// SQLite file `database`. Returns {server, base, exited}: the child, the
// address it says it listens on, and its exit (a promise, for a kill to be
// waited out).
export async function startServer(binary, { database, listen = "127.0.0.1:0" }) {
  const server = spawn(binary, ["serve", "--listen", listen, "--database-url", `sqlite://${database}`], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  const exited = new Promise((r) => server.once("exit", r));
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: server.stdout }).once("line", resolve);
    server.once("exit", (code) => reject(new Error(`clarify exited ${code} before listening`)));
  });
  if (!line.startsWith("listening on ")) throw new Error(`clarify said ${line}`);
  return { server, exited, base: line.slice("listening on ".length).split(" ")[0] };
}

// One request to the REST API at `base`: as a person (no auth configured:
// anyone), or as an asking agent with its `token`. Returns the status and
// the body (parsed when it is JSON), whatever the status.
export async function rest(base, method, path, body, token) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}/api/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed };
}

// The same for a request that must succeed: its body, or an error naming
// the request and what came back.
export async function restOk(base, method, path, body, token) {
  const { status, body: parsed } = await rest(base, method, path, body, token);
  if (status < 200 || status > 299) throw new Error(`${method} ${path} ${JSON.stringify(body)}: ${status} ${JSON.stringify(parsed)}`);
  return parsed;
}

// Runs each [name, check] of `checks` in turn and says how it went, then
// stops `running.server` (read at the end: a restart may have replaced it),
// removes `scratch` and exits, non-zero on a failure.
export async function runChecks(checks, running, scratch) {
  let passed = 0;
  let failed = 0;
  for (const [name, check] of checks) {
    try {
      await check();
      console.log(`ok ${name}`);
      passed++;
    } catch (error) {
      console.log(`FAILED ${name}: ${error.stack ?? error}${error.cause ? `\n  caused by: ${error.cause.stack ?? error.cause}` : ""}`);
      failed++;
    }
  }
  running.server.kill("SIGTERM");
  await running.exited;
  rmSync(scratch, { recursive: true, force: true });
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
