//! The recipes in examples/fleet, checked without a container runtime or a cluster: the
//! workflow and the manifests parse and hang together, every exit code they name is one
//! `teamctl --help` documents with the same meaning, the Containerfile installs what the Job
//! runs, and the unit script drives teamctl as it should (a stub teamctl here; the real client,
//! three units at once, in real_claude.rs).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{TestEnv, bin, script};

fn fleet() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fleet")
}

/// Every YAML document in `file`, as JSON values.
fn yaml_docs(file: &Path) -> Vec<Value> {
    let text = fs::read_to_string(file).unwrap();
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|doc| {
            serde::Deserialize::deserialize(doc)
                .unwrap_or_else(|e| panic!("{} does not parse: {e}", file.display()))
        })
        .collect()
}

/// What an exit code means, as far as a recipe acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Meaning {
    Success,
    Failure,
    Usage,
    Timeout,
    Budget,
    /// A stuck member the command was told to stop for (`--on-rate-limit`, `--on-stall`,
    /// `--on-dead`).
    Stuck,
    Other,
}

/// The meaning a text gives: the first of budget, usage, time(out), fail, done/success found.
fn meaning(text: &str) -> Meaning {
    let t = text.to_lowercase();
    if t.contains("--on-") {
        Meaning::Stuck
    } else if t.contains("budget") {
        Meaning::Budget
    } else if t.contains("usage") {
        Meaning::Usage
    } else if t.contains("timeout") || t.contains("timed out") || t.contains("ran out") {
        Meaning::Timeout
    } else if t.contains("fail") {
        Meaning::Failure
    } else if t.contains("success") || t.contains("done") {
        Meaning::Success
    } else {
        Meaning::Other
    }
}

/// The exit codes `teamctl --help` documents, with what each means.
fn documented_codes() -> BTreeMap<u8, Meaning> {
    let out = Command::new(bin()).arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let section = help
        .split_once("Exit codes:")
        .expect("an 'Exit codes:' section in teamctl --help")
        .1;
    // "  N  text", continued by more-indented lines; the section ends at a blank line.
    let mut codes: BTreeMap<u8, String> = BTreeMap::new();
    let mut last = None;
    for line in section.lines().skip(1) {
        if line.trim().is_empty() {
            break;
        }
        let trimmed = line.trim_start();
        let (num, rest) = trimmed
            .split_once(char::is_whitespace)
            .unwrap_or((trimmed, ""));
        match num.parse::<u8>() {
            Ok(n) if line.len() - trimmed.len() <= 4 => {
                codes.insert(n, rest.to_string());
                last = Some(n);
            }
            _ => {
                if let Some(n) = last {
                    codes.get_mut(&n).unwrap().push_str(&format!(" {trimmed}"));
                }
            }
        }
    }
    assert!(codes.len() >= 4, "exit codes not found in:\n{help}");
    codes.into_iter().map(|(n, t)| (n, meaning(&t))).collect()
}

/// The lowest documented code with `m`.
fn code_for(docs: &BTreeMap<u8, Meaning>, m: Meaning) -> u8 {
    *docs
        .iter()
        .find(|(_, v)| **v == m)
        .unwrap_or_else(|| panic!("teamctl --help documents no exit code meaning {m:?}"))
        .0
}

/// The arms of every `case $code in … esac` in `script`: (code, the arm's text).
fn case_arms(script: &str) -> Vec<(u8, String)> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in script.lines() {
        let l = line.trim();
        if l.starts_with("case $code in") {
            inside = true;
        } else if l == "esac" {
            inside = false;
        } else if inside && let Some((pat, body)) = l.split_once(')') {
            for code in pat.split('|') {
                out.push((code.trim().parse().unwrap(), body.to_string()));
            }
        }
    }
    out
}

fn workflow() -> Value {
    let docs = yaml_docs(&fleet().join("github-actions.yml"));
    assert_eq!(docs.len(), 1);
    docs.into_iter().next().unwrap()
}

/// The `run:` scripts of a job's steps.
fn runs(job: &Value) -> Vec<String> {
    job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str().map(String::from))
        .collect()
}

