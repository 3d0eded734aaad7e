// Lighthouse on the inbox (`/`) with 30 questions waiting (issue 46,
// "Speed on a phone" and "Judges"): a benchmark with a floor, not a timed
// test. Starts `clarify serve` on a fresh SQLite file, seeds it (seed.mjs),
// runs Lighthouse's performance category on `/` as a phone (its default
// emulation and simulated slow 4G) and as a desktop (its desktop preset),
// RUNS times each, and prints the medians with what the phone's largest
// paint is and what shifted. The JSON reports, each form's median trace (for
// DevTools' Performance panel) and summary.md go to OUT, kept as artifacts.
//
// The floors hold on the phone's medians, the goal: performance ≥
// CLARIFY_LH_MIN_PERF (95) and CLS ≤ CLARIFY_LH_MAX_CLS (0.05). Exits
// non-zero when one is missed, after printing everything.
//
// Usage: node run.mjs [PATH_TO_CLARIFY] (default target/release/clarify)
//   CLARIFY_LH_RUNS (3), CLARIFY_LH_OUT (target/lighthouse),
//   CHROME_PATH (/usr/bin/chromium)

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { audit, startServer } from "./lab.mjs";
import { seed } from "./seed.mjs";
import { summarize, median, table, diagnosis } from "./report.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const binary = resolve(process.argv[2] ?? join(root, "target/release/clarify"));
const runs = Number(process.env.CLARIFY_LH_RUNS ?? 3);
const out = resolve(process.env.CLARIFY_LH_OUT ?? join(root, "target/lighthouse"));
const minPerf = Number(process.env.CLARIFY_LH_MIN_PERF ?? 95);
const maxCls = Number(process.env.CLARIFY_LH_MAX_CLS ?? 0.05);
const started = Date.now();
mkdirSync(out, { recursive: true });
const scratch = mkdtempSync(join(tmpdir(), "clarify-lh-"));
const running = await startServer(binary, join(scratch, "clarify.db"));
let failures = [];
try {
  const waiting = await seed(running.base);
  console.log(`clarify ${binary} at ${running.base}: ${waiting} questions waiting; Lighthouse ${runs}× per form factor`);
  const summaries = {};
  for (const form of ["mobile", "desktop"]) {
    const results = [];
    for (let i = 1; i <= runs; i++) {
      const result = await audit(`${running.base}/`, form);
      writeFileSync(join(out, `${form}-${i}.json`), result.report);
      const s = summarize(result.lhr, result.artifacts.Trace);
      s.trace = result.artifacts.Trace;
      results.push(s);
      console.log(`  ${form} #${i}: performance ${s.performance}, LCP ${s.lcp} ms, TBT ${s.tbt} ms, CLS ${s.cls} (CPU benchmark index ${s.benchmark})`);
    }
    summaries[form] = median(results);
    // The median run's trace, to open in DevTools' Performance panel.
    writeFileSync(join(out, `${form}-median-trace.json`), JSON.stringify(summaries[form].run.trace));
  }
  const text = [table(summaries), diagnosis(summaries)].join("\n\n");
  console.log(`\n${text}`);
  const phone = summaries.mobile;
  if (phone.performance < minPerf) failures.push(`mobile performance ${phone.performance} < ${minPerf}`);
  if (phone.cls > maxCls) failures.push(`mobile CLS ${phone.cls} > ${maxCls}`);
  const verdict = failures.length ? `FLOOR MISSED: ${failures.join("; ")}` : `floors met (mobile performance ≥ ${minPerf}, CLS ≤ ${maxCls})`;
  writeFileSync(join(out, "summary.md"), `# Lighthouse, ${waiting} questions waiting\n\n${binary}\n\n${text}\n\n${verdict}\n`);
  console.log(`\n${verdict}\nreports in ${out} (${Math.round((Date.now() - started) / 1000)} s)`);
  console.log(`${2 - failures.length} passed, ${failures.length} failed`);
} catch (error) {
  failures = [error];
  console.log(`FAILED: ${error.stack ?? error}\n0 passed, 1 failed`);
} finally {
  running.server.kill("SIGTERM");
  await running.exited;
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(failures.length ? 1 : 0);
