//! `prepare`: the settings that keep an unattended Claude Code from stopping at a start-up
//! dialog nobody can answer, written into its config files the way Claude Code writes them
//! ([`crate::store::object_file`]).
//!
//! The keys, as Claude Code 2.1.112 to 2.1.332 read them (each settles one [`Dialog`]):
//! - onboarding: `"hasCompletedOnboarding": true` in `.claude.json` (the theme has a default);
//! - API key approval: the key's last 20 characters (`key.trim().slice(-20)`, UTF-16 units)
//!   in `.claude.json` `customApiKeyResponses.approved`;
//! - workspace trust: `projects["<realpath of DIR>"].hasTrustDialogAccepted: true` in
//!   `.claude.json`, for each DIR (exactly that folder: 2.1.332 looks at parents only up to the
//!   git root, so a trusted parent is not always enough);
//! - the bypass-permissions prompt: `"skipDangerousModePermissionPrompt": true` in
//!   `settings.json` (2.1.112 and later read it there; they move the older
//!   `bypassPermissionsModeAccepted` of `.claude.json` into it and delete it, so that key is
//!   not written).
//!
//! Nothing else changes: other keys keep their values and order, numbers their text, the file
//! its mode; a large `.claude.json` is parsed only where it changes ([`crate::store::lazy`]).
//! Both files are read, parsed and planned before either is written: a file that does not
//! parse, or holds a key of the wrong type, is refused and nothing is written. So is a
//! `.claude.json`, `settings.json` or `backups` that is a symlink leading out of the config dir
//! (teamctl writes only inside it; a link there could aim the write, or the backup copy of
//! `.claude.json`, at any file of the user's).

use std::fs;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::host::claude::{Dialog, approved_key};
use crate::store::lazy::Obj;
use crate::store::lock::LockOptions;
use crate::store::object_file::{self, ObjectFile, Written};

/// How many times the settings are written again when a writer that skipped the lock replaced
/// the file right after.
const ROUNDS: usize = 5;

/// The longest [`settle`] watches a file.
const SETTLE_MAX: Duration = Duration::from_secs(3);

/// What to prepare, and where.
#[derive(Debug, Clone)]
pub struct Request {
    /// The config dir (`$CLAUDE_CONFIG_DIR`, `~/.claude`): no link is followed out of it.
    pub config_dir: PathBuf,
    /// Claude Code's global config file: `$CLAUDE_CONFIG_DIR/.claude.json` when the variable
    /// is set, else `~/.claude.json`.
    pub claude_json: PathBuf,
    /// The user settings file: `<config dir>/settings.json`.
    pub settings: PathBuf,
    /// Where Claude Code keeps backups of `.claude.json`: `<config dir>/backups`.
    pub backups: PathBuf,
    /// `ANTHROPIC_API_KEY`, to approve; `None` approves nothing.
    pub api_key: Option<String>,
    /// Folders to trust (made absolute and resolved here).
    pub trust: Vec<PathBuf>,
    /// Accept the bypass-permissions prompt (`--dangerously-skip-permissions`).
    pub skip_permissions: bool,
    /// How long to wait for `.claude.json`'s lock.
    pub lock: LockOptions,
    /// After writing `.claude.json`, how long it must stay unchanged before its settings are
    /// read back and judged kept. A Claude Code that found the lock held may answer with a
    /// write of its own without the lock, from a copy read before ours landed (2.1.332 did, 40
    /// ms after its `mkdir` failed); that write would drop our settings, so they are checked
    /// once the file is quiet and written again if lost. Zero checks at once.
    pub settle: Duration,
    /// The time (names a backup).
    pub now: SystemTime,
}

/// One setting written (or, in a dry run, that would be).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The dialog it settles: `onboarding`, `api_key`, `trust` or `bypass`.
    pub dialog: Dialog,
    /// The file.
    pub file: PathBuf,
    /// The keys from the top of the file to the value (a folder path is one key).
    pub key: Vec<String>,
    /// The value written; for `api_key`, the element added to the array, which is never
    /// shown (`null`): it is part of a secret.
    pub value: Option<Value>,
}

