// The overlay's start on the main thread, as observed (no throttling), with
// 30 questions waiting: what Lighthouse's TBT multiplies by 4 on a phone.
// TBT swings with the machine's load; the minimum over a few loads does
// not, so a change to the overlay's start can be judged here first. Prints,
// for each Chromium variant, the minimum over RUNS loads of: the main
// thread's busy time from the wasm's compile on, its longest task, the sum of
// each task's time over 12.5 ms (Lighthouse's 50 ms at CPU ×4, so ≈ TBT / 4),
// and the time V8 spent compiling wasm functions lazily on the main thread.
//
// Usage: node mainthread.mjs [PATH_TO_CLARIFY]   CLARIFY_LH_RUNS (5)

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import puppeteer from "puppeteer-core";

import { chromeFlags, startServer } from "./lab.mjs";
import { seed } from "./seed.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const binary = resolve(process.argv[2] ?? join(root, "target/release/clarify"));
const runs = Number(process.env.CLARIFY_LH_RUNS ?? 5);
const variants = [
  ["as served", []],
  // What eager compilation would save (a browser flag: not the page's to set).
  ["wasm compiled eagerly", ["--js-flags=--no-wasm-lazy-compilation"]],
];

// One load of `/` at a phone's size; the figures of its trace.
async function load(base, scratch, extra) {
  const browser = await puppeteer.launch({ executablePath: process.env.CHROME_PATH ?? "/usr/bin/chromium", args: [...chromeFlags, ...extra] });
  const path = join(scratch, "trace.json");
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 412, height: 823, isMobile: true });
    await page.tracing.start({ path, categories: ["devtools.timeline", "v8.wasm", "disabled-by-default-devtools.timeline"] });
    await page.goto(`${base}/`, { waitUntil: "networkidle0" });
    await page.tracing.stop();
  } finally {
    await browser.close();
  }
  const events = JSON.parse(readFileSync(path, "utf8")).traceEvents;
  const compile = events.find((e) => e.name === "v8.wasm.compileConsume" || e.name === "wasm.StartStreamingCompilation");
  if (!compile) throw new Error("no wasm compile in the trace: did the overlay load?");
  const onMain = (e) => e.pid === compile.pid && e.tid === compile.tid;
  const tasks = events.filter((e) => onMain(e) && e.name === "RunTask" && e.dur > 1000 && e.ts >= compile.ts - 5000);
  const ms = (us) => us / 1000;
  return {
    busy: ms(tasks.reduce((sum, t) => sum + t.dur, 0)),
    longest: ms(Math.max(...tasks.map((t) => t.dur))),
    over: tasks.reduce((sum, t) => sum + Math.max(0, ms(t.dur) - 12.5), 0),
    lazy: ms(events.filter((e) => onMain(e) && e.name === "wasm.CompileLazy").reduce((sum, e) => sum + (e.dur ?? 0), 0)),
  };
}

const scratch = mkdtempSync(join(tmpdir(), "clarify-mainthread-"));
const running = await startServer(binary, join(scratch, "clarify.db"));
try {
  const waiting = await seed(running.base);
  console.log(`${waiting} questions waiting; minimum over ${runs} loads, ms, observed (×4 on Lighthouse's phone)`);
  console.log("| variant | main thread busy | longest task | Σ over 12.5 ms (≈ TBT/4) | lazy wasm compile |\n|---|---|---|---|---|");
  for (const [name, extra] of variants) {
    const loads = [];
    for (let i = 0; i < runs; i++) loads.push(await load(running.base, scratch, extra));
    const min = (key) => Math.min(...loads.map((l) => l[key])).toFixed(1);
    console.log(`| ${name} | ${min("busy")} | ${min("longest")} | ${min("over")} | ${min("lazy")} |`);
  }
} finally {
  running.server.kill("SIGTERM");
  await running.exited;
  rmSync(scratch, { recursive: true, force: true });
}
