// The one fake in the Codex judges: a stand-in for OpenAI's Responses API (POST /v1/responses,
// streaming SSE) whose "model" is a script. The real Codex CLI reaches it through a
// model_provider with this base_url; every request body is recorded so a judge can read the
// function_call_output Codex sent back (issue 47, Judges).
import { serveJson } from './lib/standin.mjs';

let seq = 0;
const nextId = (prefix) => `${prefix}_${Date.now().toString(36)}${(seq++).toString(36)}`;

/** The function_call_output items of a request's input (what the tools returned so far). */
export function callOutputs(body) {
  return (body?.input ?? []).filter((i) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output');
}

/** Text of a function_call_output, whichever form Codex used. */
export function outputText(item) {
  const o = item.output;
  if (typeof o === 'string') return o;
  if (Array.isArray(o)) return o.map((c) => c.text ?? '').join('');
  if (o && typeof o.content === 'string') return o.content;
  return JSON.stringify(o);
}

function sse(res, data) {
  res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** One model turn: items are {type:'text',text} or {type:'call',name,arguments}. */
function reply(res, body, items) {
  const id = nextId('resp');
  const output = items.map((it) =>
    it.type === 'text'
      ? { type: 'message', id: nextId('msg'), role: 'assistant', status: 'completed',
        content: [{ type: 'output_text', text: it.text, annotations: [] }] }
      : { type: 'function_call', id: nextId('fc'), status: 'completed', name: it.name,
        arguments: typeof it.arguments === 'string' ? it.arguments : JSON.stringify(it.arguments), call_id: it.call_id ?? nextId('call') });
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const base = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model: body.model ?? 'stand-in' };
  sse(res, { type: 'response.created', response: { ...base, status: 'in_progress', output: [] } });
  output.forEach((item, output_index) => {
    sse(res, { type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress' } });
    if (item.type === 'message') {
      sse(res, { type: 'response.output_text.delta', output_index, content_index: 0, item_id: item.id, delta: item.content[0].text });
    }
    sse(res, { type: 'response.output_item.done', output_index, item });
  });
  sse(res, { type: 'response.completed', response: { ...base, status: 'completed', output, usage } });
  res.end();
}

/**
 * Whether this is the agent's own loop: its input carries `marker` (the judge's prompt). The
 * thread-title call quotes the prompt too, but asks for a JSON-schema answer (text.format).
 */
function isMainLoop(body, marker) {
  if (body.text?.format) return false;
  return (body.input ?? []).some((i) => i.type === 'message' && JSON.stringify(i.content ?? '').includes(marker));
}

/**
 * Starts the stand-in on 127.0.0.1:0. The main loop is every request whose conversation holds
 * `marker` (put it in the prompt); turn i answers the one that already carries i tool outputs,
 * so a retried or duplicated request gets the same answer. A turn is an item list or a function
 * of the body returning one; after the script the model says "Done.". Side calls get a short text.
 */
export async function startOpenAIStandIn({ turns, marker, log = () => {} }) {
  const requests = [];
  const other = [];
  const { port, close } = await serveJson((req, res, { url, body, raw }) => {
    if (req.method === 'POST' && url.endsWith('/responses')) {
      const main = isMainLoop(body, marker);
      requests.push({ main, body });
      if (!main) { reply(res, body, [{ type: 'text', text: 'Stand-in' }]); return; }
      const turn = callOutputs(body).length;
      const step = turns[turn];
      const items = typeof step === 'function' ? step(body) : step;
      log(`openai stand-in: turn ${turn} (${body.input?.length} input items) -> ${items ? items.map((i) => i.name ?? i.type).join(',') : 'Done.'}`);
      reply(res, body, items ?? [{ type: 'text', text: 'Done.' }]);
      return;
    }
    other.push({ method: req.method, url, body: raw.slice(0, 500) });
    log(`openai stand-in: ${req.method} ${url} -> 404`);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'stand-in', type: 'not_found' } }));
  });
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    other,
    /** The tool outputs of the latest main-loop request (it carries the whole conversation). */
    outputs: () => callOutputs(requests.filter((r) => r.main).at(-1)?.body),
    close,
  };
}
