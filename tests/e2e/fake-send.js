#!/usr/bin/env node
'use strict';
// Stand-in for `teamctl send`, so the e2e harness can be exercised without
// the Rust binary. Same command line:
//
//   fake-send.js --claude-dir DIR --team TEAM send TO "TEXT" --from NAME [--summary S]
//
// Appends one entry to DIR/teams/TEAM/inboxes/TO.json the way a compatible
// writer must (shared/spec/claude-code-files.md, "What a compatible writer must
// do", item 4): mkdir -p inboxes, create `[]` with O_EXCL, lock
// `<inbox>.json.lock` (a directory), re-read, append, write
// `<inbox>.json.tmp.<8hex>` + rename, rmdir the lock.
// Prints the new entry's msg_id as JSON on stdout.

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { lockedJsonUpdate } = require('./lockfile');

function usage(msg) {
  process.stderr.write(`fake-send: ${msg}\n` +
    'usage: fake-send.js --claude-dir DIR --team TEAM send TO TEXT --from NAME [--summary S]\n');
  process.exit(2);
}

const opts = {};
const positional = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--claude-dir' || a === '--team' || a === '--from' || a === '--summary') {
    if (i + 1 >= argv.length) usage(`${a} needs a value`);
    opts[a.slice(2)] = argv[++i];
  } else if (a.startsWith('--')) {
    usage(`unknown option ${a}`);
  } else {
    positional.push(a);
  }
}
if (positional[0] !== 'send' || positional.length !== 3) usage('expected: send TO TEXT');
const [, to, text] = positional;
const claudeDir = opts['claude-dir'] || process.env.CLAUDE_CONFIG_DIR;
if (!claudeDir) usage('--claude-dir is required');
if (!opts.team || !/^[a-z0-9-]+$/.test(opts.team)) usage('--team must match ^[a-z0-9-]+$');
const from = opts.from || 'teamctl';
const keep = (s) => s.replace(/[^A-Za-z0-9_-]/g, '-');

const teamDir = path.join(claudeDir, 'teams', opts.team);
if (!fs.existsSync(path.join(teamDir, 'config.json'))) {
  process.stderr.write(`fake-send: team ${opts.team} does not exist (${teamDir}/config.json)\n`);
  process.exit(1);
}
const inboxDir = path.join(claudeDir, 'teams', keep(opts.team), 'inboxes');
fs.mkdirSync(inboxDir, { recursive: true });
const inbox = path.join(inboxDir, `${keep(to)}.json`);
try {
  fs.writeFileSync(inbox, '[]', { flag: 'wx' });
} catch (e) {
  if (e.code !== 'EEXIST') throw e;
}

// A short preview, as SendMessage's `summary` would be (5-10 words, <= 200 chars).
const summary = opts.summary !== undefined
  ? opts.summary
  : `message from ${from}`;

const entry = {
  from,
  text,
  summary,
  timestamp: new Date().toISOString(),
  msgV: 1,
  msg_id: crypto.randomUUID(),
  type: 'message',
  read: false,
};

try {
  lockedJsonUpdate(inbox, (arr) => {
    const list = Array.isArray(arr) ? arr : [];
    list.push(entry);
    return list;
  }, () => []);
} catch (e) {
  process.stderr.write(`fake-send: ${e.message}\n`);
  process.exit(1);
}
process.stdout.write(JSON.stringify({ sent: true, to, msg_id: entry.msg_id }) + '\n');
