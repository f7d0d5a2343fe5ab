#!/usr/bin/env python3
"""Benchmark: `teamctl send` vs the Node proper-lockfile peer (one message per process), and
`teamctl inbox --json` vs `jq -c '.[]'`, on inboxes of 10, 1,000 and 10,000 entries; then
`teamctl status --json` on a team of 50 members with 1,000 messages in each inbox; then the
latency of `teamctl watch` from the rename that writes a message to the event on its stdout.

Usage: python3 bench/run.py [--runs N]   (needs: cargo, node + `npm ci --prefix tests/peer`, jq)
Prints a Markdown table of median and p90 wall times per command (ms), one process per run.
Every timed run starts from the same inbox bytes (restored outside the timing).
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time, uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "teamctl")
PEER = os.path.join(ROOT, "tests", "peer", "peer.js")


def entry(i):
    return {
        "from": "tester", "text": f"message {i}: the login test fails on CI with a timeout; "
        "can you look at src/auth/session.ts?", "summary": "login test times out",
        "timestamp": "2026-11-29T10:00:00.000Z", "color": "green", "msgV": 1,
        "msg_id": str(uuid.UUID(int=i + 1, version=4)), "type": "message", "read": False,
    }


def timed(cmd, env, restore, runs):
    samples = []
    for _ in range(runs):
        restore()
        t = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.9) - 1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    tmp = tempfile.mkdtemp(prefix="teamctl-bench-")
    try:
        claude = os.path.join(tmp, "claude")
        inboxes = os.path.join(claude, "teams", "bench", "inboxes")
        os.makedirs(inboxes)
        config = {"name": "bench", "leadAgentId": "team-lead@bench", "members": [
            {"agentId": "team-lead@bench", "name": "team-lead"},
            {"agentId": "alice@bench", "name": "alice"}]}
        with open(os.path.join(claude, "teams", "bench", "config.json"), "w") as f:
            json.dump(config, f, indent=2)
        inbox = os.path.join(inboxes, "alice.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TEAMCTL_")}
        env["CLAUDE_CONFIG_DIR"] = claude
        print(f"| entries | file size | teamctl send | node peer append | speed-up | "
              f"teamctl inbox --json | jq -c '.[]' |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for n in (10, 1000, 10000):
            data = json.dumps([entry(i) for i in range(n)], indent=2, ensure_ascii=False)
            def restore():
                with open(inbox, "w") as f:
                    f.write(data)
            send = timed([BIN, "send", "alice", "benchmark message", "--from", "bench"],
                         env, restore, args.runs)
            node = timed(["node", PEER, "append", inbox, "--from", "bench", "--count", "1"],
                         env, restore, args.runs)
            read = timed([BIN, "inbox", "alice", "--json"], env, restore, args.runs)
            jq = timed(["jq", "-c", ".[]", inbox], env, restore, args.runs)
            fmt = lambda m: f"{m[0]:.1f} ms (p90 {m[1]:.1f})"
            print(f"| {n:,} | {len(data) / 1024:,.0f} KiB | {fmt(send)} | {fmt(node)} | "
                  f"{node[0] / send[0]:.0f}x | {fmt(read)} | {fmt(jq)} |")
        status_bench(tmp, env, args.runs)
        watch_bench(claude, inbox, env)
    finally:
        shutil.rmtree(tmp)


def watch_bench(claude, inbox, env, samples=200):
    """Writes a message the way Claude Code does (temp file + rename) and times how long until
    `teamctl watch --json` prints it: one sample at a time, so each is one notification."""
    import select
    with open(inbox, "w") as f:
        f.write("[]")
    proc = subprocess.Popen([BIN, "watch", "alice", "--json", "--event", "message"], env=env,
                            stdout=subprocess.PIPE, bufsize=0)
    out = proc.stdout
    time.sleep(0.5)  # let it take its first snapshot and install the watch (a benchmark, not a test)
    lat = []
    entries = []
    buf = b""
    for i in range(samples):
        entries.append(entry(i))
        tmp = inbox + f".tmp.{i:08x}"
        with open(tmp, "w") as f:
            f.write(json.dumps(entries, indent=2))
        t0 = time.perf_counter()
        os.rename(tmp, inbox)
        while b"\n" not in buf:
            r, _, _ = select.select([out], [], [], 5)
            if not r:
                raise SystemExit("watch printed nothing within 5 s")
            buf += os.read(out.fileno(), 65536)
        lat.append((time.perf_counter() - t0) * 1000)
        buf = buf[buf.index(b"\n") + 1:]
        time.sleep(0.01)
    proc.terminate()
    proc.wait()
    lat.sort()
    print()
    print("| teamctl watch, rename to event printed | p50 | p90 | p99 | max |")
    print("|---|---:|---:|---:|---:|")
    q = lambda p: lat[min(len(lat) - 1, int(len(lat) * p))]
    print(f"| {samples} messages, inotify | {q(0.5):.2f} ms | {q(0.9):.2f} ms | "
          f"{q(0.99):.2f} ms | {lat[-1]:.2f} ms |")


def status_bench(tmp, env, runs):
    claude = os.path.join(tmp, "claude-status")
    team = os.path.join(claude, "teams", "big")
    os.makedirs(os.path.join(team, "inboxes"))
    os.makedirs(os.path.join(claude, "tasks", "big"))
    names = [f"worker-{i}" for i in range(50)]
    members = [{"agentId": "team-lead@big", "name": "team-lead", "agentType": "team-lead"}]
    members += [{"agentId": f"{n}@big", "name": n, "color": "blue", "backendType": "tmux",
                 "tmuxPaneId": f"%{i}", "isActive": False} for i, n in enumerate(names)]
    with open(os.path.join(team, "config.json"), "w") as f:
        json.dump({"name": "big", "leadAgentId": "team-lead@big", "members": members}, f, indent=2)
    for i, n in enumerate(names):
        entries = []
        for j in range(1000):
            e = entry(i * 1000 + j)
            e["from"] = names[(i + j + 1) % 50]
            if j % 10 == 0:
                e["text"] = json.dumps({"type": "idle_notification", "from": e["from"],
                                        "timestamp": e["timestamp"], "idleReason": "available"},
                                       separators=(",", ":"))
            entries.append(e)
        with open(os.path.join(team, "inboxes", f"{n}.json"), "w") as f:
            f.write(json.dumps(entries, indent=2, ensure_ascii=False))
    for t in range(1, 101):
        task = {"id": str(t), "subject": f"task {t}", "description": "", "status": "pending",
                "blocks": [], "blockedBy": [str(t - 1)] if t > 1 else [], "owner": names[t % 50]}
        with open(os.path.join(claude, "tasks", "big", f"{t}.json"), "w") as f:
            json.dump(task, f, indent=2)
    env = dict(env, CLAUDE_CONFIG_DIR=claude)
    m = timed([BIN, "status", "--json"], env, lambda: None, runs)
    size = sum(os.path.getsize(os.path.join(team, "inboxes", f)) for f in os.listdir(
        os.path.join(team, "inboxes")))
    print()
    print("| team | inbox bytes | teamctl status --json |")
    print("|---|---:|---:|")
    print(f"| 50 members x 1,000 messages, 100 tasks | {size / 1048576:.1f} MiB | "
          f"{m[0]:.1f} ms (p90 {m[1]:.1f}) |")


if __name__ == "__main__":
    sys.exit(main())