/// One of the two files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileReport {
    /// Its path.
    pub path: PathBuf,
    /// Whether it existed before.
    pub existed: bool,
    /// `created`, `replaced` or `unchanged`.
    pub action: &'static str,
    /// Whether the file was not in Claude Code's own layout (`JSON.stringify(value, null, 2)`),
    /// so more bytes than the changed keys were (or would be) rewritten.
    pub reformatted: bool,
    /// The backup copy made before replacing it (Claude Code's own backup scheme), if any.
    pub backup: Option<PathBuf>,
    /// How many times the settings were written: 0 when nothing changed, more than 1 when a
    /// writer that skipped the lock dropped them and they were written again.
    pub writes: u32,
}

/// What [`prepare`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prepared {
    /// Whether this was a dry run (nothing written).
    pub dry_run: bool,
    /// The settings written (would be, in a dry run), in file order.
    pub changes: Vec<Change>,
    /// `.claude.json`, then `settings.json` when `skip_permissions` was asked for.
    pub files: Vec<FileReport>,
    /// What was left alone and why (no API key to approve, no folder to trust).
    pub notes: Vec<String>,
}

/// Writes the settings `req` asks for into `.claude.json` (and `settings.json` for the bypass
/// prompt); with `write` false, only says what it would change.
///
/// # Errors
/// A folder to trust that is not one (or not UTF-8), a file that does not parse or holds a key
/// of the wrong type (left unchanged), [`crate::Error::LockTimeout`],
/// [`crate::Error::VerifyFailed`], or I/O.
pub fn prepare(req: &Request, write: bool) -> Result<Prepared> {
    let mut trust = Vec::new();
    for dir in &req.trust {
        let real = fs::canonicalize(dir)
            .ok()
            .filter(|d| d.is_dir())
            .ok_or_else(|| anyhow!("could not trust {}: not a directory", dir.display()))?;
        let key = real
            .to_str()
            .with_context(|| format!("could not trust {}: not UTF-8", real.display()))?
            .to_string();
        if !trust.contains(&key) {
            trust.push(key);
        }
    }
    let tail = req.api_key.as_deref().and_then(approved_key);
    let mut notes = Vec::new();
    if tail.is_none() {
        notes.push(
            "ANTHROPIC_API_KEY is not set: no API key approved (none is needed with \
             CLAUDE_CODE_OAUTH_TOKEN)"
                .to_string(),
        );
    }
    if trust.is_empty() {
        notes.push("no --cwd given: no folder trusted".to_string());
    }

    confine(req)?;
    // Both files read, parsed and planned before either is written.
    let (changes, files) = apply(req, tail.as_deref(), &trust, false)?;
    let (changes, files) = if write {
        apply(req, tail.as_deref(), &trust, true)?
    } else {
        (changes, files)
    };
    Ok(Prepared {
        dry_run: !write,
        changes,
        files,
        notes,
    })
}

/// Edits (or with `write` false, plans) `.claude.json`, then `settings.json` when asked.
fn apply(
    req: &Request,
    tail: Option<&str>,
    trust: &[String],
    write: bool,
) -> Result<(Vec<Change>, Vec<FileReport>)> {
    let claude_json = ObjectFile {
        path: req.claude_json.clone(),
        lock: Some(req.lock),
        new_mode: 0o600,
        trailing_newline: false,
        backups: Some(req.backups.clone()),
    };
    let (mut changes, mut files) = (Vec::new(), Vec::new());
    let report = edit_until_kept(&claude_json, write, req, &mut changes, |doc| {
        claude_json_changes(doc, &req.claude_json, tail, trust)
    })?;
    files.push(report);
    if req.skip_permissions {
        let settings = ObjectFile {
            path: req.settings.clone(),
            lock: None,
            new_mode: 0o666,
            trailing_newline: true,
            backups: None,
        };
        let report = edit_until_kept(&settings, write, req, &mut changes, |doc| {
            Ok(set_true(
                doc,
                &req.settings,
                Dialog::Bypass,
                "skipDangerousModePermissionPrompt",
            )?
            .into_iter()
            .collect())
        })?;
        files.push(report);
    }
    Ok((changes, files))
}

