#!/usr/bin/env python3
"""Did a change change what teamctl says? Runs the same read-only commands with two teamctl
binaries, each on its own copy of one Claude config dir, and prints what differs.

For `--json` output it names every key removed and every value changed, and lists the keys
added apart (a new key is how a feature grows; a removed or changed one breaks a script). For
human output, stderr and exit codes it shows the difference. Exit 1 when a JSON key was removed
or changed, or an exit code differs; 0 otherwise.

Usage: scripts/compare.py OLD_BIN NEW_BIN CONFIG_DIR [--member NAME ...]
Example, against the last release build, on the example team:
    scripts/compare.py /tmp/teamctl-old target/release/teamctl examples/claude \\
        --member team-lead --member researcher
Nothing outside the temp copies is written: HOME, the data dir and CLAUDE_CONFIG_DIR point into
them, and every TEAMCTL_, OTEL_ and CLAUDE_ variable of this shell is left out.
"""
import argparse, difflib, json, os, re, shutil, subprocess, sys, tempfile

COMMANDS = [
    ["status"], ["status", "--json"], ["inbox", "--all"], ["inbox", "--all", "--json"],
    ["tasks"], ["tasks", "--json"], ["pending"], ["pending", "--json"],
    ["doctor"], ["doctor", "--json"], ["top", "--once"], ["top", "--once", "--json"],
    ["--version"], ["send", "--help"], ["bogus"], ["send"], ["inbox", "nobody"],
    ["status", "--team", "nope"], ["status", "--json", "--team", "nope"],
]


def run(binary, args, config_dir):
    """One command on a fresh copy of the config dir; its exit code, stdout and stderr, with the
    temp dir's path replaced by <T>."""
    tmp = tempfile.mkdtemp(prefix="teamctl-compare-")
    try:
        shutil.copytree(config_dir, os.path.join(tmp, "claude"), symlinks=True)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TEAMCTL_", "OTEL_", "CLAUDE_"))}
        env.update(HOME=tmp, XDG_DATA_HOME=os.path.join(tmp, "data"),
                   TEAMCTL_DATA_DIR=os.path.join(tmp, "data", "teamctl"),
                   CLAUDE_CONFIG_DIR=os.path.join(tmp, "claude"), NO_COLOR="1", TZ="UTC",
                   COLUMNS="100")
        p = subprocess.run([os.path.abspath(binary)] + args, env=env, capture_output=True,
                           text=True, cwd=tmp, timeout=60)
        return p.returncode, p.stdout.replace(tmp, "<T>"), p.stderr.replace(tmp, "<T>")
    finally:
        shutil.rmtree(tmp)


def documents(text):
    """One JSON document, or JSON Lines; None when it is neither."""
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError:
        return None


def walk(old, new, path, found):
    """Collects removed, changed and added paths between two JSON values."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                found["removed"].append(f"{path}.{key}")
            else:
                walk(old[key], new[key], f"{path}.{key}", found)
        found["added"].update(f"{path}.{key}" for key in new if key not in old)
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            found["changed"].append(f"{path}: {len(old)} items -> {len(new)}")
        for i, (a, b) in enumerate(zip(old, new)):
            walk(a, b, f"{path}[{i}]", found)
    elif old != new:
        found["changed"].append(f"{path}: {old!r} -> {new!r}")


def compare(args, old, new):
    """What differs for one command, and whether it breaks a script."""
    (code_a, out_a, err_a), (code_b, out_b, err_b) = old, new
    lines, breaking = [], code_a != code_b
    if code_a != code_b:
        lines.append(f"exit {code_a} -> {code_b}")
    a, b = (documents(out_a), documents(out_b)) if "--json" in args else (None, None)
    if a is not None and b is not None:
        found = {"removed": [], "changed": [], "added": set()}
        walk(a, b, "", found)
        breaking |= bool(found["removed"] or found["changed"])
        if found["removed"]:
            lines.append("REMOVED " + ", ".join(found["removed"][:10]))
        if found["changed"]:
            lines.append("CHANGED " + "; ".join(found["changed"][:10]))
        if found["added"]:
            keys = sorted({re.sub(r"\[\d+\]", "[]", k) for k in found["added"]})
            lines.append("added " + ", ".join(keys))
    elif out_a != out_b:
        diff = difflib.unified_diff(out_a.splitlines(), out_b.splitlines(), lineterm="", n=0)
        lines += ["stdout:"] + ["  " + line for line in list(diff)[2:30]]
    if err_a != err_b:
        diff = difflib.unified_diff(err_a.splitlines(), err_b.splitlines(), lineterm="", n=0)
        lines += ["stderr:"] + ["  " + line for line in list(diff)[2:12]]
    return lines, breaking


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("config_dir")
    ap.add_argument("--member", action="append", default=[],
                    help="also compare `log MEMBER` and `inbox MEMBER --json` (repeatable)")
    opts = ap.parse_args()
    commands = COMMANDS + [c for m in opts.member
                           for c in (["log", m], ["log", m, "--json"], ["inbox", m, "--json"])]
    broken = False
    for args in commands:
        lines, breaking = compare(args, run(opts.old, args, opts.config_dir),
                                  run(opts.new, args, opts.config_dir))
        broken |= breaking
        print(("!= " if lines else "== ") + " ".join(args))
        for line in lines:
            print("    " + line)
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
