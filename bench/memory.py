#!/usr/bin/env python3
"""Peak memory of `teamctl redeliver` and `teamctl prepare` against the size of the file each
reads (issue 39: at most 3x), and how long redeliver holds the inboxes' locks.

Generates, in a temp dir (removed after): a team whose misspelt inbox `alise.json` holds
--messages unread messages in Claude Code's layout (200,000: about 68 MB), and a `.claude.json`
of --projects small projects (800,000: about 120 MB). Runs each command once under
`/usr/bin/time -v` (peak RSS: "Maximum resident set size") with a hermetic environment (HOME,
XDG_* and CLAUDE_CONFIG_DIR in the temp dir). While redeliver runs, a thread polls both
inboxes' lock directories (`<inbox>.lock`, proper-lockfile's) every 0.2 ms and reports the
longest time either was seen held: what a Claude Code writer, which gives up after about
0.65 s, would have had to wait.

    cargo build --release
    python3 bench/memory.py [--bin target/release/teamctl] [--messages N] [--projects N]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

TEXT = ("Worker W1 reporting: the build of the parser crate finished, 412 tests passed, "
        "the fuzz corpus grew by 37 cases and the flaky lock test is quarantined; next I "
        "take the export task.")


def inbox_entry(i):
    return {
        "from": "worker",
        "text": f"{TEXT} (#{i})",
        "summary": f"W1 status {i}",
        "timestamp": f"2026-11-29T{10 + i // 3_600_000 % 10}:{i // 60_000 % 60:02d}:"
                     f"{i // 1000 % 60:02d}.{i % 1000:03d}Z",
        "color": "blue",
        "read": False,
    }


def stringify(value):
    """JSON.stringify(value, null, 2)."""
    return json.dumps(value, indent=2, ensure_ascii=False, separators=(",", ": "))


def make_team(root, messages, shape="claude"):
    inboxes = os.path.join(root, "teams", "alpha", "inboxes")
    os.makedirs(inboxes)
    members = [{"agentId": f"{n}@alpha", "name": n, "joinedAt": 1764444600000,
                "tmuxPaneId": "", "cwd": "/tmp", "subscriptions": []}
               for n in ["team-lead", "alice", "worker", "bob"]]
    with open(os.path.join(root, "teams", "alpha", "config.json"), "w") as f:
        f.write(stringify({"name": "alpha", "createdAt": 1764444600000,
                           "leadAgentId": "team-lead@alpha", "members": members}))
    with open(os.path.join(inboxes, "alice.json"), "w") as f:
        f.write("[]")
    path = os.path.join(inboxes, "alise.json")
    with open(path, "w") as f:
        if shape == "compact":
            # Not Claude Code's layout: every entry is laid out again when it moves.
            f.write(json.dumps([inbox_entry(i) for i in range(messages)], ensure_ascii=False,
                               separators=(",", ":")))
            return path
        f.write("[\n")
        for i in range(messages):
            e = inbox_entry(i)
            if shape == "tiny":
                e = {"from": "w", "text": f"{i}", "read": False}
            element = stringify(e).replace("\n", "\n  ")
            f.write(("  " if i == 0 else ",\n  ") + element)
        f.write("\n]")
    return path


def make_claude_json(root, projects):
    path = os.path.join(root, ".claude.json")
    with open(path, "w") as f:
        f.write('{\n  "numStartups": 12,\n  "hasCompletedOnboarding": false,\n  "projects": {')
        for i in range(projects):
            p = {"allowedTools": [], "hasTrustDialogAccepted": False,
                 "projectOnboardingSeenCount": 1, "lastCost": 0.125}
            body = stringify(p).replace("\n", "\n    ")
            f.write(("\n" if i == 0 else ",\n") + f'    "/home/u/work/p{i:07d}": {body}')
        f.write("\n  },\n  \"userID\": \"0123456789abcdef\"\n}")
    return path


def env_for(root):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TEAMCTL_", "XDG_", "CLAUDE_"))}
    home = os.path.join(root, "home")
    os.makedirs(home, exist_ok=True)
    env.update(HOME=home, CLAUDE_CONFIG_DIR=root, XDG_DATA_HOME=os.path.join(home, "data"),
               XDG_STATE_HOME=os.path.join(home, "state"),
               XDG_CONFIG_HOME=os.path.join(home, "config"),
               XDG_CACHE_HOME=os.path.join(home, "cache"), ANTHROPIC_API_KEY="sk-ant-bench-0123456789abcdefghij")
    return env


def peak(cmd, env):
    """(peak RSS in bytes, wall seconds, exit code) of `cmd` under /usr/bin/time -v."""
    start = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    if p.returncode != 0 or not m:
        sys.exit(f"bench: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return int(m.group(1)) * 1024, wall, p.returncode


class LockWatch(threading.Thread):
    """The longest stretch any of `locks` (lock directories) was seen existing."""

    def __init__(self, locks):
        super().__init__(daemon=True)
        self.locks, self.stop, self.longest, self.total = locks, False, 0.0, 0.0

    def run(self):
        since = None
        while not self.stop:
            held = any(os.path.exists(l) for l in self.locks)
            now = time.monotonic()
            if held and since is None:
                since = now
            elif not held and since is not None:
                self.longest = max(self.longest, now - since)
                self.total += now - since
                since = None
            time.sleep(0.0002)
        if since is not None:
            self.longest = max(self.longest, time.monotonic() - since)


def mb(n):
    return f"{n / 1e6:,.1f} MB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release/teamctl")
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--projects", type=int, default=800_000)
    ap.add_argument("--only", choices=["redeliver", "prepare"])
    ap.add_argument("--shape", choices=["claude", "compact", "tiny"], default="claude",
                    help="the inbox: Claude Code's layout (default), compact JSON (another "
                         "layout), or tiny messages in Claude Code's layout")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    rows = []
    with tempfile.TemporaryDirectory(prefix="teamctl-mem-") as tmp:
        if args.only in (None, "redeliver"):
            root = os.path.join(tmp, "r")
            source = make_team(root, args.messages, args.shape)
            size = os.path.getsize(source)
            env = env_for(root)
            inboxes = os.path.dirname(source)
            watch = LockWatch([os.path.join(inboxes, n + ".lock")
                               for n in ("alise.json", "alice.json")])
            watch.start()
            rss, wall, _ = peak([binary, "--team", "alpha", "redeliver", "alise", "--json"], env)
            watch.stop = True
            watch.join()
            moved = len(json.load(open(os.path.join(inboxes, "alice.json"))))
            if moved != args.messages:
                sys.exit(f"bench: alice.json holds {moved} messages, not {args.messages}")
            shape = "" if args.shape == "claude" else f" ({args.shape})"
            rows.append(("redeliver --json", f"alise.json, {args.messages:,} messages{shape}", size,
                         rss, wall, f"{watch.longest * 1000:,.0f} ms"))
        if args.only in (None, "prepare"):
            root = os.path.join(tmp, "p")
            os.makedirs(root)
            cj = make_claude_json(root, args.projects)
            size = os.path.getsize(cj)
            work = os.path.join(tmp, "work")
            os.makedirs(work, exist_ok=True)
            rss, wall, _ = peak([binary, "prepare", "--cwd", work], env_for(root))
            rows.append(("prepare --cwd DIR", f".claude.json, {args.projects:,} projects", size,
                         rss, wall, "-"))
    print("| command | file read | its size | peak memory | x the file | time | longest lock held |")
    print("|---|---|---|---|---|---|---|")
    for cmd, what, size, rss, wall, lock in rows:
        print(f"| `{cmd}` | {what} | {mb(size)} | {mb(rss)} | {rss / size:.2f}x | {wall:.2f} s | {lock} |")


if __name__ == "__main__":
    main()
