// Measures issue 46's levers before they are built: a proxy in front of the
// release binary changes only what the browser receives (the page's HTML,
// one rule more in its stylesheet), and Lighthouse judges each variant on the
// same seeded server (30 questions waiting). A diagnosis tool, not a test:
// it prints the medians per lever, and what each one moves.
//
//   as-is      the page as served (through the proxy, the baseline)
//   tasks-late the task list hidden until the inbox has its rows or says it
//              is empty (what "sections get reserved space" would give)
//   gutter     `scrollbar-gutter: stable`: no sideways jump of everything
//              when the page grows a scrollbar (desktop)
//   no-shift   tasks-late and gutter together
//   one-line   no-shift, and a row's question cut to one line (item 1)
//   first-page no-shift, and the inbox's first page in the HTML the server
//              sends (a snapshot of what the overlay renders, shown until
//              the overlay has its own rows; the wasm still runs)
//   late-wasm  first-page, and the overlay's code fetched only after the
//              first paint (no preload in <head>; boot.js waits a frame):
//              Lighthouse counts every request that ended before the
//              largest paint as blocking it, the wasm too
//   api-early  as-is, and the first API reads (/auth/me, /pending, the task
//              list) preloaded from the HTML: what the data in the page, or
//              the reads in parallel instead of one after another, would give
//   all        late-wasm and one-line together
//   html-only  first-page without the overlay's script: the bound on what
//              the wasm's download and main-thread work cost
//
// Usage: node levers.mjs [PATH_TO_CLARIFY] [LEVER...]
//   CLARIFY_LH_RUNS (3), CLARIFY_LH_FORMS (mobile,desktop), CLARIFY_LH_OUT
//   (target/lighthouse/levers: LEVER-FORM-N.json, each run's report)

import http from "node:http";
import net from "node:net";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import puppeteer from "puppeteer-core";

import { audit, chromeFlags, startServer } from "./lab.mjs";
import { seed } from "./seed.mjs";
import { median, summarize } from "./report.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const binary = resolve(process.argv[2] ?? join(root, "target/release/clarify"));
const runs = Number(process.env.CLARIFY_LH_RUNS ?? 3);
const forms = (process.env.CLARIFY_LH_FORMS ?? "mobile,desktop").split(",");
const out = resolve(process.env.CLARIFY_LH_OUT ?? join(root, "target/lighthouse/levers"));

// The rules each lever adds to the stylesheet (the CSP allows no inline
// style, so they ride on the stylesheet's response).
const tasksLate = `
.inbox:not(:has(.inbox-row, [data-testid=inbox-empty])) ~ .task-list { display: none; }`;
const gutter = `
html { scrollbar-gutter: stable; }`;
const oneLine = `
.row-question { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; display: block; }`;
// The snapshot (body > #first-page) shows until the overlay's own main has
// rows; the overlay's header and main stay hidden until then.
const swap = `
body:has(> main .inbox-row) > #first-page { display: none; }
body:not(:has(> main .inbox-row)) > :is(header, main, div):not(#first-page) { display: none; }`;

// The reads the overlay makes first, as it makes them (credentials included).
const apiPreloads = ["/api/v1/auth/me", "/api/v1/pending?limit=200&", "/api/v1/tasks?limit=50&cursor=&order=newest&waiting=false&workspace_id=&"]
  .map((href) => `<link rel="preload" href="${href}" as="fetch" crossorigin="use-credentials">`)
  .join("\n");

const levers = {
  "as-is": { css: "" },
  "tasks-late": { css: tasksLate },
  gutter: { css: gutter },
  "no-shift": { css: tasksLate + gutter },
  "one-line": { css: tasksLate + gutter + oneLine },
  "first-page": { css: tasksLate + gutter + swap, snapshot: true },
  "late-wasm": { css: tasksLate + gutter + swap, snapshot: true, noPreload: true, lateBoot: true },
  "api-early": { css: "", head: apiPreloads },
  all: { css: tasksLate + gutter + oneLine + swap, snapshot: true, noPreload: true, lateBoot: true },
  "html-only": { css: tasksLate + gutter + swap, snapshot: true, noPreload: true, noScript: true },
};
const chosen = process.argv.slice(3).length ? process.argv.slice(3) : Object.keys(levers);

// What the overlay renders once everything has loaded: the body's header,
// banner and main, as the server could send them.
async function snapshot(base) {
  const browser = await puppeteer.launch({ executablePath: process.env.CHROME_PATH ?? "/usr/bin/chromium", args: chromeFlags });
  try {
    const page = await browser.newPage();
    await page.goto(`${base}/`, { waitUntil: "networkidle0" });
    return await page.evaluate(() =>
      [...document.body.children].filter((e) => !["SCRIPT", "NOSCRIPT"].includes(e.tagName)).map((e) => e.outerHTML).join(""),
    );
  } finally {
    await browser.close();
  }
}

