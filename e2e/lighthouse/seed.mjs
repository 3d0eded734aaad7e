// The inbox Lighthouse judges (issue 46, "Speed on a phone"): 30 questions
// waiting across 6 tasks, as agents ask them over REST. Bundles of 1–4
// questions, one per session (a session's newer ask would supersede its
// older one); some long Markdown prompts with code and a table (the row that
// was the phone's largest paint), titles on some, expiry on some (an hour:
// none expires during a run).

// One request to the REST API at `base` that must succeed: its parsed body.
async function rest(base, path, body, token) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}/api/v1${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await response.text();
  if (response.status !== 200 && response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

const retryPrompt = `The retry loop in \`retry.rs\` backs off without a ceiling:

\`\`\`rust
fn next_delay(attempt: u32) -> Duration {
    Duration::from_millis(100 * 2u64.pow(attempt))
}
\`\`\`

After 12 attempts that is almost 7 minutes between tries. Options I see:

| cap | worst wait | retries in 1 h |
|-----|-----------|----------------|
| 30 s | 30 s | ~125 |
| 5 min | 5 min | ~16 |
| none | grows | ~12 |

Which ceiling should the webhook sender use?`;

const migrationPrompt = `The \`0042_split_accounts\` migration rewrites the \`accounts\` table (3.1 M rows on production).

\`\`\`sql
ALTER TABLE accounts ADD COLUMN billing_id BIGINT;
UPDATE accounts SET billing_id = legacy_billing_id;
\`\`\`

On a copy of production it held the table lock for **4 min 12 s**. I can:

1. run it as is in the Sunday window,
2. backfill in batches of 10,000 first, then swap,
3. leave \`legacy_billing_id\` and add a view.

| plan | lock | extra work |
|------|------|------------|
| as is | 4 min | none |
| batches | < 1 s | half a day |
| view | none | a day, and reads change |`;

const cachePrompt = `The image cache keys on the URL only, so two sizes of one picture collide:

\`\`\`ts
const key = new URL(src).pathname; // ?w=320 and ?w=1280 share a key
\`\`\`

Should the key include the query string, or only \`w\` and \`dpr\`?`;

const opts = (...labels) => labels.map((label) => ({ label }));

// [task title, bundles: [ask options, questions]]: 30 questions in all.
const tasks = [
  ["Webhook delivery hardening", [
    [{ context: "Working through the delivery backlog." }, [
      { title: "Retry ceiling", prompt: retryPrompt, options: opts("30 s", "5 min", "No ceiling") },
      { prompt: "Should a 410 Gone from the receiver disable the webhook?", options: opts("Disable it", "Keep retrying", "Ask the owner") },
      { title: "Signing", prompt: "Sign payloads with HMAC-SHA256 in the `X-Signature` header?", options: opts("Yes", "No, use mTLS") },
    ]],
    [{ expires_in_seconds: 3600 }, [
      { prompt: "Ship the retry change tonight or wait for Monday's release?", options: opts("Tonight", "Monday"), default_option_id: "q1_opt2" },
    ]],
  ]],
  ["Billing migration", [
    [{}, [
      { title: "Migration plan", prompt: migrationPrompt, options: opts("As is, Sunday", "Batches", "View") },
      { prompt: "Announce the maintenance window to customers?", options: opts("Email", "Status page", "Both", "No") },
    ]],
    [{ expires_in_seconds: 3600 }, [
      { title: "Dry run", prompt: "Run the dry run on staging now (takes ~20 min)?", options: opts("Yes", "Later"), default_option_id: "q1_opt2" },
      { prompt: "Keep the copy of production after the dry run?", options: opts("Keep 7 days", "Delete"), default_option_id: "q2_opt1" },
      { prompt: "Page on-call if the dry run fails?", options: opts("Yes", "No"), default_option_id: "q3_opt2" },
      { prompt: "Which currency rounding for the split accounts?", options: opts("Banker's", "Half up"), default_option_id: "q4_opt2" },
    ]],
  ]],
  ["Image pipeline", [
    [{}, [
      { title: "Cache key", prompt: cachePrompt, options: opts("Whole query", "Only w and dpr", "Hash the bytes") },
    ]],
    [{}, [
      { prompt: "Which formats should the resizer emit?", multi_select: true, options: opts("AVIF", "WebP", "JPEG", "PNG") },
      { prompt: "Quality for WebP?", options: opts("75", "80", "90") },
      { title: "Originals", prompt: "Keep originals in cold storage after 90 days?", options: opts("Yes", "No") },
    ]],
  ]],
  ["Onboarding emails", [
    [{}, [
      { title: "Tone", prompt: "The welcome email reads formal. Rewrite it in a warmer tone?", options: opts("Warmer", "Keep formal") },
      { prompt: "Send the second email after 2 days or 5 days?", options: opts("2 days", "5 days", "Only if inactive") },
    ]],
    [{ expires_in_seconds: 3600 }, [
      { prompt: "Add an unsubscribe link to the transactional emails too?", options: opts("Yes", "No"), default_option_id: "q1_opt1" },
    ]],
    [{}, [
      { prompt: "Which sender name: the product or the founder?", options: opts("Product", "Founder", "Support team") },
      { prompt: "Track opens with a pixel?", options: opts("Yes", "No") },
    ]],
  ]],
  ["Search relevance", [
    [{ context: "Ranking experiment #14; results in the dashboard." }, [
      { title: "Boost recency", prompt: "Boost documents edited in the last 30 days by **1.5×**? Clicks rose 4% in the test, dwell time fell 2%.", options: opts("Ship 1.5×", "Try 1.2×", "Drop it") },
      { prompt: "Include archived projects in results by default?", options: opts("Include", "Exclude", "Behind a toggle") },
      { prompt: "Which typo tolerance?", options: opts("1 edit", "2 edits", "None") },
      { prompt: "Highlight matches in titles?", options: opts("Yes", "No") },
    ]],
    [{}, [
      { prompt: "Index PDF attachments (adds ~40% to the index)?", options: opts("Yes", "Only under 5 MB", "No") },
      { prompt: "Reindex nightly or on every change?", options: opts("Nightly", "On change") },
    ]],
  ]],
  ["Release 2.8", [
    [{}, [
      { title: "Freeze", prompt: "Freeze the branch today at 18:00?", options: opts("Freeze", "Tomorrow") },
      { prompt: "The flaky `upload_resumes` test failed 3 of the last 40 runs. Quarantine it for the release?", options: opts("Quarantine", "Fix first", "Leave it") },
    ]],
    [{ expires_in_seconds: 3600 }, [
      { prompt: "Publish the changelog to the blog as well?", options: opts("Yes", "Docs only"), default_option_id: "q1_opt2" },
    ]],
    [{}, [
      { title: "Version", prompt: "Call it 2.8.0 or 3.0.0? The config file format changed (old files still load, with a warning).", options: opts("2.8.0", "3.0.0") },
      { prompt: "Who writes the release notes?", options: opts("Me", "You draft, I edit") },
    ]],
  ]],
];

/** Seeds `base` (a fresh server) and returns how many questions wait. */
export async function seed(base) {
  let questions = 0;
  for (const [title, bundles] of tasks) {
    const task = await rest(base, "/tasks", { title });
    for (const [extra, qs] of bundles) {
      const session = await rest(base, `/tasks/${task.id}/sessions`, { resume: { command: ["/bin/true"] } });
      await rest(base, "/clarification/request", { session_id: session.id, questions: qs, ...extra }, session.agent_token);
      questions += qs.length;
    }
  }
  return questions;
}