/// Refuses a `.claude.json`, `settings.json` (when it is to be written) or `backups` that is
/// a symlink whose target lies outside the config dir, saying why and what to do.
fn confine(req: &Request) -> Result<()> {
    let mut files = vec![&req.claude_json];
    if req.skip_permissions {
        files.push(&req.settings);
    }
    let outside = |path: &Path, target: &Path| {
        format!(
            "{} is a symlink to {}, outside the config dir {}: teamctl writes only inside it and \
             never through a link that leads out (one planted there could aim the write at any \
             of your files)",
            path.display(),
            target.display(),
            req.config_dir.display()
        )
    };
    for path in files {
        if let Some(target) = leads_out(path, &req.config_dir) {
            bail!(
                "{}; replace the link with a copy of its file (cp --remove-destination {} {}), or \
                 use the folder that holds the real files as the config dir (--claude-dir or \
                 CLAUDE_CONFIG_DIR)",
                outside(path, &target),
                target.display(),
                path.display()
            );
        }
    }
    if let Some(target) = leads_out(&req.backups, &req.config_dir) {
        bail!(
            "{}; remove the link (the folder is made again), or use the real config dir \
             (--claude-dir or CLAUDE_CONFIG_DIR)",
            outside(&req.backups, &target)
        );
    }
    Ok(())
}

/// When `path` is a symlink whose target (resolved as a write through it resolves it, one
/// level) is not inside `root`, that target.
fn leads_out(path: &Path, root: &Path) -> Option<PathBuf> {
    let link = fs::symlink_metadata(path).ok()?;
    if !link.file_type().is_symlink() {
        return None;
    }
    let target = object_file::write_target(path);
    let real = fs::canonicalize(&target).ok().or_else(|| {
        // A dangling link: where its target would be made.
        let dir = fs::canonicalize(target.parent()?).ok()?;
        Some(dir.join(target.file_name()?))
    });
    let inside = match (real, fs::canonicalize(root)) {
        (Some(real), Ok(root)) => real.starts_with(root),
        _ => false,
    };
    (!inside).then_some(target)
}