#[test]
fn the_workflow_fans_out_and_in() {
    let wf = workflow();
    // YAML 1.2: `on` stays a key (not `true`), as GitHub reads it.
    assert!(wf["on"].is_object(), "{wf}");
    let team = &wf["jobs"]["team"];
    let matrix = team["strategy"]["matrix"]["include"].as_array().unwrap();
    assert!(matrix.len() >= 2);
    for m in matrix {
        assert!(m["id"].is_string() && m["prompt"].is_string(), "{m}");
    }
    assert_eq!(team["strategy"]["fail-fast"], false);
    // The prompt reaches the script through the environment only.
    assert_eq!(team["env"]["PROMPT"], "${{ matrix.prompt }}");
    let scripts = runs(team).join("\n");
    assert!(!scripts.contains("matrix.prompt"), "{scripts}");
    for want in [
        "teamctl prepare --cwd \"$GITHUB_WORKSPACE\" --skip-permissions",
        "teamctl run --json --prompt-file -",
        "--dangerously-skip-permissions",
        "--max-cost ",
        "--export \"record-$TEAM.tar.gz\"",
    ] {
        assert!(scripts.contains(want), "{want} not in\n{scripts}");
    }
    let steps = team["steps"].as_array().unwrap();
    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
        })
        .expect("the record is uploaded");
    assert_eq!(upload["if"], "always()");
    assert!(
        upload["with"]["path"]
            .as_str()
            .unwrap()
            .contains("record-${{ matrix.id }}.tar.gz")
    );

    let report = &wf["jobs"]["report"];
    assert_eq!(report["needs"], "team");
    assert_eq!(report["if"], "always()");
    let download = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/download-artifact@"))
        })
        .expect("the records are downloaded");
    assert_eq!(download["with"]["pattern"], "record-*");
    let scripts = runs(report).join("\n");
    assert!(
        scripts.contains(
            "teamctl report --html --out fleet.html records/record-*.tar.gz >> \"$GITHUB_STEP_SUMMARY\""
        ),
        "{scripts}"
    );
    // The fleet's page is kept with the JSON.
    let kept = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["with"]["name"] == "fleet-report")
        .expect("the fleet report is uploaded");
    let paths = kept["with"]["path"].as_str().unwrap();
    assert!(
        paths.contains("fleet.json") && paths.contains("fleet.html"),
        "{paths}"
    );
    assert!(scripts.contains("teamctl report --json records/record-*.tar.gz"));
}

/// Every `run:` script and the unit script are valid shell (`bash -n`, `sh -n`).
#[test]
fn the_scripts_are_valid_shell() {
    let wf = workflow();
    for (name, job) in wf["jobs"].as_object().unwrap() {
        for s in runs(job) {
            let out = Command::new("bash")
                .args(["-n", "-c", &s.replace("${{", "_").replace("}}", "_")])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "job {name}: {}\n{s}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let unit = fleet().join("teamctl-unit.sh");
    let out = Command::new("sh").arg("-n").arg(&unit).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_job_runs_one_team_per_index() {
    let docs = yaml_docs(&fleet().join("k8s/job.yaml"));
    let kind = |k: &str| {
        docs.iter()
            .find(|d| d["kind"] == k)
            .unwrap_or_else(|| panic!("no {k}"))
    };
    let job = kind("Job");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    let completions = spec["completions"].as_u64().unwrap();
    // A prompt for every index.
    let prompts = kind("ConfigMap");
    let keys: BTreeSet<String> = prompts["data"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let want: BTreeSet<String> = (0..completions).map(|i| i.to_string()).collect();
    assert_eq!(keys, want);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never", "podFailurePolicy needs it");
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    let container = &pod["containers"][0];
    assert_eq!(
        container["command"],
        serde_json::json!(["/usr/bin/tini", "--", "teamctl-unit"])
    );
    // Every mount has its volume; the ConfigMap and the claim are the ones defined here.
    let volumes: BTreeMap<String, &Value> = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap().to_string(), v))
        .collect();
    for m in container["volumeMounts"].as_array().unwrap() {
        assert!(volumes.contains_key(m["name"].as_str().unwrap()), "{m}");
    }
    assert_eq!(
        volumes["prompts"]["configMap"]["name"],
        prompts["metadata"]["name"]
    );
    assert!(
        volumes["claude"]["emptyDir"].is_object(),
        "the config dir is local"
    );
    assert_eq!(
        volumes["records"]["persistentVolumeClaim"]["claimName"],
        kind("PersistentVolumeClaim")["metadata"]["name"]
    );
    let env: BTreeMap<&str, &Value> = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e))
        .collect();
    let mount = |name: &str| {
        container["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap()["mountPath"]
            .clone()
    };
    assert_eq!(env["PROMPTS_DIR"]["value"], mount("prompts"));
    assert_eq!(env["RECORDS_DIR"]["value"], mount("records"));
    assert_eq!(env["CLAUDE_CONFIG_DIR"]["value"], mount("claude"));
    assert!(env["ANTHROPIC_API_KEY"]["valueFrom"]["secretKeyRef"].is_object());
    for rule in spec["podFailurePolicy"]["rules"].as_array().unwrap() {
        if let Some(on) = rule.get("onExitCodes") {
            assert_eq!(on["containerName"], container["name"]);
        }
    }

    let report = yaml_docs(&fleet().join("k8s/report-job.yaml"));
    let pod = &report[0]["spec"]["template"]["spec"];
    assert!(
        pod["containers"][0]["args"][0]
            .as_str()
            .unwrap()
            .contains("teamctl report --html --out /records/fleet.html /records/team-*.tar.gz")
    );
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
        "teamctl-records"
    );
}

