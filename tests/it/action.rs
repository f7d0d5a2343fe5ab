//! The GitHub Action (action.yml, scripts/action/teamctl-action.sh), run here the way the
//! runner runs a composite action: each `run:` step in bash with its `env:` (the expressions
//! filled in from the inputs and the earlier steps' outputs), a fresh GITHUB_OUTPUT and
//! GITHUB_STEP_SUMMARY per step, later steps skipped after a failure unless `always()`. With a
//! stub teamctl: inputs reach teamctl exactly and are never code, bad inputs are one-line usage
//! errors, outputs survive any text, run's exit code passes through. How Claude Code and
//! teamctl are installed (a version published only as a native package, a release binary and
//! its checksum): action_install.rs. With the real Claude Code offline: action_real.rs.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;

pub(crate) fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn yaml(file: &Path) -> Value {
    let text = fs::read_to_string(file).unwrap();
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

fn action() -> Value {
    yaml(&root().join("action.yml"))
}

pub(crate) fn write_exe(path: &Path, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, body).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A GITHUB_OUTPUT file's `name=value` and `name<<DELIM … DELIM` entries, as the runner reads
/// them.
fn parse_outputs(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.split('\n');
    while let Some(line) = lines.next() {
        if line.is_empty() {
            continue;
        }
        if let Some((name, delim)) = line.split_once("<<") {
            let mut value = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                value.push(l);
            }
            out.insert(name.to_string(), value.join("\n"));
        } else {
            let (name, value) = line.split_once('=').expect("name=value");
            out.insert(name.to_string(), value.to_string());
        }
    }
    out
}

/// What a run of the action did.
#[derive(Debug)]
pub(crate) struct ActionRun {
    /// The exit code of the first step that failed, else 0.
    pub(crate) code: i32,
    /// Each step's stderr, by step id (or name).
    pub(crate) stderr: BTreeMap<String, String>,
    /// The action's outputs, as its `outputs:` section maps them.
    pub(crate) outputs: BTreeMap<String, String>,
    /// Every step's job summary, in order.
    pub(crate) summary: String,
    /// Each step's outputs, by step id (or name).
    pub(crate) steps: BTreeMap<String, BTreeMap<String, String>>,
    /// The files the record's upload step would upload (None: it would not run).
    pub(crate) upload: Option<Vec<String>>,
    /// The file the page's upload step would upload unzipped (None: it would not run).
    pub(crate) page: Option<String>,
}

/// One run of the action: a temp root holding RUNNER_TEMP, the workspace and HOME.
pub(crate) struct Runner {
    pub(crate) dir: TempDir,
    pub(crate) env: Vec<(String, String)>,
}

impl Runner {
    pub(crate) fn new() -> Runner {
        let dir = tempfile::tempdir().unwrap();
        let r = fs::canonicalize(dir.path()).unwrap();
        for d in ["runner", "workspace", "home", "tmp"] {
            fs::create_dir_all(r.join(d)).unwrap();
        }
        let env = vec![
            ("PATH".into(), std::env::var("PATH").unwrap()),
            ("LANG".into(), "C.UTF-8".into()),
            ("HOME".into(), r.join("home").display().to_string()),
            ("TMPDIR".into(), r.join("tmp").display().to_string()),
            ("RUNNER_TEMP".into(), r.join("runner").display().to_string()),
            (
                "GITHUB_WORKSPACE".into(),
                r.join("workspace").display().to_string(),
            ),
            ("GITHUB_ACTION_PATH".into(), root().display().to_string()),
            // No test reaches a registry: an npm call that slipped through fails at once.
            ("npm_config_registry".into(), "http://127.0.0.1:9/".into()),
        ];
        Runner { dir, env }
    }

    pub(crate) fn path(&self) -> PathBuf {
        fs::canonicalize(self.dir.path()).unwrap()
    }

    pub(crate) fn workspace(&self) -> PathBuf {
        self.path().join("workspace")
    }

    pub(crate) fn set(&mut self, k: &str, v: impl Into<String>) {
        self.env.retain(|(name, _)| name != k);
        self.env.push((k.into(), v.into()));
    }

