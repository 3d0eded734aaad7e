// What run.mjs reads out of a Lighthouse result and prints: the scores,
// the medians over runs, and what limits them (the largest paint's element
// and phases, what shifted and why, the requests, the main thread's work).

const ms = (v) => Math.round(v ?? 0);
const short = (url) => (url ?? "").replace(/^https?:\/\/[^/]+/, "") || "/";
const clip = (text, n = 90) => {
  const flat = (text ?? "").replace(/\s+/g, " ").trim();
  return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat;
};

// The nodes a `layout-shifts` (Lighthouse 12) or, in older reports,
// `layout-shift-elements` item names, with its score and Lighthouse's guess
// at its root cause.
function shifts(lhr) {
  const items = lhr.audits["layout-shifts"]?.details?.items ?? lhr.audits["layout-shift-elements"]?.details?.items ?? [];
  return items.map((item) => ({
    score: Number((item.score ?? 0).toFixed(4)),
    node: item.node?.selector ?? item.node?.nodeLabel ?? "",
    label: clip(item.node?.nodeLabel ?? item.node?.snippet ?? "", 60),
    causes: (item.subItems?.items ?? []).map((c) => `${c.cause ?? ""} ${short(c.extra?.url ?? "")}`.trim()),
  }));
}

// The element of the largest paint and its phases (TTFB, load delay, load
// time, render delay: a text paint has only the first and the last).
function lcp(lhr) {
  const items = lhr.audits["largest-contentful-paint-element"]?.details?.items ?? [];
  const element = items[0]?.items?.[0]?.node ?? {};
  const phases = (items[1]?.items ?? []).map((p) => ({ phase: p.phase, ms: ms(p.timing), percent: p.percent }));
  return { selector: element.selector ?? "", label: clip(element.nodeLabel ?? element.snippet ?? ""), phases };
}

/**
 * Each layout shift in `trace` (observed time, unthrottled): when, its
 * score, and how the rects it moved went (old → new, x,y,w,h in CSS px;
 * 0,0,0,0 is pushed out of view, where the score counts the whole move).
 */
export function traceShifts(trace) {
  const events = trace?.traceEvents ?? [];
  const start = events.find((e) => e.name === "navigationStart")?.ts ?? 0;
  return events
    .filter((e) => e.name === "LayoutShift")
    .map((e) => {
      const d = e.args?.data ?? {};
      const moved = (d.impacted_nodes ?? []).map((n) => `[${n.old_rect}] → [${n.new_rect}]`);
      return `${ms((e.ts - start) / 1000)} ms: ${Number((d.score ?? 0).toFixed(4))} ${moved.join(", ")}`;
    });
}

/** The figures of one run. */
export function summarize(lhr, trace) {
  const a = lhr.audits;
  const requests = (a["network-requests"]?.details?.items ?? []).map((r) => ({
    url: short(r.url),
    type: r.resourceType,
    kb: Math.round((r.transferSize ?? 0) / 102.4) / 10,
    start: ms(r.networkRequestTime),
    end: ms(r.networkEndTime),
  }));
  return {
    performance: Math.round((lhr.categories.performance.score ?? 0) * 100),
    fcp: ms(a["first-contentful-paint"].numericValue),
    lcp: ms(a["largest-contentful-paint"].numericValue),
    tbt: ms(a["total-blocking-time"].numericValue),
    cls: Number((a["cumulative-layout-shift"].numericValue ?? 0).toFixed(3)),
    si: ms(a["speed-index"].numericValue),
    lcpElement: lcp(lhr),
    shifts: shifts(lhr),
    requests,
    renderBlocking: (a["render-blocking-resources"]?.details?.items ?? []).map((r) => `${short(r.url)} (${ms(r.wastedMs)} ms)`),
    mainThread: (a["mainthread-work-breakdown"]?.details?.items ?? []).map((g) => `${g.groupLabel ?? g.group} ${ms(g.duration)} ms`),
    bootup: (a["bootup-time"]?.details?.items ?? []).map((b) => `${short(b.url)}: ${ms(b.total)} ms (script ${ms(b.scripting)}, compile ${ms(b.scriptParseCompile)})`),
    longTasks: (a["long-tasks"]?.details?.items ?? []).map((t) => `${short(t.url)} ${ms(t.duration)} ms at ${ms(t.startTime)}`),
    bytes: ms((a["total-byte-weight"]?.numericValue ?? 0) / 1024),
    traceShifts: traceShifts(trace),
    // Lighthouse's CPU yardstick for this machine at this moment: TBT is the
    // observed main thread ×4 on a phone, so a busy machine inflates it.
    benchmark: Math.round(lhr.environment?.benchmarkIndex ?? 0),
  };
}

const mid = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

/** Each metric's median over `runs`; `run` is the run of median performance (whose details are shown). */
export function median(runs) {
  const byScore = [...runs].sort((x, y) => x.performance - y.performance || x.lcp - y.lcp);
  const out = { run: byScore[Math.floor(runs.length / 2)], runs };
  for (const key of ["performance", "fcp", "lcp", "tbt", "cls", "si", "benchmark"]) out[key] = mid(runs.map((r) => r[key]));
  return out;
}

/** The medians as a Markdown table. */
export function table(summaries) {
  const lines = [
    "| form | performance | FCP ms | LCP ms | TBT ms | CLS | Speed Index ms | runs (performance) | CPU benchmark index |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const [form, s] of Object.entries(summaries)) {
    lines.push(`| ${form} | ${s.performance} | ${s.fcp} | ${s.lcp} | ${s.tbt} | ${s.cls} | ${s.si} | ${s.runs.map((r) => r.performance).join(", ")} | ${s.benchmark} |`);
  }
  return `Medians:\n\n${lines.join("\n")}`;
}

/** What the median run of each form factor says limits it. */
export function diagnosis(summaries) {
  const parts = [];
  for (const [form, s] of Object.entries(summaries)) {
    const r = s.run;
    const phases = r.lcpElement.phases.map((p) => `${p.phase} ${p.ms} ms (${p.percent})`).join(", ");
    const requests = r.requests.map((q) => `    ${q.start}–${q.end} ms ${q.type} ${q.url} ${q.kb} KiB`).join("\n");
    const shifted = r.shifts.length
      ? r.shifts.map((x) => `    ${x.score} ${x.node} "${x.label}"${x.causes.length ? ` (${x.causes.join("; ")})` : ""}`).join("\n")
      : "    none";
    parts.push(
      [
        `${form} (median run: performance ${r.performance}, LCP ${r.lcp} ms, CLS ${r.cls}):`,
        `  largest paint: ${r.lcpElement.selector} "${r.lcpElement.label}"`,
        `  its phases: ${phases || "n/a"}`,
        `  layout shifts:\n${shifted}`,
        `  as traced: ${r.traceShifts.join("; ") || "none"}`,
        `  render-blocking: ${r.renderBlocking.join(", ") || "none"}`,
        `  main thread: ${r.mainThread.join(", ")}`,
        `  scripts: ${r.bootup.join("; ") || "none"}`,
        `  long tasks: ${r.longTasks.join("; ") || "none"}`,
        `  requests (observed, unthrottled), ${r.bytes} KiB in all:\n${requests}`,
      ].join("\n"),
    );
  }
  return parts.join("\n\n");
}