/// The image holds what the Job runs: teamctl, the unit script as `teamctl-unit`, Claude Code
/// from npm, tmux, tini as PID 1 in front of teamctl, a non-root user, the config dir a volume.
#[test]
fn the_containerfile_has_what_a_unit_needs() {
    let text = fs::read_to_string(fleet().join("Containerfile")).unwrap();
    // Instructions, with continuation lines joined.
    let joined = text.replace("\\\n", " ");
    let instr: Vec<(String, String)> = joined
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap_or((l, ""));
            (k.to_uppercase(), v.trim().to_string())
        })
        .collect();
    let all = |k: &str| -> Vec<&str> {
        instr
            .iter()
            .filter(|(i, _)| i == k)
            .map(|(_, v)| v.as_str())
            .collect()
    };
    let last = |k: &str| *all(k).last().unwrap_or_else(|| panic!("no {k}"));
    assert_eq!(last("ENTRYPOINT"), r#"["/usr/bin/tini", "--", "teamctl"]"#);
    let user = last("USER");
    assert!(user != "root" && user != "0", "{user}");
    let runs = all("RUN").join("\n");
    for want in [
        "tmux",
        "tini",
        "npm install -g \"@anthropic-ai/claude-code@",
        "useradd",
    ] {
        assert!(runs.contains(want), "{want} not installed:\n{runs}");
    }
    let copies = all("COPY").join("\n");
    assert!(copies.contains("/out/bin/teamctl /usr/local/bin/teamctl"));
    assert!(copies.contains("examples/fleet/teamctl-unit.sh /usr/local/bin/teamctl-unit"));
    assert!(fleet().join("teamctl-unit.sh").is_file());
    let config_dir = all("ENV")
        .join(" ")
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("CLAUDE_CONFIG_DIR=").map(String::from))
        .expect("CLAUDE_CONFIG_DIR set");
    assert_eq!(last("VOLUME"), format!("[\"{config_dir}\"]"));
    // The build context's ignore file keeps build output out of the image build.
    let ignore =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".dockerignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "target"));
}

/// Every exit code a recipe names is one teamctl documents, with the meaning the recipe acts
/// on: the workflow's `case` arms, and the Job's podFailurePolicy (a usage error and the budget
/// cap fail the Job, a failure and a timeout are retried). When teamctl's codes change, this
/// fails until the recipes follow.
#[test]
fn recipes_name_only_documented_exit_codes() {
    let docs = documented_codes();
    let wf = workflow();
    let arms: Vec<(u8, String)> = runs(&wf["jobs"]["team"])
        .iter()
        .flat_map(|s| case_arms(s))
        .collect();
    assert!(arms.len() >= 4, "{arms:?}");
    for (code, text) in &arms {
        let doc = docs.get(code).unwrap_or_else(|| {
            panic!("the workflow names exit {code}, which teamctl does not document")
        });
        assert_eq!(meaning(text), *doc, "the workflow's arm {code}) {text}");
    }
    // The workflow handles every code a run can end with.
    for m in [
        Meaning::Success,
        Meaning::Failure,
        Meaning::Usage,
        Meaning::Timeout,
        Meaning::Budget,
    ] {
        assert!(
            arms.iter().any(|(c, _)| *c == code_for(&docs, m)),
            "no arm for {m:?} ({arms:?})"
        );
    }

    let job = yaml_docs(&fleet().join("k8s/job.yaml"))
        .into_iter()
        .find(|d| d["kind"] == "Job")
        .unwrap();
    let mut by_action: BTreeMap<String, BTreeSet<u8>> = BTreeMap::new();
    for rule in job["spec"]["podFailurePolicy"]["rules"].as_array().unwrap() {
        let Some(on) = rule.get("onExitCodes") else {
            continue;
        };
        assert_eq!(on["operator"], "In");
        for v in on["values"].as_array().unwrap() {
            let code = u8::try_from(v.as_u64().unwrap()).unwrap();
            assert!(
                docs.contains_key(&code),
                "the Job names exit {code}, which teamctl does not document"
            );
            by_action
                .entry(rule["action"].as_str().unwrap().to_string())
                .or_default()
                .insert(code);
        }
    }
    let want = |ms: &[Meaning]| {
        ms.iter()
            .map(|m| code_for(&docs, *m))
            .collect::<BTreeSet<u8>>()
    };
    assert_eq!(
        by_action["FailJob"],
        want(&[Meaning::Usage, Meaning::Budget])
    );
    let stuck: BTreeSet<u8> = docs
        .iter()
        .filter(|(_, m)| **m == Meaning::Stuck)
        .map(|(c, _)| *c)
        .collect();
    assert_eq!(stuck.len(), 3, "{docs:?}");
    assert_eq!(
        by_action["Count"],
        &want(&[Meaning::Failure, Meaning::Timeout]) | &stuck
    );
    // The workflow has an arm for each of them too.
    for c in &stuck {
        assert!(
            arms.iter().any(|(a, _)| a == c),
            "no arm for {c} ({arms:?})"
        );
    }
    // The unit script's header says the same.
    let unit = fs::read_to_string(fleet().join("teamctl-unit.sh")).unwrap();
    for m in [
        Meaning::Success,
        Meaning::Failure,
        Meaning::Usage,
        Meaning::Timeout,
        Meaning::Budget,
    ] {
        let c = code_for(&docs, m);
        assert!(
            unit.lines()
                .filter(|l| l.starts_with('#'))
                .any(|l| l.contains(&format!(" {c} ")) || l.contains(&format!("# {c} "))),
            "the unit script does not mention exit {c} ({m:?})"
        );
    }
}

