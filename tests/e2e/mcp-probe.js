#!/usr/bin/env node
'use strict';
// A tiny stdio MCP server (JSON-RPC 2.0, one message a line) for runtime-e2e.js: it offers one
// tool per variable it is told to look at, whose name says whether that variable holds the
// value expected, so that a request's `tools` list shows both that the client started this
// server (a team file's `mcp_config`) and what reached the teammate's environment, without a
// value itself going anywhere:
//
//   node mcp-probe.js <VARIABLE> <sha256 of the value expected> [<VARIABLE> <sha256> …]
//
// offers `<variable>_ok` (the name in lower case) when sha256($VARIABLE) is that digest, else
// `<variable>_unset` or `<variable>_wrong`. No dependencies.

const crypto = require('crypto');
const readline = require('readline');

const pairs = process.argv.slice(2);
const tools = [];
for (let i = 0; i + 1 < pairs.length; i += 2) {
  const [name, digest] = [pairs[i], pairs[i + 1]];
  const value = process.env[name];
  const state = value === undefined ? 'unset'
    : crypto.createHash('sha256').update(value).digest('hex') === digest ? 'ok' : 'wrong';
  tools.push({
    name: `${name.toLowerCase()}_${state}`,
    description: `Whether ${name} reached this server (${state}).`,
    inputSchema: { type: 'object', properties: {} },
  });
}

const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch (_) { return; }
  if (m.id === undefined) return; // a notification
  switch (m.method) {
    case 'initialize':
      send({ id: m.id, result: {
        protocolVersion: (m.params && m.params.protocolVersion) || '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'probe', version: '1.0.0' },
      } });
      break;
    case 'tools/list':
      send({ id: m.id, result: { tools } });
      break;
    case 'tools/call':
      send({ id: m.id, result: { content: [{ type: 'text', text: (m.params && m.params.name) || '' }] } });
      break;
    case 'ping':
      send({ id: m.id, result: {} });
      break;
    default:
      send({ id: m.id, error: { code: -32601, message: `no method ${m.method}` } });
  }
});
