// Turns a directory of recorded hook payloads into tests/fixtures/hooks/<agent>-<event>[-<tool>].json,
// with the scratch paths replaced by placeholders so the fixtures do not depend on this machine.
// Usage: node save-payloads.mjs AGENT PAYLOAD_DIR PROJECT_DIR HOME_DIR [SUFFIX]
import fs from 'node:fs';
import path from 'node:path';

const [agent, dir, project, home, suffix = ''] = process.argv.slice(2);
const out = path.resolve(import.meta.dirname, '../../tests/fixtures/hooks');
fs.mkdirSync(out, { recursive: true });
const seen = new Set();
for (const f of fs.readdirSync(dir).filter((n) => /^\d+-[\w-]+\.json$/.test(n)).sort()) {
  let text = fs.readFileSync(path.join(dir, f), 'utf8');
  // Longest first: the project may sit under the scratch home.
  for (const [from, to] of [[project, '/home/user/project'], [home, '/home/user']].sort((a, b) => b[0].length - a[0].length)) {
    text = text.split(from).join(to);
    // Claude Code names transcript folders after the path with '/' turned to '-'.
    text = text.split(from.replaceAll('/', '-')).join(to.replaceAll('/', '-'));
  }
  const p = JSON.parse(text);
  const tool = p.tool_name ? `-${p.tool_name.toLowerCase()}` : '';
  const name = `${agent}-${p.hook_event_name.toLowerCase()}${tool}${suffix}.json`;
  if (seen.has(name)) continue;
  seen.add(name);
  fs.writeFileSync(path.join(out, name), `${JSON.stringify(p, null, 2)}\n`);
  console.log(name);
}
