#!/usr/bin/env node
// Test peer for teamctl: reads and writes a Claude Code inbox file exactly the
// way Claude Code 2.1.332 does (see /work/shared/spec/claude-code-files.md
// sections 2-4). CommonJS, Node 20, only dependency: proper-lockfile 4.1.2.
"use strict";

const crypto = require("crypto");
const fs = require("fs");
const fsp = require("fs/promises");
const path = require("path");
const lockfile = require("proper-lockfile");

const USAGE = `usage:
  node peer.js append  <inbox.json> --from NAME --count N [--prefix TEXT] [--at EPOCH_MS]
  node peer.js consume <inbox.json> --stop-file PATH [--interval MS]
  node peer.js hold    <inbox.json> --ms N
  node peer.js check   <inbox.json>
  node peer.js task-add <tasks-dir> --count N [--prefix TEXT]
  node peer.js config-edit <.claude.json> --count N [--key NAME] [--hold MS] [--fallback-ms MS] [--when-held POLL_MS]
`;

// Claude Code's inbox lock: lock dir is the literal string inbox + ".lock",
// realpath default (true), stale default (10000 ms).
function lockOptions(inbox) {
  return {
    lockfilePath: inbox + ".lock",
    retries: { retries: 10, minTimeout: 5, maxTimeout: 100 },
  };
}

// ---------------------------------------------------------------- output

function writeStream(stream, text) {
  return new Promise((resolve, reject) =>
    stream.write(text, (err) => (err ? reject(err) : resolve()))
  );
}
const emit = (obj) => writeStream(process.stdout, JSON.stringify(obj) + "\n");
const logErr = (obj) => writeStream(process.stderr, JSON.stringify(obj) + "\n");

class UsageError extends Error {}
class FatalError extends Error {}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- args

function parseArgs(argv, spec) {
  // spec: { "--flag": "required" | "optional" }
  const [inbox, ...rest] = argv;
  if (!inbox || inbox.startsWith("--")) throw new UsageError("missing <inbox.json>");
  const flags = {};
  for (let i = 0; i < rest.length; i += 2) {
    const name = rest[i];
    if (!(name in spec)) throw new UsageError(`unknown argument: ${name}`);
    if (name in flags) throw new UsageError(`duplicate flag: ${name}`);
    if (i + 1 >= rest.length || rest[i + 1] in spec) throw new UsageError(`missing value for ${name}`);
    flags[name] = rest[i + 1];
  }
  for (const [name, kind] of Object.entries(spec)) {
    if (kind === "required" && !(name in flags)) throw new UsageError(`missing ${name}`);
  }
  return { inbox, flags };
}

