// What run.mjs and levers.mjs share: the server on a fresh SQLite file,
// and one Lighthouse run in a Chromium of its own.

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

import * as chromeLauncher from "chrome-launcher";
import lighthouse, { desktopConfig } from "lighthouse";

const chromePath = process.env.CHROME_PATH ?? "/usr/bin/chromium";
// The machine's network is closed: nothing that would reach out, and no
// GPU. --disable-quic keeps Chromium from racing QUIC on loopback.
export const chromeFlags = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  // Experiments only (say, --js-flags=--no-wasm-lazy-compilation): more flags.
  ...(process.env.CLARIFY_LH_CHROME_FLAGS ?? "").split(" ").filter(Boolean),
];

/**
 * Starts `binary serve` on a free port with the SQLite file `database`.
 * Its first line is `listening on URL`, perhaps followed by ` (auth on)`:
 * the URL is the first token after it. Returns {server, exited, base}.
 */
export async function startServer(binary, database) {
  const server = spawn(
    binary,
    ["serve", "--listen", "127.0.0.1:0", "--allow-resume-command", "/bin/true", "--database-url", `sqlite://${database}`],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const exited = new Promise((r) => server.once("exit", r));
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: server.stdout }).once("line", resolve);
    server.once("exit", (code) => reject(new Error(`clarify exited ${code} before listening`)));
  });
  if (!line.startsWith("listening on ")) throw new Error(`clarify said ${line}`);
  return { server, exited, base: line.slice("listening on ".length).split(" ")[0] };
}

/**
 * One Lighthouse run (performance only) of `url` as `form` ("mobile": its
 * default emulation and simulated slow 4G; "desktop": its preset), in a
 * Chromium of its own so that no cache or storage is shared between runs.
 */
export async function audit(url, form) {
  const chrome = await chromeLauncher.launch({ chromePath, chromeFlags });
  try {
    const flags = { port: chrome.port, output: "json", logLevel: "error", onlyCategories: ["performance"] };
    return await lighthouse(url, flags, form === "desktop" ? desktopConfig : undefined);
  } finally {
    await chrome.kill();
  }
}
