'use strict';
// Minimal re-implementation of the on-disk lock protocol Claude Code uses
// (proper-lockfile: a lock *directory* `<file>.lock`, stale after 10 s,
// retries 5,10,20,40,80,100,100,100,100,100 ms). See
// shared/spec/claude-code-files.md §3. No dependencies.
//
// Used by fake-send.js (the stand-in for `teamctl send`) and by e2e.js when it
// updates config.json. Critical sections here last a few ms, so the lock's
// mtime is never refreshed.

const fs = require('fs');
const crypto = require('crypto');

const STALE_MS = 10000;
const BACKOFF_MS = [5, 10, 20, 40, 80, 100, 100, 100, 100, 100];

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// Try once. Returns true when the lock is held, false when someone else holds it.
function tryMkdir(lockDir) {
  try {
    fs.mkdirSync(lockDir); // not recursive: the parent must exist
  } catch (e) {
    if (e.code !== 'EEXIST') throw e;
    let st;
    try {
      st = fs.statSync(lockDir);
    } catch (e2) {
      if (e2.code === 'ENOENT') return tryMkdirNoStale(lockDir); // released meanwhile
      throw e2;
    }
    if (st.mtimeMs < Date.now() - STALE_MS) {
      try { fs.rmdirSync(lockDir); } catch (e3) { if (e3.code !== 'ENOENT') throw e3; }
      return tryMkdirNoStale(lockDir);
    }
    return false;
  }
  // Same mtime trick as proper-lockfile: up to 1 s in the future.
  const t = new Date(Math.ceil(Date.now() / 1000) * 1000 + 5);
  try { fs.utimesSync(lockDir, t, t); } catch (_) { /* harmless */ }
  return true;
}

function tryMkdirNoStale(lockDir) {
  try {
    fs.mkdirSync(lockDir);
    return true;
  } catch (e) {
    if (e.code === 'EEXIST') return false;
    throw e;
  }
}

// Acquire `<lockDir>` with the inbox/config backoff. Throws ELOCKED on failure.
function acquire(lockDir) {
  for (let attempt = 0; ; attempt++) {
    if (tryMkdir(lockDir)) return;
    if (attempt >= BACKOFF_MS.length) {
      const err = new Error(`lock ${lockDir} is held by someone else`);
      err.code = 'ELOCKED';
      throw err;
    }
    sleepSync(BACKOFF_MS[attempt]);
  }
}

function release(lockDir) {
  try { fs.rmdirSync(lockDir); } catch (e) { if (e.code !== 'ENOENT') throw e; }
}

// Write `content` to `file` atomically: `<file>.tmp.<8 hex>` (O_EXCL) + rename.
function atomicWrite(file, content) {
  const tmp = `${file}.tmp.${crypto.randomBytes(4).toString('hex')}`;
  try {
    fs.writeFileSync(tmp, content, { flag: 'wx' });
    fs.renameSync(tmp, file);
  } catch (e) {
    try { fs.unlinkSync(tmp); } catch (_) { /* ignore */ }
    throw e;
  }
}

// Lock `<file>.lock`, re-read `file` as JSON, let `mutate` change it, write it
// back pretty-printed (2 spaces, no trailing newline), unlock.
// `fallback` is used when the file does not parse (Claude Code does the same for inboxes).
function lockedJsonUpdate(file, mutate, fallback) {
  const lockDir = `${file}.lock`;
  acquire(lockDir);
  const onSignal = () => { release(lockDir); process.exit(130); };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    let value;
    try {
      value = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      if (fallback === undefined) throw e;
      value = fallback();
    }
    const out = mutate(value);
    if (out === false) return value;
    const next = out === undefined ? value : out;
    atomicWrite(file, JSON.stringify(next, null, 2));
    return next;
  } finally {
    release(lockDir);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

module.exports = { acquire, release, atomicWrite, lockedJsonUpdate };