/// Edits `file` with `plan` (stamped `req.now`) and then, once the file has been quiet for
/// `req.settle` (a locked file only: see [`Request::settle`]), reads it again: a writer that skipped the lock may have
/// replaced it with a copy read before ours landed. Until every setting holds (at most
/// [`ROUNDS`] times), it is written again. Adds each change made to `changes` once.
fn edit_until_kept(
    file: &ObjectFile,
    write: bool,
    req: &Request,
    changes: &mut Vec<Change>,
    plan: impl Fn(&mut Obj<'_>) -> Result<Vec<Change>>,
) -> Result<FileReport> {
    let (now, settle_for) = (req.now, req.settle);
    let mut report: Option<FileReport> = None;
    for _ in 0..ROUNDS {
        let edit = object_file::edit(file, write, now, |doc| {
            let planned = plan(doc)?;
            Ok((!planned.is_empty(), planned))
        })?;
        for c in edit.out {
            if !changes.contains(&c) {
                changes.push(c);
            }
        }
        let action = match edit.written {
            Written::Created => "created",
            Written::Replaced => "replaced",
            Written::Unchanged => "unchanged",
        };
        // The first round says what the file was; a later one can only add a write.
        let r = report.get_or_insert_with(|| FileReport {
            path: file.path.clone(),
            existed: edit.existed,
            action,
            reformatted: edit.reformatted,
            backup: None,
            writes: 0,
        });
        r.writes += u32::from(edit.written != Written::Unchanged);
        if r.action == "unchanged" {
            r.action = action;
        }
        r.backup = r.backup.take().or(edit.backup);
        if !write {
            return Ok(report.unwrap_or_else(|| unreachable!("set above")));
        }
        if edit.written != Written::Unchanged && (file.lock.is_some() || edit.overwritten) {
            settle(&file.path, settle_for);
        }
        if object_file::check(&file.path, |doc| plan(doc))?.is_empty() {
            return Ok(report.unwrap_or_else(|| unreachable!("set above")));
        }
    }
    bail!(
        "another program kept replacing {} without taking its lock ({ROUNDS} times); the \
         settings did not stay: run teamctl prepare before Claude Code starts",
        file.path.display()
    )
}

/// Returns once `path` has not changed (its mtime, size and inode) for `quiet`, or after
/// [`SETTLE_MAX`].
fn settle(path: &Path, quiet: Duration) {
    if quiet.is_zero() {
        return;
    }
    let look = || {
        use std::os::unix::fs::MetadataExt;
        fs::metadata(path)
            .ok()
            .map(|m| (m.modified().ok(), m.len(), m.ino()))
    };
    let start = Instant::now();
    let mut seen = look();
    let mut since = Instant::now();
    while since.elapsed() < quiet && start.elapsed() < SETTLE_MAX {
        thread::sleep(Duration::from_millis(20));
        let now = look();
        if now != seen {
            seen = now;
            since = Instant::now();
        }
    }
}

/// The changes `.claude.json` needs, made to `doc`.
fn claude_json_changes(
    doc: &mut Obj<'_>,
    path: &Path,
    approve: Option<&str>,
    trust: &[String],
) -> Result<Vec<Change>> {
    let mut out = Vec::new();
    out.extend(set_true(
        doc,
        path,
        Dialog::Onboarding,
        "hasCompletedOnboarding",
    )?);
    if let Some(tail) = approve {
        let responses = object_at(doc, path, "customApiKeyResponses", || {
            // The shape Claude Code gives it when it records an approval.
            json!({"approved": [], "rejected": []})
        })?;
        let approved = responses.value_mut("approved", || Value::Array(Vec::new()))?;
        let Value::Array(list) = approved else {
            bail!(
                "{}: customApiKeyResponses.approved is not a JSON array (left unchanged)",
                path.display()
            );
        };
        if !list.iter().any(|v| v.as_str() == Some(tail)) {
            list.push(Value::String(tail.to_string()));
            out.push(Change {
                dialog: Dialog::ApiKey,
                file: path.to_path_buf(),
                key: vec!["customApiKeyResponses".into(), "approved".into()],
                value: None,
            });
        }
    }
    for dir in trust {
        let projects = object_at(doc, path, "projects", || json!({}))?;
        let project = projects.value_mut(dir, || Value::Object(Map::new()))?;
        let Value::Object(project) = project else {
            bail!(
                "{}: projects[{dir:?}] is not a JSON object (left unchanged)",
                path.display()
            );
        };
        if project.get("hasTrustDialogAccepted") != Some(&Value::Bool(true)) {
            project.insert("hasTrustDialogAccepted".into(), Value::Bool(true));
            out.push(Change {
                dialog: Dialog::Trust,
                file: path.to_path_buf(),
                key: vec![
                    "projects".into(),
                    dir.clone(),
                    "hasTrustDialogAccepted".into(),
                ],
                value: Some(Value::Bool(true)),
            });
        }
    }
    Ok(out)
}

/// Sets the top-level `key` to `true` unless it is; the change, if one was made.
fn set_true(doc: &mut Obj<'_>, path: &Path, dialog: Dialog, key: &str) -> Result<Option<Change>> {
    if doc.get(key)? == Some(Value::Bool(true)) {
        return Ok(None);
    }
    doc.insert(key, Value::Bool(true));
    Ok(Some(Change {
        dialog,
        file: path.to_path_buf(),
        key: vec![key.to_string()],
        value: Some(Value::Bool(true)),
    }))
}

/// The object at the top-level `key` (opened one level), made from `new` when missing.
fn object_at<'d, 'a>(
    doc: &'d mut Obj<'a>,
    path: &Path,
    key: &str,
    new: impl FnOnce() -> Value,
) -> Result<&'d mut Obj<'a>> {
    match doc.object(key, new)? {
        Some(m) => Ok(m),
        None => bail!(
            "{}: {key} is not a JSON object (left unchanged)",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(dir: &Path, trust: Vec<PathBuf>, skip: bool) -> Request {
        Request {
            config_dir: dir.to_path_buf(),
            claude_json: dir.join(".claude.json"),
            settings: dir.join("settings.json"),
            backups: dir.join("backups"),
            api_key: Some("  sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789\n".into()),
            trust,
            skip_permissions: skip,
            lock: LockOptions::default(),
            settle: Duration::ZERO,
            now: SystemTime::now(),
        }
    }

    #[test]
    fn the_approved_string_is_javascripts() {
        assert_eq!(
            approved_key(" sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 ").as_deref(),
            Some("qrstuvwxyz0123456789")
        );
        assert_eq!(approved_key("short").as_deref(), Some("short"));
        assert_eq!(approved_key(" \t\n"), None);
        // slice(-20) counts UTF-16 units: an astral character is two.
        let key = format!("x{}{}", "a".repeat(18), '😀');
        assert_eq!(approved_key(&key).unwrap(), format!("{}😀", "a".repeat(18)));
    }

    #[test]
    fn an_empty_config_dir_gets_every_setting_then_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = tmp.path().join("cfg");
        let work = tmp.path().join("work");
        fs::create_dir_all(&work).unwrap();
        let req = request(&cfg, vec![work.clone(), work.join(".")], true);
        let dry = prepare(&req, false).unwrap();
        assert!(dry.dry_run);
        assert!(!cfg.exists(), "a dry run writes nothing");
        let done = prepare(&req, true).unwrap();
        assert_eq!(done.changes, dry.changes);
        let dialogs: Vec<Dialog> = done.changes.iter().map(|c| c.dialog).collect();
        assert_eq!(
            dialogs,
            [
                Dialog::Onboarding,
                Dialog::ApiKey,
                Dialog::Trust,
                Dialog::Bypass
            ]
        );
        let real = fs::canonicalize(&work).unwrap();
        let want = format!(
            "{{\n  \"hasCompletedOnboarding\": true,\n  \"customApiKeyResponses\": {{\n    \"approved\": [\n      \"qrstuvwxyz0123456789\"\n    ],\n    \"rejected\": []\n  }},\n  \"projects\": {{\n    \"{}\": {{\n      \"hasTrustDialogAccepted\": true\n    }}\n  }}\n}}",
            real.display()
        );
        assert_eq!(fs::read_to_string(&req.claude_json).unwrap(), want);
        assert_eq!(
            fs::read_to_string(&req.settings).unwrap(),
            "{\n  \"skipDangerousModePermissionPrompt\": true\n}\n"
        );
        assert_eq!(
            done.files.iter().map(|f| f.action).collect::<Vec<_>>(),
            ["created", "created"]
        );
        let again = prepare(&req, true).unwrap();
        assert!(again.changes.is_empty());
        assert_eq!(
            again.files.iter().map(|f| f.action).collect::<Vec<_>>(),
            ["unchanged", "unchanged"]
        );
        assert_eq!(fs::read_to_string(&req.claude_json).unwrap(), want);
    }

    #[test]
    fn existing_keys_are_added_to_not_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join(".claude.json");
        let before = r#"{
  "numStartups": 3,
  "customApiKeyResponses": {
    "rejected": [
      "old"
    ],
    "approved": [
      "other"
    ]
  },
  "projects": {
    "/elsewhere": {
      "allowedTools": [],
      "hasTrustDialogAccepted": false
    }
  },
  "hasCompletedOnboarding": false,
  "userID": "abc"
}"#;
        fs::write(&p, before).unwrap();
        let req = Request {
            trust: vec![],
            ..request(tmp.path(), vec![], false)
        };
        let mut doc = crate::store::lazy::Doc::parse(before, &p).unwrap();
        let changes = claude_json_changes(
            doc.root(),
            &p,
            Some("qrstuvwxyz0123456789"),
            &["/elsewhere".into()],
        )
        .unwrap();
        assert_eq!(changes.len(), 3);
        assert_eq!(
            doc.render(true).unwrap(),
            before
                .replace(
                    "\"other\"\n",
                    "\"other\",\n      \"qrstuvwxyz0123456789\"\n"
                )
                .replace(
                    "\"hasTrustDialogAccepted\": false",
                    "\"hasTrustDialogAccepted\": true"
                )
                .replace(
                    "\"hasCompletedOnboarding\": false",
                    "\"hasCompletedOnboarding\": true"
                )
        );
        let done = prepare(&req, true).unwrap();
        assert_eq!(done.changes.len(), 2, "onboarding and the key");
        assert!(done.files[0].backup.is_some());
    }

    #[test]
    fn a_key_of_the_wrong_type_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join(".claude.json");
        for bad in [
            r#"{"projects": []}"#,
            r#"{"customApiKeyResponses": {"approved": "x"}}"#,
            r#"{"customApiKeyResponses": 1}"#,
        ] {
            fs::write(&p, bad).unwrap();
            let err =
                prepare(&request(tmp.path(), vec![tmp.path().into()], false), true).unwrap_err();
            assert!(format!("{err:#}").contains("left unchanged"), "{err:#}");
            assert_eq!(fs::read_to_string(&p).unwrap(), bad);
        }
        let err = prepare(
            &request(tmp.path(), vec![tmp.path().join("missing")], false),
            true,
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("not a directory"), "{err:#}");
    }
}