// boot.js as it would be if it started the overlay after the first paint:
// its static import (fetched with the page) made a dynamic one a frame later.
function lateBoot(body) {
  const m = body.match(/import init from "([^"]+)";\s*init\(\{ module_or_path: "([^"]+)" \}\);/);
  if (!m) throw new Error(`boot.js is not as expected: ${body}`);
  return `requestAnimationFrame(() => setTimeout(() => import("${m[1]}").then(({ default: init }) => init({ module_or_path: "${m[2]}" }))));\n`;
}

// A proxy to `upstream` that serves lever `current.lever`'s page and
// stylesheet, and passes everything else (the socket too) as it is.
function proxy(upstream, current, firstPage) {
  const target = new URL(upstream);
  const server = http.createServer((req, res) => {
    const rewrite = req.url === "/" || req.url.endsWith(".css") || /\/boot-[^/]*\.js$/.test(req.url);
    const headers = { ...req.headers };
    if (rewrite) headers["accept-encoding"] = "identity";
    const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (upRes) => {
      if (!rewrite) {
        res.writeHead(upRes.statusCode, upRes.headers);
        upRes.pipe(res);
        return;
      }
      const chunks = [];
      upRes.on("data", (c) => chunks.push(c));
      upRes.on("end", () => {
        let body = Buffer.concat(chunks).toString("utf8");
        const lever = levers[current.lever];
        if (req.url.endsWith(".css")) body += lever.css;
        else if (req.url.endsWith(".js")) {
          if (lever.lateBoot) body = lateBoot(body);
        } else {
          if (lever.snapshot) body = body.replace("</noscript>", `</noscript>\n<div id="first-page">${firstPage}</div>`);
          if (lever.noPreload) body = body.replace(/<link rel="(modulepreload|preload)"[^>]*>\n?/g, "");
          if (lever.noScript) body = body.replace(/<script[^>]*><\/script>/g, "");
          if (lever.head) body = body.replace("</head>", `${lever.head}\n</head>`);
        }
        const sent = { ...upRes.headers, "content-length": Buffer.byteLength(body) };
        delete sent["content-encoding"];
        res.writeHead(upRes.statusCode, sent);
        res.end(body);
      });
    });
    req.pipe(up);
  });
  // The overlay's socket: the upgrade request as received, then both ways.
  server.on("upgrade", (req, socket, head) => {
    const up = net.connect(target.port, target.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`, ...Object.entries(req.headers).map(([k, v]) => `${k}: ${v}`)];
      up.write(`${lines.join("\r\n")}\r\n\r\n`);
      up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on("error", () => socket.destroy());
    socket.on("error", () => up.destroy());
  });
  return new Promise((r) => server.listen(0, "127.0.0.1", () => r({ server, base: `http://127.0.0.1:${server.address().port}` })));
}

mkdirSync(out, { recursive: true });
const scratch = mkdtempSync(join(tmpdir(), "clarify-levers-"));
const running = await startServer(binary, join(scratch, "clarify.db"));
try {
  const waiting = await seed(running.base);
  const firstPage = await snapshot(running.base);
  const current = { lever: "as-is" };
  const front = await proxy(running.base, current, firstPage);
  console.log(`${waiting} questions waiting; first page ${Math.round(firstPage.length / 1024)} KiB of HTML; ${runs} runs per lever and form`);
  const rows = [];
  for (const lever of chosen) {
    current.lever = lever;
    for (const form of forms) {
      const results = [];
      for (let i = 1; i <= runs; i++) {
        const result = await audit(`${front.base}/`, form);
        writeFileSync(join(out, `${lever}-${form}-${i}.json`), result.report);
        results.push(summarize(result.lhr, result.artifacts.Trace));
      }
      const m = median(results);
      const row = `| ${lever} | ${form} | ${m.performance} | ${m.fcp} | ${m.lcp} | ${m.tbt} | ${m.cls} | ${results.map((r) => r.performance).join(", ")} | ${m.benchmark} |`;
      console.log(row);
      rows.push(row);
    }
  }
  console.log(["", "| lever | form | performance | FCP ms | LCP ms | TBT ms | CLS | runs | CPU benchmark index |", "|---|---|---|---|---|---|---|---|---|", ...rows].join("\n"));
  front.server.closeAllConnections();
  front.server.close();
} finally {
  running.server.kill("SIGTERM");
  await running.exited;
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(0);
