// The one fake in the Claude Code judges: a stand-in for Anthropic's Messages API
// (POST /v1/messages, streaming SSE per the documented protocol) whose "model" is a script.
// The real Claude Code CLI talks to it through ANTHROPIC_BASE_URL; every request body is
// recorded so a judge can read the tool_result the CLI sent back (issue 47, Judges).
import { serveJson } from './lib/standin.mjs';

let seq = 0;
const nextId = (prefix) => `${prefix}_${Date.now().toString(36)}${(seq++).toString(36)}`;

/** Whether the conversation holds `marker` (the judge's prompt): side calls (titles, summaries) do not. */
function isMainLoop(body, marker) {
  return Array.isArray(body.tools) && (body.messages ?? []).some((m) => m.role === 'user' && JSON.stringify(m.content).includes(marker));
}

/** Every tool_result block in the conversation so far. */
export function toolResults(body) {
  return (body?.messages ?? [])
    .filter((m) => m.role === 'user' && Array.isArray(m.content))
    .flatMap((m) => m.content.filter((b) => b.type === 'tool_result'));
}

/** Text of a tool_result's content, whichever form (string or blocks) the CLI used. */
export function resultText(block) {
  if (typeof block.content === 'string') return block.content;
  if (Array.isArray(block.content)) return block.content.map((c) => c.text ?? '').join('');
  return '';
}

function sse(res, event, data) {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function usage() {
  return { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

/** One assistant turn: `blocks` are {type:'text',text} or {type:'tool_use',name,input}. */
function reply(res, body, blocks, stopReason) {
  const content = blocks.map((b) => (b.type === 'tool_use' ? { ...b, id: b.id ?? nextId('toolu') } : b));
  const message = {
    id: nextId('msg'), type: 'message', role: 'assistant', model: body.model ?? 'stand-in',
    content, stop_reason: stopReason, stop_sequence: null, usage: usage(),
  };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(message));
    return message;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sse(res, 'message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null } });
  content.forEach((block, index) => {
    if (block.type === 'text') {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } });
    } else {
      sse(res, 'content_block_start', {
        type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      sse(res, 'content_block_delta', {
        type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
  return message;
}

/**
 * Starts the stand-in on 127.0.0.1:0. The main loop is every request whose conversation holds
 * `marker` (put it in the prompt); turn i answers the one that already carries i tool results,
 * so a retried request gets the same answer. A turn is {blocks, stop} or a function of the
 * request body returning one; after the script the model ends its turn with a short text.
 */
export async function startAnthropicStandIn({ marker, turns, log = () => {} }) {
  const requests = [];
  const other = [];
  const { port, close } = await serveJson((req, res, { url, body }) => {
    if (req.method === 'POST' && url.startsWith('/v1/messages/count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 10 }));
      return;
    }
    if (req.method !== 'POST' || !url.startsWith('/v1/messages')) {
      other.push({ method: req.method, url });
      log(`stand-in: ${req.method} ${url} -> 404`);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'stand-in' } }));
      return;
    }
    const main = isMainLoop(body, marker);
    requests.push({ main, body });
    if (!main) {
      reply(res, body, [{ type: 'text', text: 'Stand-in' }], 'end_turn');
      return;
    }
    const index = toolResults(body).length;
    const step = turns[index];
    const turn = typeof step === 'function' ? step(body) : step;
    log(`stand-in: turn ${index} (${body.messages?.length} messages) -> ${turn ? turn.stop : 'end'}`);
    if (turn) reply(res, body, turn.blocks, turn.stop);
    else reply(res, body, [{ type: 'text', text: 'Done.' }], 'end_turn');
  });
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    other,
    /** The tool_results of the latest main-loop request (it carries the whole conversation). */
    results: () => toolResults(requests.filter((r) => r.main).at(-1)?.body),
    close,
  };
}
