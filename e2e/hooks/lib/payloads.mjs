// Reads the payloads a recording hook wrote (one JSON file each, named so they sort by time).
import fs from 'node:fs';
import path from 'node:path';

export function readPayloads(dir) {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d+-\d+\.json$/.test(f))
    .sort((a, b) => (BigInt(a.split('-')[0]) < BigInt(b.split('-')[0]) ? -1 : 1))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')));
}

export function summary(payloads) {
  return payloads.map((p) => `${p.hook_event_name}${p.tool_name ? `:${p.tool_name}` : ''}`).join(' ');
}