    /// Puts `dir` first on PATH.
    pub(crate) fn path_first(&mut self, dir: &Path) {
        let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap());
        self.set("PATH", path);
    }

    /// Runs action.yml's steps with these inputs (the others at their defaults).
    pub(crate) fn run(&self, inputs: &[(&str, &str)]) -> ActionRun {
        let action = action();
        let mut given: BTreeMap<String, String> = BTreeMap::new();
        for (name, spec) in action["inputs"].as_object().unwrap() {
            given.insert(name.clone(), spec["default"].as_str().unwrap_or("").into());
        }
        for (k, v) in inputs {
            assert!(given.contains_key(*k), "action.yml has no input {k}");
            given.insert(k.to_string(), v.to_string());
        }
        let mut steps_out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut run = ActionRun {
            code: 0,
            stderr: BTreeMap::new(),
            outputs: BTreeMap::new(),
            summary: String::new(),
            steps: BTreeMap::new(),
            upload: None,
            page: None,
        };
        let step_dir = self.path().join("steps");
        fs::create_dir_all(&step_dir).unwrap();
        for (i, step) in action["runs"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            let id = step["id"]
                .as_str()
                .or(step["name"].as_str())
                .unwrap()
                .to_string();
            if !runs(step, run.code != 0, &given, &steps_out) {
                continue;
            }
            let fill = |s: &str| fill(s, &given, &steps_out);
            if let Some(uses) = step["uses"].as_str() {
                assert!(uses.starts_with("actions/upload-artifact@"), "{uses}");
                let paths: Vec<String> = fill(step["with"]["path"].as_str().unwrap())
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(String::from)
                    .collect();
                if step["with"]["archive"] == false {
                    assert_eq!(paths.len(), 1, "one file, not zipped: {paths:?}");
                    run.page = paths.into_iter().next();
                } else {
                    run.upload = Some(paths);
                }
                let url = format!("https://github.com/o/r/actions/runs/1/artifacts/{i}");
                steps_out.insert(id, BTreeMap::from([("artifact-url".into(), url)]));
                continue;
            }
            let script = step["run"].as_str().unwrap();
            // A test never installs packages: where tmux or jq is missing the test skips.
            if script.ends_with(" tools") {
                assert!(tools_here(), "tmux and jq are needed");
            }
            assert!(!script.contains("${{"), "step {id}: an expression in run:");
            assert_eq!(step["shell"], "bash");
            let output = step_dir.join(format!("{i}.output"));
            let summary = step_dir.join(format!("{i}.summary"));
            fs::write(&output, "").unwrap();
            fs::write(&summary, "").unwrap();
            let mut cmd = Command::new("bash");
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
                .env_clear()
                .envs(self.env.iter().map(|(k, v)| (k, v)))
                .env("GITHUB_OUTPUT", &output)
                .env("GITHUB_STEP_SUMMARY", &summary)
                .current_dir(self.workspace());
            if let Some(env) = step["env"].as_object() {
                for (k, v) in env {
                    cmd.env(k, fill(v.as_str().unwrap()));
                }
            }
            let out = cmd.output().unwrap();
            run.stderr
                .insert(id.clone(), String::from_utf8_lossy(&out.stderr).into());
            steps_out.insert(
                id.clone(),
                parse_outputs(&fs::read_to_string(&output).unwrap()),
            );
            run.summary.push_str(&fs::read_to_string(&summary).unwrap());
            if !out.status.success() && run.code == 0 {
                run.code = out.status.code().unwrap_or(-1);
            }
        }
        for (name, spec) in action["outputs"].as_object().unwrap() {
            let v = fill(spec["value"].as_str().unwrap(), &given, &steps_out);
            run.outputs.insert(name.clone(), v);
        }
        run.steps = steps_out;
        run
    }
}

/// Whether a step runs: without `if`, only while no step has failed; with `always() && …`,
/// whatever failed, when each `X != ''` (or `X == ''`) holds. Any other condition fails the test.
fn runs(
    step: &Value,
    failed: bool,
    inputs: &BTreeMap<String, String>,
    steps: &BTreeMap<String, BTreeMap<String, String>>,
) -> bool {
    let Some(cond) = step["if"].as_str() else {
        return !failed;
    };
    let mut always = false;
    let mut holds = true;
    for term in cond.split(" && ") {
        if term == "always()" {
            always = true;
            continue;
        }
        let (expr, empty) = match (term.strip_suffix(" != ''"), term.strip_suffix(" == ''")) {
            (Some(e), _) => (e, false),
            (_, Some(e)) => (e, true),
            _ => panic!("a condition this runner does not know: {cond}"),
        };
        holds &= fill(&format!("${{{{ {expr} }}}}"), inputs, steps).is_empty() == empty;
    }
    (always || !failed) && holds
}