/// The unit script with a stub teamctl: it prepares this unit's config dir, runs the prompt of
/// its index with a cap and an export named by the index, and exits with teamctl's code; a
/// missing index or prompt is a usage error (2) before teamctl runs.
#[test]
fn the_unit_script_drives_teamctl() {
    let env = TestEnv::new();
    let log = env.dir.path().join("calls");
    let stubs = env.dir.path().join("stubs");
    fs::create_dir_all(&stubs).unwrap();
    let stub = script(
        &env,
        "stub-teamctl",
        &format!(
            "printf '%s\\n' \"$*\" >> '{}'\n[ \"$1\" = run ] && exit \"${{STUB_EXIT:-0}}\"\nexit 0",
            log.display()
        ),
    );
    fs::rename(&stub, stubs.join("teamctl")).unwrap();
    let prompts = env.dir.path().join("prompts");
    fs::create_dir_all(&prompts).unwrap();
    fs::write(prompts.join("1"), "do the thing\n").unwrap();
    let records = env.dir.path().join("records");
    let work = env.dir.path().join("work");
    fs::create_dir_all(&work).unwrap();
    let unit = |index: &str, exit: &str| {
        Command::new("sh")
            .arg(fleet().join("teamctl-unit.sh"))
            .env(
                "PATH",
                format!("{}:{}", stubs.display(), std::env::var("PATH").unwrap()),
            )
            .env("JOB_COMPLETION_INDEX", index)
            .env_remove("UNIT_INDEX")
            .env("PROMPTS_DIR", &prompts)
            .env("RECORDS_DIR", &records)
            .env("WORK_DIR", &work)
            .env("MAX_COST", "0.5")
            .env("STUB_EXIT", exit)
            .output()
            .unwrap()
    };
    let out = unit("1", "6");
    assert_eq!(out.status.code(), Some(6), "teamctl's code passes through");
    let calls = fs::read_to_string(&log).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(
        calls,
        [
            format!("prepare --cwd {} --skip-permissions", work.display()),
            format!(
                "run --json --prompt-file {}/1 --cwd {} --name unit-1 \
                 --dangerously-skip-permissions --timeout 45m --max-cost 0.5 --on-rate-limit exit --on-stall nudge --on-dead restart --export \
                 {}/team-1.tar.gz",
                prompts.display(),
                work.display(),
                records.display()
            ),
        ]
    );
    assert!(records.join("team-1.json").is_file());
    // A retry moves the earlier attempt's files aside (export writes only to a new path).
    fs::write(records.join("team-1.tar.gz"), "earlier").unwrap();
    assert_eq!(unit("1", "0").status.code(), Some(0));
    let aside: Vec<String> = fs::read_dir(records.join("retried"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(aside.len(), 2, "{aside:?}");
    assert!(!records.join("team-1.tar.gz").exists());
    fs::remove_file(&log).unwrap();
    for (index, why) in [
        ("2", "no prompt for unit 2"),
        ("", "set UNIT_INDEX"),
        ("x", "set UNIT_INDEX"),
    ] {
        let out = unit(index, "0");
        assert_eq!(out.status.code(), Some(2), "{index}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(why));
    }
    assert!(!log.exists(), "teamctl never ran");
}
