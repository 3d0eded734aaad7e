// The far ends of Clarify's phone and chat channels, faked as their documented APIs so a judge
// can answer as a person does there: ntfy (a JSON publish to the server's root; the phone's tap is
// the `http` action's POST, which publishes the option's token to Clarify's reply topic here, and
// Clarify reads that topic's JSON stream, `GET /<topic>/json?since=`) and Slack's Web API (`chat.postMessage` /
// `chat.update`; a button press is a signed `block_actions` interaction sent to Clarify) and
// Telegram's Bot API (`sendMessage`; a press is a `callback_query` update sent to Clarify's webhook).
import crypto from 'node:crypto';
import http from 'node:http';

export const SLACK_SECRET = 'judge-slack-signing-secret';
const TELEGRAM_SECRET = 'judge-telegram-webhook-secret';
const TELEGRAM_CHAT = '-100';

export async function startChannels() {
  const ntfy = [];
  const slack = [];
  const telegram = [];
  // ntfy's reply topics: every message kept with its id, and the streams open on each.
  const topics = new Map();
  const topic = (name) => {
    if (!topics.has(name)) topics.set(name, { messages: [], streams: new Set() });
    return topics.get(name);
  };
  const server = http.createServer((req, res) => {
    const path = new URL(req.url, 'http://x');
    const streamed = /^\/([\w-]+)\/json$/.exec(path.pathname);
    if (req.method === 'GET' && streamed) {
      const { messages, streams } = topic(streamed[1]);
      const since = path.searchParams.get('since') ?? 'all';
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(`${JSON.stringify({ id: 'open', event: 'open', topic: streamed[1] })}\n`);
      const after = since === 'all' ? 0 : messages.findIndex((m) => m.id === since) + 1;
      for (const m of messages.slice(after)) res.write(`${JSON.stringify(m)}\n`);
      streams.add(res);
      req.on('close', () => streams.delete(res));
      return;
    }
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      let body = {};
      try { body = JSON.parse(raw); } catch { /* not JSON */ }
      res.setHeader('content-type', 'application/json');
      if (req.url.startsWith('/slack/')) {
        const method = req.url.slice('/slack/'.length);
        slack.push({ method, body });
        res.end(JSON.stringify({ ok: true, channel: body.channel, ts: `1700000000.${String(slack.length).padStart(6, '0')}` }));
        return;
      }
      if (req.url.startsWith('/telegram/')) {
        const method = req.url.split('/').pop();
        telegram.push({ method, body });
        res.end(JSON.stringify({ ok: true, result: { message_id: 500 + telegram.length, chat: { id: Number(TELEGRAM_CHAT) }, date: 0 } }));
        return;
      }
      const published = /^\/([\w-]+)$/.exec(path.pathname);
      if (published && published[1].startsWith('clarify-r-')) {
        // A tap: the action's body published to the reply topic, as ntfy takes it.
        const { messages, streams } = topic(published[1]);
        const message = { id: `r${messages.length + 1}`, time: Math.floor(Date.now() / 1000), event: 'message',
          topic: published[1], message: raw };
        messages.push(message);
        for (const stream of streams) stream.write(`${JSON.stringify(message)}\n`);
        res.end(JSON.stringify(message));
        return;
      }
      ntfy.push(body);
      res.end(JSON.stringify({ id: `n${ntfy.length}`, event: 'message' }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const root = `http://127.0.0.1:${server.address().port}`;
  return {
    /** `clarify serve` flags that point ntfy and Slack here. */
    serveArgs: ['--notify-ntfy', `${root}/clarify-judge`, '--slack-bot-token', 'xoxb-judge', '--slack-signing-secret', SLACK_SECRET,
      '--slack-channel', 'C0JUDGE', '--slack-api-url', `${root}/slack`,
      '--telegram-bot-token', '123:judge', '--telegram-chat-id', TELEGRAM_CHAT, '--telegram-webhook-secret', TELEGRAM_SECRET,
      '--telegram-api-url', `${root}/telegram`],
    ntfy,
    slack,
    telegram,
    close: () => {
      for (const { streams } of topics.values()) for (const stream of streams) stream.end();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A request with only the headers given (Node's fetch adds browser ones, such as sec-fetch-mode). */
export function plainRequest(url, { method = 'POST', headers = {}, body = '' } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The phone's tap on an ntfy `http` action: its method, URL, headers and body, as the app sends them. */
export function tap(action) {
  if (action.action !== 'http') throw new Error(`not a one-tap action: ${JSON.stringify(action)}`);
  return plainRequest(action.url, { method: action.method ?? 'POST', headers: action.headers ?? {}, body: action.body ?? '' });
}

/** A press of the Slack button whose value is `value`, signed as Slack signs it. */
export function slackPress(base, value, user = 'alice') {
  const payload = { type: 'block_actions', user: { id: 'U1', username: user, name: user },
    actions: [{ action_id: 'answer_0', block_id: 'clarify', value, type: 'button' }], container: { type: 'message' } };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const at = Math.floor(Date.now() / 1000).toString();
  const signature = `v0=${crypto.createHmac('sha256', SLACK_SECRET).update(`v0:${at}:${body}`).digest('hex')}`;
  return plainRequest(`${base}/api/v1/integrations/slack/interactions`, {
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': at, 'x-slack-signature': signature },
    body,
  });
}

/** A press of the Telegram button whose callback_data is `data`, on message `messageId`. */
export function telegramPress(base, data, messageId, user = 'bob') {
  const update = { update_id: Date.now() % 1e9, callback_query: { id: `cq${Date.now()}`, from: { id: 7, username: user }, data,
    message: { message_id: messageId, chat: { id: Number(TELEGRAM_CHAT) } } } };
  return plainRequest(`${base}/api/v1/integrations/telegram/webhook`, {
    headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': TELEGRAM_SECRET },
    body: JSON.stringify(update),
  });
}