/// Fills in `${{ … }}`: inputs, step outputs, and github.action_repository (empty, as a
/// composite action's steps may see it). Any other expression fails the test.
fn fill(
    s: &str,
    inputs: &BTreeMap<String, String>,
    steps: &BTreeMap<String, BTreeMap<String, String>>,
) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("${{") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find("}}").expect("an unclosed ${{") + at;
        let expr = rest[at + 3..end].trim();
        let parts: Vec<&str> = expr.split('.').collect();
        let value = match parts.as_slice() {
            ["inputs", name] => inputs
                .get(*name)
                .unwrap_or_else(|| panic!("no input {name}"))
                .clone(),
            ["steps", id, "outputs", name] => steps
                .get(*id)
                .and_then(|o| o.get(*name))
                .cloned()
                .unwrap_or_default(),
            ["github", "action_repository"] => String::new(),
            _ => panic!("an expression this runner does not know: {expr}"),
        };
        out.push_str(&value);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

#[test]
fn action_yml_passes_every_input_through_the_environment() {
    let action = action();
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_array().unwrap();
    let mut used = String::new();
    for step in steps {
        if let Some(run) = step["run"].as_str() {
            assert!(!run.contains("${{"), "an expression inside run: {run}");
            let sub = run
                .strip_prefix("\"$GITHUB_ACTION_PATH/scripts/action/teamctl-action.sh\" ")
                .unwrap_or_else(|| panic!("a step that is not the script: {run}"));
            assert!(
                ["tools", "claude", "teamctl", "run", "link"].contains(&sub),
                "{sub}"
            );
        } else {
            let uses = step["uses"].as_str().unwrap();
            let (_, version) = uses.split_once('@').unwrap();
            assert!(
                version.starts_with('v') && version[1..].parse::<u32>().is_ok(),
                "{uses}: pin actions by major version"
            );
        }
        used.push_str(&serde_json::to_string(step).unwrap());
    }
    for name in action["inputs"].as_object().unwrap().keys() {
        assert!(
            used.contains(&format!("${{{{ inputs.{name} }}}}")),
            "input {name} is never used"
        );
    }
    for name in ["state", "result", "cost_usd", "record", "report"] {
        assert_eq!(
            action["outputs"][name]["value"],
            format!("${{{{ steps.run.outputs.{name} }}}}")
        );
    }
    let out = Command::new("bash")
        .arg("-n")
        .arg(root().join("scripts/action/teamctl-action.sh"))
        .output()
        .unwrap();
    assert!(out.status.success());
}