function intArg(flags, name, dflt) {
  if (!(name in flags)) return dflt;
  const v = flags[name];
  if (!/^\d+$/.test(v)) throw new UsageError(`${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

// ---------------------------------------------------------------- file helpers

// Read + parse the inbox. Refuses (FatalError) on bad JSON or a non-array,
// instead of treating it as [] and overwriting like Claude Code would.
async function readInbox(inbox) {
  const raw = await fsp.readFile(inbox, "utf8");
  let arr;
  try {
    arr = JSON.parse(raw);
  } catch (e) {
    throw new FatalError(`${inbox}: cannot parse inbox: ${e.message}`);
  }
  if (!Array.isArray(arr)) throw new FatalError(`${inbox}: inbox is not a JSON array`);
  return arr;
}

// Claude Code 2.1.332 atomicWrite: temp file in the same folder, wx, rename.
async function atomicWrite(file, data) {
  const tmp = file + ".tmp." + crypto.randomBytes(4).toString("hex");
  try {
    await fsp.writeFile(tmp, data, { flag: "wx" });
    await fsp.rename(tmp, file);
  } catch (e) {
    await fsp.unlink(tmp).catch(() => {});
    throw e;
  }
}

const serialize = (arr) => JSON.stringify(arr, null, 2);

// Run fn while holding the inbox lock. Returns fn's result.
async function withLock(inbox, fn) {
  const release = await lockfile.lock(inbox, lockOptions(inbox));
  try {
    return await fn();
  } finally {
    await release();
  }
}

// ---------------------------------------------------------------- append

async function appendOne(inbox, msg) {
  await fsp.mkdir(path.dirname(inbox), { recursive: true });
  try {
    await fsp.writeFile(inbox, "[]", { flag: "wx" });
  } catch (e) {
    if (e.code !== "EEXIST") throw e;
  }
  await withLock(inbox, async () => {
    const arr = await readInbox(inbox);
    arr.push(msg);
    await atomicWrite(inbox, serialize(arr));
  });
}

async function cmdAppend(argv) {
  const { inbox, flags } = parseArgs(argv, {
    "--from": "required",
    "--count": "required",
    "--prefix": "optional",
    "--at": "optional",
  });
  const count = intArg(flags, "--count");
  const from = flags["--from"];
  const prefix = flags["--prefix"] ?? `peer-${process.pid}-`;
  // --at: start the first write at this wall-clock time (ms since the epoch), so writers
  // started by a test (Node takes far longer to start than teamctl) try the lock together.
  const at = intArg(flags, "--at", 0);
  if (at > Date.now()) await sleep(at - Date.now());

  for (let i = 1; i <= count; i++) {
    const text = `${prefix}${i}`;
    // One message object per logical message: a retry re-sends the same one.
    const msg = {
      from,
      text,
      summary: "peer message",
      timestamp: new Date().toISOString(),
      msgV: 1,
      msg_id: crypto.randomUUID(),
      type: "message",
      read: false,
    };
    for (;;) {
      try {
        await appendOne(inbox, msg);
        break;
      } catch (e) {
        // Claude Code would drop the message here; the peer retries instead.
        if (e.code !== "ELOCKED") throw e;
        await logErr({ event: "lock_retry" });
      }
    }
    await emit({ event: "appended", msg_id: msg.msg_id, text });
  }
}

// ---------------------------------------------------------------- consume

const entryKey = (m) => `${m.from}|${m.timestamp}|${m.text}`;

// One poll. Returns the number of unread entries seen in the unlocked read.
async function consumeOnce(inbox) {
  // Unlocked read, like Claude Code's readUnreadMessages.
  // Writers rename into place, so a parse error here means a broken inbox:
  // readInbox reports it and the peer exits 1.
  let arr;
  try {
    arr = await readInbox(inbox);
  } catch (e) {
    if (e.code === "ENOENT") return 0; // not there yet
    throw e;
  }
  const delivered = arr.filter((m) => m && m.read !== true);
  if (delivered.length === 0) return 0;

  let removed;
  try {
    removed = await withLock(inbox, async () => {
      const current = await readInbox(inbox);
      // Multiset of delivered keys: each delivered entry removes one match.
      const pending = new Map();
      for (const m of delivered) pending.set(entryKey(m), (pending.get(entryKey(m)) || 0) + 1);
      const keep = [];
      const gone = [];
      for (const m of current) {
        if (m && m.read === true) continue; // drop read:true leftovers (not reported)
        const k = m && entryKey(m);
        if (m && pending.get(k) > 0) {
          pending.set(k, pending.get(k) - 1);
          gone.push(m);
        } else {
          keep.push(m);
        }
      }
      if (gone.length > 0 || keep.length !== current.length) {
        await atomicWrite(inbox, serialize(keep));
      }
      return gone;
    });
  } catch (e) {
    if (e.code === "ELOCKED") {
      await logErr({ event: "lock_retry" });
      return delivered.length;
    }
    if (e.code === "ENOENT") return delivered.length; // removed under us; look again
    throw e;
  }
  for (const entry of removed) await emit({ event: "consumed", entry });
  return delivered.length;
}

async function cmdConsume(argv) {
  const { inbox, flags } = parseArgs(argv, {
    "--stop-file": "required",
    "--interval": "optional",
  });
  const stopFile = flags["--stop-file"];
  const interval = intArg(flags, "--interval", 5);

  for (;;) {
    // Check the stop file BEFORE the pass, so the pass that ends the loop
    // starts after the stop file was seen.
    const stopSeen = fs.existsSync(stopFile);
    const unread = await consumeOnce(inbox);
    if (stopSeen && unread === 0) return;
    await sleep(interval);
  }
}

// ---------------------------------------------------------------- hold / check

async function cmdHold(argv) {
  const { inbox, flags } = parseArgs(argv, { "--ms": "required" });
  const ms = intArg(flags, "--ms");
  let release;
  try {
    release = await lockfile.lock(inbox, lockOptions(inbox));
  } catch (e) {
    await emit({ event: "lock_failed", code: e.code || String(e.message) });
    return 3;
  }
  await emit({ event: "locked" });
  await sleep(ms);
  await release();
  await emit({ event: "released" });
  return 0;
}

async function cmdCheck(argv) {
  const { inbox } = parseArgs(argv, {});
  const locked = await lockfile.check(inbox, { lockfilePath: inbox + ".lock" });
  await emit({ event: "check", locked });
}

// ---------------------------------------------------------------- tasks

// Claude Code's createTask (spec section 7.3): list lock on the anchor file
// <dir>/.lock (lock dir: realpath(.lock) + ".lock", 30 retries), next id =
// max(numeric *.json, .highwatermark) + 1, task written in Claude Code's key
// order. A lock failure is retried (Claude Code would report it) so every task
// is created. Prints {"event":"task_added","id","subject"} per task.
async function cmdTaskAdd(argv) {
  const { inbox: dir, flags } = parseArgs(argv, { "--count": "required", "--prefix": "optional" });
  const count = intArg(flags, "--count");
  const prefix = flags["--prefix"] ?? `peer-${process.pid}-`;
  await fsp.mkdir(dir, { recursive: true });
  const anchor = path.join(dir, ".lock");
  try {
    await fsp.writeFile(anchor, "", { flag: "wx" });
  } catch (e) {
    if (e.code !== "EEXIST") throw e;
  }
  for (let i = 1; i <= count; i++) {
    for (;;) {
      let release;
      try {
        release = await lockfile.lock(anchor, { retries: { retries: 30, minTimeout: 5, maxTimeout: 100 } });
      } catch (e) {
        if (e.code !== "ELOCKED") throw e;
        await logErr({ event: "lock_retry" });
        continue;
      }
      try {
        let max = 0;
        try {
          max = parseInt(await fsp.readFile(path.join(dir, ".highwatermark"), "utf8"), 10) || 0;
        } catch (e) {
          if (e.code !== "ENOENT") throw e;
        }
        for (const f of await fsp.readdir(dir)) {
          if (f.endsWith(".json")) max = Math.max(max, parseInt(f, 10) || 0);
        }
        const id = String(max + 1);
        const subject = `${prefix}${i}`;
        const task = { id, subject, description: subject, status: "pending", blocks: [], blockedBy: [] };
        await fsp.writeFile(path.join(dir, `${id}.json`), JSON.stringify(task, null, 2));
        await emit({ event: "task_added", id, subject });
      } finally {
        await release();
      }
      break;
    }
  }
  return 0;
}

// ---------------------------------------------------------------- config

// Claude Code 2.1.332's saveConfigWithLock for .claude.json: the lock directory is the literal
// path + ".lock" (realpath default), taken with no retries by proper-lockfile itself; on ELOCKED
// Claude Code waits 200, 400, 800, 1600, 3200, 4000 ms (each times 1 + a random fraction) and
// tries again, then gives up. Under the lock: re-read, change, JSON.stringify(c, null, 2),
// written atomically with mode 0600. Each edit adds 1 to the number at --key (default
// "peerEdits"), holding the lock --hold ms (default 0) before writing. A lock wait is logged
// to stderr as {"event":"lock_retry"}; giving up is exit 3. stdout: {"event":"edited","n"}.
const CONFIG_RETRY_MS = [200, 400, 800, 1600, 3200, 4000];

// With --fallback-ms, a held lock is answered as 2.1.332 was seen to answer it at start-up
// (strace): read the file at once, and MS later write the change from that copy without the lock
// ({"event":"unlocked_write"} on stdout), dropping whatever the lock holder wrote meanwhile.
// With --when-held POLL_MS, each edit first waits (polling) until someone holds the lock.
async function cmdConfigEdit(argv) {
  const { inbox: file, flags } = parseArgs(argv, {
    "--count": "required", "--key": "optional", "--hold": "optional", "--fallback-ms": "optional",
    "--when-held": "optional",
  });
  const poll = "--when-held" in flags ? intArg(flags, "--when-held") : null;
  const count = intArg(flags, "--count");
  const hold = intArg(flags, "--hold", 0);
  const fallback = "--fallback-ms" in flags ? intArg(flags, "--fallback-ms") : null;
  const key = flags["--key"] ?? "peerEdits";
  const writeConfig = async (cfg) => {
    const tmp = `${file}.tmp.${process.pid}.${Date.now()}`;
    await fsp.writeFile(tmp, JSON.stringify(cfg, null, 2), { encoding: "utf-8", mode: 0o600, flag: "wx" });
    await fsp.rename(tmp, file);
  };
  for (let i = 1; i <= count; i++) {
    let release;
    if (poll !== null) await emit({ event: "waiting" });
    while (poll !== null && !fs.existsSync(file + ".lock")) await sleep(poll);
    for (let attempt = 0; ; attempt++) {
      try {
        release = await lockfile.lock(file, { lockfilePath: file + ".lock" });
        break;
      } catch (e) {
        if (e.code !== "ELOCKED") throw e;
        if (fallback !== null) {
          const cfg = JSON.parse(await fsp.readFile(file, "utf8"));
          cfg[key] = (typeof cfg[key] === "number" ? cfg[key] : 0) + 1;
          await sleep(fallback);
          await writeConfig(cfg);
          await emit({ event: "unlocked_write", n: cfg[key] });
          break;
        }
        if (attempt >= CONFIG_RETRY_MS.length) {
          await emit({ event: "lock_failed", code: e.code });
          return 3;
        }
        await logErr({ event: "lock_retry" });
        await sleep(CONFIG_RETRY_MS[attempt] * (1 + Math.random()));
      }
    }
    if (!release) continue;
    try {
      const raw = await fsp.readFile(file, "utf8");
      let cfg;
      try {
        cfg = JSON.parse(raw);
      } catch (e) {
        throw new FatalError(`${file}: cannot parse: ${e.message}`);
      }
      cfg[key] = (typeof cfg[key] === "number" ? cfg[key] : 0) + 1;
      if (hold) await sleep(hold);
      await writeConfig(cfg);
      await emit({ event: "edited", n: cfg[key] });
    } finally {
      await release();
    }
  }
  return 0;
}

// ---------------------------------------------------------------- main

const COMMANDS = {
  append: cmdAppend,
  consume: cmdConsume,
  hold: cmdHold,
  check: cmdCheck,
  "task-add": cmdTaskAdd,
  "config-edit": cmdConfigEdit,
};

async function main() {
  const [cmd, ...argv] = process.argv.slice(2);
  try {
    if (!Object.hasOwn(COMMANDS, cmd || "")) throw new UsageError(cmd ? `unknown subcommand: ${cmd}` : "missing subcommand");
    const code = await COMMANDS[cmd](argv);
    process.exitCode = code || 0;
  } catch (e) {
    if (e instanceof UsageError) {
      await writeStream(process.stderr, `peer.js: ${e.message}\n${USAGE}`);
      process.exitCode = 2;
    } else {
      await writeStream(process.stderr, `peer.js: ${e instanceof FatalError ? e.message : e.stack || e}\n`);
      process.exitCode = 1;
    }
  }
}

main();