/// Every `uses:` of the project's workflows is pinned to a major version at least; the CI runs
/// on Linux and macOS; a release builds the four binaries with checksums.
#[test]
fn the_workflows_hang_together() {
    let mut uses = Vec::new();
    for f in ["ci.yml", "release.yml"] {
        let wf = yaml(&root().join(".github/workflows").join(f));
        for job in wf["jobs"].as_object().unwrap().values() {
            for step in job["steps"].as_array().unwrap() {
                if let Some(u) = step["uses"].as_str() {
                    uses.push(u.to_string());
                }
            }
        }
    }
    for u in &uses {
        let (_, version) = u.split_once('@').unwrap();
        assert!(
            version.starts_with('v') && version[1..].parse::<u32>().is_ok(),
            "{u}"
        );
    }
    let ci = yaml(&root().join(".github/workflows/ci.yml"));
    assert_eq!(
        ci["jobs"]["test"]["strategy"]["matrix"]["os"],
        serde_json::json!(["ubuntu-latest", "macos-latest"])
    );
    let release = yaml(&root().join(".github/workflows/release.yml"));
    assert_eq!(release["on"]["push"]["tags"], serde_json::json!(["v*"]));
    let targets: Vec<&str> = release["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        [
            "x86_64-unknown-linux-musl",
            "aarch64-unknown-linux-musl",
            "x86_64-apple-darwin",
            "aarch64-apple-darwin"
        ]
    );
    // The asset names the README and the Action's script download.
    let text = fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    assert!(text.contains(r#"name="teamctl-$GITHUB_REF_NAME-$TARGET""#));
    assert!(text.contains(r#"shasum -a 256 "$name.tar.gz" > "$name.tar.gz.sha256""#));
    let script = fs::read_to_string(root().join("scripts/action/teamctl-action.sh")).unwrap();
    assert!(script.contains(r#"name="teamctl-$tag-$target""#));
}

/// The report.html of the stub's records (a test removes `<stub>/report.html` for a record
/// without one, as a teamctl from before the page writes).
const STUB_PAGE: &str = "<!doctype html><title>the team</title>\n";

/// A stub teamctl on PATH: logs its arguments, keeps the prompt it was given, and for `run`
/// writes a record holding `report` (and [`STUB_PAGE`]) and prints `result` (exit `code`).
pub(crate) fn stub_teamctl(r: &mut Runner, result: &Value, code: i32, report: &str) -> PathBuf {
    let dir = r.path().join("stub");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("result.json"), result.to_string()).unwrap();
    fs::write(dir.join("report.md"), report).unwrap();
    fs::write(dir.join("report.html"), STUB_PAGE).unwrap();
    write_exe(
        &dir.join("bin/teamctl"),
        &format!(
            r#"#!/bin/sh
d='{d}'
printf '%s\n' "$*" >> "$d/calls"
case $1 in
    --version) echo 'teamctl 9.9.9' ;;
    run)
        while [ $# -gt 0 ]; do
            case $1 in --prompt-file) pf=$2; shift ;; --export) rec=$2; shift ;; esac
            shift
        done
        cp "$pf" "$d/prompt-seen"
        name=$(basename "$rec" .tar.gz)
        mkdir -p "$d/r/$name" && cp "$d/report.md" "$d/r/$name/report.md"
        if [ -f "$d/report.html" ]; then cp "$d/report.html" "$d/r/$name/report.html"; fi
        tar -czf "$rec" -C "$d/r" "$name"
        cat "$d/result.json"
        exit {code} ;;
esac
exit 0
"#,
            d = dir.display()
        ),
    );
    r.path_first(&dir.join("bin"));
    let claude = dir.join("claude");
    write_exe(&claude, "#!/bin/sh\necho '2.1.332 (Claude Code)'\n");
    dir
}

pub(crate) fn calls(stub: &Path) -> Vec<String> {
    fs::read_to_string(stub.join("calls"))
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

pub(crate) fn result_doc(state: &str, result: &str, cost: Value) -> Value {
    serde_json::json!({"schema_version": 1, "type": "result", "state": state, "result": result,
        "totals": if cost.is_null() { Value::Null } else { serde_json::json!({"cost_usd": cost}) }})
}

#[test]
fn inputs_reach_teamctl_as_data_and_outputs_keep_any_text() {
    if !tools_here() {
        return;
    }
    let mut r = Runner::new();
    // A result with newlines, something like a delimiter, and a workflow command.
    let text = "line one\nteamctl_00\n::error::not a command\nEOF\n\n";
    let stub = stub_teamctl(
        &mut r,
        &result_doc("done", text, serde_json::json!(0.25)),
        0,
        "## report\n",
    );
    let claude = stub.join("claude").display().to_string();
    let prompt = "--help $(touch pwned) `touch pwned2` ${{ github.token }}\n::error::x\n'\"";
    let run = r.run(&[
        ("prompt", prompt),
        ("claude-bin", &claude),
        ("teamctl-version", "installed"),
        ("max-cost", "2.5"),
        ("name", "t1"),
    ]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        fs::read_to_string(stub.join("prompt-seen")).unwrap(),
        prompt
    );
    assert!(!r.workspace().join("pwned").exists() && !r.workspace().join("pwned2").exists());
    assert_eq!(run.outputs["result"], text);
    assert_eq!(run.outputs["state"], "done");
    assert_eq!(run.outputs["cost_usd"], "0.25");
    assert_eq!(run.outputs["exit-code"], "0");
    let record = &run.outputs["record"];
    assert!(record.ends_with("/teamctl-record-t1.tar.gz") && Path::new(record).is_file());
    // The page beside the record, named after the artifact: uploaded with the record and alone.
    let page = &run.outputs["report"];
    assert_eq!(Path::new(page).parent(), Path::new(record).parent());
    assert!(page.ends_with("/teamctl-record.html"), "{page}");
    assert_eq!(fs::read_to_string(page).unwrap(), STUB_PAGE);
    assert_eq!(
        run.upload.as_deref().unwrap(),
        [
            record.clone(),
            page.clone(),
            run.outputs["result-json"].clone()
        ]
    );
    assert_eq!(run.page.as_deref(), Some(page.as_str()));
    assert_eq!(run.summary, format!("## report\n{}", links(true, true)));
    let calls = calls(&stub);
    let cfg = r.path().join("runner/teamctl-claude");
    assert_eq!(calls[0], "--version");
    assert_eq!(
        calls[1],
        format!(
            "prepare --cwd {} --skip-permissions",
            r.workspace().display()
        )
    );
    assert!(
        calls[2].starts_with("run --json --prompt-file ")
            && calls[2].ends_with(&format!(
                "--cwd {} --name t1 --timeout 30m --dangerously-skip-permissions --max-cost 2.5 \
                 --export {record}",
                r.workspace().display()
            )),
        "{}",
        calls[2]
    );
    assert!(cfg.is_dir(), "a config dir of the job's own");
}

#[test]
fn run_exit_code_passes_through_after_outputs_and_summary() {
    if !tools_here() {
        return;
    }
    let mut r = Runner::new();
    let stub = stub_teamctl(
        &mut r,
        &result_doc("budget", "", Value::Null),
        6,
        "## over budget\n",
    );
    let claude = stub.join("claude").display().to_string();
    let run = r.run(&[
        ("prompt", "p"),
        ("claude-bin", &claude),
        ("teamctl-version", "installed"),
    ]);
    assert_eq!(run.code, 6);
    assert_eq!(run.outputs["state"], "budget");
    assert_eq!(run.outputs["exit-code"], "6");
    // Unknown cost stays empty, never 0.
    assert_eq!(run.outputs["cost_usd"], "");
    assert_eq!(
        run.summary,
        format!("## over budget\n{}", links(true, true))
    );
    assert!(
        run.upload.is_some() && run.page.is_some(),
        "the record and its page are uploaded after a failure"
    );
    // No artifact name: nothing uploaded.
    let run = r.run(&[
        ("prompt", "p"),
        ("claude-bin", &claude),
        ("teamctl-version", "installed"),
        ("artifact-name", ""),
        ("name", "t2"),
    ]);
    assert_eq!(run.code, 6);
    assert!(run.upload.is_none() && run.page.is_none());
    assert!(run.outputs["report"].ends_with("/teamctl-report-t2.html"));
    assert_eq!(run.summary, "## over budget\n", "nothing to link");
    // A record without a page (a teamctl from before it): the record alone, linked.
    fs::remove_file(stub.join("report.html")).unwrap();
    let run = r.run(&[
        ("prompt", "p"),
        ("claude-bin", &claude),
        ("teamctl-version", "installed"),
        ("name", "t3"),
    ]);
    assert_eq!(run.code, 6);
    assert_eq!(run.outputs["report"], "");
    assert!(run.upload.is_some() && run.page.is_none());
    assert!(run.stderr["run"].contains("the record holds no report.html"));
    assert_eq!(
        run.summary,
        format!("## over budget\n{}", links(false, true))
    );
}

/// The job summary's links to the page and the record, as this runner's uploads name them.
fn links(page: bool, record: bool) -> String {
    let mut s = "\n### The record\n\n".to_string();
    if page {
        s.push_str(
            "- [The team over time (report.html)](https://github.com/o/r/actions/runs/1/artifacts/5): \
             cost, lanes, tasks and messages, in the browser\n",
        );
    }
    if record {
        s.push_str(
            "- [The record](https://github.com/o/r/actions/runs/1/artifacts/4): summary.json, \
             report.md, the transcripts and messages\n",
        );
    }
    s
}

/// An artifact URL that is not a plain https URL is never written into the job summary.
#[test]
fn only_plain_https_urls_are_linked() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary");
    let link = |page: &str, record: &str| {
        fs::write(&summary, "").unwrap();
        let out = Command::new("bash")
            .arg(root().join("scripts/action/teamctl-action.sh"))
            .arg("link")
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("PAGE_URL", page)
            .env("RECORD_URL", record)
            .output()
            .unwrap();
        assert!(out.status.success());
        (
            fs::read_to_string(&summary).unwrap(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let good = "https://github.com/o/r/actions/runs/1/artifacts/4";
    for bad in [
        "https://x/a)[b](javascript:alert(1))",
        "javascript:alert(1)",
        "http://github.com/o/r",
        "https://x/a b",
        "https://x/<img src=x>",
    ] {
        let (text, err) = link(bad, good);
        assert!(!text.contains(bad) && text.contains(good), "{text}");
        assert!(err.contains("not a plain https URL; not linked"), "{err}");
    }
    assert_eq!(link("", ""), (String::new(), String::new()));
}

#[test]
fn bad_inputs_are_one_line_usage_errors() {
    if !tools_here() {
        return;
    }
    let mut r = Runner::new();
    let stub = stub_teamctl(&mut r, &result_doc("done", "", Value::Null), 0, "");
    let claude = stub.join("claude").display().to_string();
    fs::write(r.workspace().join("empty.md"), "").unwrap();
    let ok = [
        ("claude-bin", claude.as_str()),
        ("teamctl-version", "installed"),
    ];
    for (inputs, step, why) in [
        (vec![], "run", "give a prompt or a prompt-file"),
        (
            vec![("prompt", "a"), ("prompt-file", "p.md")],
            "run",
            "give prompt or prompt-file, not both",
        ),
        (
            vec![("prompt-file", "empty.md")],
            "run",
            "prompt-file is not a file with a prompt in it",
        ),
        (
            vec![("prompt", "a"), ("cwd", "nowhere")],
            "run",
            "cwd is not a folder",
        ),
        (
            vec![("prompt", "a"), ("policy", "empty.md")],
            "run",
            "policy must be JSON with a \"permissions\" object",
        ),
        (
            vec![("prompt", "a"), ("artifact-name", "../x")],
            "run",
            "artifact-name may not hold /",
        ),
    ] {
        let all: Vec<(&str, &str)> = ok.iter().copied().chain(inputs).collect();
        let run = r.run(&all);
        assert_eq!(run.code, 2, "{all:?}");
        let err = &run.stderr[step];
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("teamctl-action: ") && err.contains(why),
            "{err}"
        );
    }
    for (input, value, step) in [
        ("claude-code-version", "1.0; rm -rf /", "claude"),
        ("claude-code-version", "--registry=http://x", "claude"),
        ("teamctl-version", "main", "teamctl"),
        ("teamctl-version", "v1.0.0/../x", "teamctl"),
    ] {
        // Claude Code is never installed from npm here: either its version is refused first,
        // or claude-bin names the stub.
        let mut inputs = vec![("prompt", "a"), (input, value)];
        if step == "teamctl" {
            inputs.push(("claude-bin", &claude));
        }
        let run = r.run(&inputs);
        assert_eq!(run.code, 2, "{input}={value}");
        assert!(run.stderr[step].starts_with("teamctl-action: "));
        assert_eq!(run.stderr[step].lines().count(), 1);
    }
    assert!(
        !calls(&stub).iter().any(|c| c.starts_with("run")),
        "teamctl run never ran"
    );
}

/// `base` and then `more`.
pub(crate) fn with<'a>(
    base: &[(&'a str, &'a str)],
    more: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    base.iter().chain(more).copied().collect()
}

/// Whether tmux and jq are here (the action's `tools` step would install them). In CI their
/// absence is a failure, elsewhere the tests that run the action skip.
pub(crate) fn tools_here() -> bool {
    let ok = ["tmux", "jq"].iter().all(|t| {
        Command::new(t)
            .arg(if *t == "tmux" { "-V" } else { "--version" })
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "tmux and jq are needed");
        eprintln!("skipping: tmux and jq are needed");
    }
    ok
}

/// The `bridge` inputs become `run --bridge` flags (the token stays in the environment, where
/// teamctl reads it); a bad transport or a missing chat or allow-list is a usage error.
#[test]
fn bridge_inputs_reach_run_as_its_bridge_flags() {
    if !tools_here() {
        return;
    }
    let mut r = Runner::new();
    let stub = stub_teamctl(&mut r, &result_doc("done", "", Value::Null), 0, "");
    let claude = stub.join("claude").display().to_string();
    let base = [
        ("prompt", "p"),
        ("claude-bin", claude.as_str()),
        ("teamctl-version", "installed"),
    ];
    let run = r.run(&with(
        &base,
        &[
            ("bridge", "telegram"),
            ("bridge-chat", "-100123"),
            ("bridge-allow", "7,8"),
        ],
    ));
    assert_eq!(run.code, 0, "{run:#?}");
    let calls = calls(&stub);
    let call = calls.iter().find(|c| c.starts_with("run ")).unwrap();
    assert!(
        call.contains("--bridge telegram --chat -100123 --allow 7,8 --export "),
        "{call}"
    );
    for (more, why) in [
        (
            vec![
                ("bridge", "discord"),
                ("bridge-chat", "1"),
                ("bridge-allow", "1"),
            ],
            "bridge must be telegram, slack or webhook",
        ),
        (
            vec![("bridge", "slack"), ("bridge-chat", "C1")],
            "bridge needs bridge-chat and bridge-allow",
        ),
    ] {
        let run = r.run(&with(&base, &more));
        assert_eq!(run.code, 2, "{more:?}");
        let err = &run.stderr["run"];
        assert!(
            err.starts_with("teamctl-action: ") && err.contains(why),
            "{err}"
        );
    }
}
