//! The shared task list, `tasks/<team>/<id>.json`: read with its computed state (blocked,
//! ready), and changed exactly as Claude Code changes it.
//!
//! Locks, as Claude Code takes them (spec §7): the list lock is the lock directory of the empty
//! anchor file `.lock` (so `.lock.lock`), held to allocate an id
//! (`max(numeric *.json, .highwatermark) + 1`) and to delete a task; every other change takes
//! the task's own lock directory `<id>.json.lock`, re-reads the task and merges the change the
//! way `{...old, ...patch}` does (existing keys keep their place, new keys go last, an
//! unassigned owner is removed, never written as `null`). A dependency is recorded on both
//! tasks, each under its own lock. Blocked and ready are computed, never stored.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::usage;
use crate::store::dir::{Dir, Kind, Loc};
use crate::store::lock::{self, LockOptions};
use crate::store::{self, Entry};

/// The statuses Claude Code stores.
pub const STATUSES: [&str; 3] = ["pending", "in_progress", "completed"];

/// Checks a task id typed by a user: decimal digits, as Claude Code allocates them.
///
/// # Errors
/// A usage error for anything else (which also keeps paths out of ids).
pub fn parse_id(s: &str) -> Result<String> {
    let s = s.strip_prefix('#').unwrap_or(s);
    if is_id(s) {
        Ok(s.to_string())
    } else {
        Err(usage(format!(
            "invalid task id '{s}': task ids are numbers like 3"
        )))
    }
}

/// Whether `s` is a task id: 1 to 19 decimal digits. A task's file is `<id>.json`, and only
/// such names are ever joined into a path.
pub fn is_id(s: &str) -> bool {
    (1..=19).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
}

/// One task file.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// The file.
    pub path: PathBuf,
    /// Its JSON object, keys in file order.
    pub raw: Entry,
    /// `id`.
    pub id: String,
    /// `subject`.
    pub subject: String,
    /// `description` (empty when missing).
    pub description: String,
    /// `activeForm`.
    pub active_form: Option<String>,
    /// `status`: one of [`STATUSES`].
    pub status: String,
    /// `owner`, when set.
    pub owner: Option<String>,
    /// `blocks`: ids this task blocks.
    pub blocks: Vec<String>,
    /// `blockedBy`: ids that block this task.
    pub blocked_by: Vec<String>,
    /// `metadata`.
    pub metadata: Option<Value>,
}

impl Task {
    /// Reads a task from its JSON object; the error says which field is wrong.
    ///
    /// # Errors
    /// A missing or mistyped field.
    pub fn from_raw(raw: Entry, path: PathBuf) -> Result<Task, String> {
        let string = |k: &str| match raw.get(k) {
            Some(Value::String(s)) => Ok(Some(s.clone())),
            None => Ok(None),
            Some(_) => Err(format!("'{k}' is not a string")),
        };
        let ids = |k: &str| match raw.get(k) {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(String::from)
                        .ok_or(format!("'{k}' holds a non-string"))
                })
                .collect(),
            Some(_) => Err(format!("'{k}' is not an array")),
        };
        let id = string("id")?.ok_or("'id' is missing")?;
        let status = string("status")?.ok_or("'status' is missing")?;
        if !STATUSES.contains(&status.as_str()) {
            return Err(format!(
                "'status' is '{status}', not one of {}",
                STATUSES.join(", ")
            ));
        }
        Ok(Task {
            subject: string("subject")?.ok_or("'subject' is missing")?,
            description: string("description")?.unwrap_or_default(),
            active_form: string("activeForm")?,
            owner: string("owner")?,
            blocks: ids("blocks")?,
            blocked_by: ids("blockedBy")?,
            metadata: raw.get("metadata").cloned(),
            status,
            id,
            path,
            raw,
        })
    }

    /// Reads the task in file `<id>.json`: as [`Task::from_raw`], and its `id` must be `id`
    /// (a task is known by its file's name; an `id` that says otherwise is not trusted).
    ///
    /// # Errors
    /// As [`Task::from_raw`], and an `id` that is not the file's.
    pub fn from_file(raw: Entry, path: &Path, id: &str) -> Result<Task, String> {
        let task = Task::from_raw(raw, path.to_path_buf())?;
        if task.id != id {
            return Err(format!(
                "its 'id' is {}, not {id} as its file name says",
                crate::store::paths::quote(&task.id)
            ));
        }
        Ok(task)
    }

    /// Whether `metadata._internal` is truthy (Claude Code hides such tasks).
    pub fn is_internal(&self) -> bool {
        match self.metadata.as_ref().and_then(|m| m.get("_internal")) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Number(n)) => n.as_f64() != Some(0.0),
            Some(_) => true,
        }
    }
}

/// A task as teamctl prints it (`tasks --json`). Every key is always present.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskView {
    /// Task id.
    pub id: String,
    /// Subject.
    pub subject: String,
    /// Description.
    pub description: String,
    /// Present-continuous form shown while in progress.
    pub active_form: Option<String>,
    /// Stored status.
    pub status: String,
    /// Owner, if any.
    pub owner: Option<String>,
    /// Ids this task blocks.
    pub blocks: Vec<String>,
    /// Ids that block it.
    pub blocked_by: Vec<String>,
    /// Whether some id in `blocked_by` is an existing task that is not completed.
    pub blocked: bool,
    /// Those ids.
    pub open_blockers: Vec<String>,
    /// Pending, no owner, not blocked: a teammate may pick it up.
    pub ready: bool,
    /// `metadata` as stored.
    pub metadata: Option<Value>,
}

/// A file in the task folder that is not a valid task (it is left as it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub reason: String,
}

/// The whole task list of a team.
#[derive(Debug, Clone, Default)]
pub struct Board {
    /// Valid tasks, by id in numeric order.
    pub tasks: Vec<Task>,
    /// Files that are not valid tasks.
    pub skipped: Vec<Skipped>,
}

impl Board {
    /// Reads every `*.json` in `dir` (not dot files) without locks. A missing folder is an
    /// empty list.
    ///
    /// # Errors
    /// When the folder cannot be listed.
    pub fn load(dir: &Loc) -> Result<Board> {
        let handle = match dir.open_dir() {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Board::default()),
            Err(e) => return Err(e).with_context(|| format!("could not list {}", dir.display())),
        };
        let names = handle
            .names()
            .with_context(|| format!("could not list {}", dir.display()))?;
        let mut board = Board::default();
        for name in names {
            let Some(name) = name.to_str() else {
                continue;
            };
            if name.starts_with('.') || !name.ends_with(".json") {
                continue;
            }
            let path = dir.join(name);
            let Some(id) = name.strip_suffix(".json").filter(|id| is_id(id)) else {
                board.skipped.push(Skipped {
                    path: path.to_path_buf(),
                    reason: "its name is not <number>.json, so it is not a task file".into(),
                });
                continue;
            };
            match handle.stat(name) {
                Ok(Some(i)) if i.kind == Kind::File => {}
                // A task deleted while we listed is simply gone.
                Ok(None) => continue,
                Ok(Some(i)) => {
                    board.skipped.push(Skipped {
                        path: path.to_path_buf(),
                        reason: format!("it is {}, not a regular file", i.kind.describe()),
                    });
                    continue;
                }
                Err(e) => {
                    board.skipped.push(Skipped {
                        path: path.to_path_buf(),
                        reason: e.to_string(),
                    });
                    continue;
                }
            }
            let parsed = store::read_unlocked(&path, |b| store::parse_object(b, &path))
                .map_err(|e| format!("{e:#}"))
                .and_then(|raw| raw.ok_or_else(|| "it disappeared".to_string()))
                .and_then(|raw| Task::from_file(raw, &path, id));
            match parsed {
                Ok(task) => board.tasks.push(task),
                Err(reason) if reason == "it disappeared" => {}
                Err(reason) => board.skipped.push(Skipped {
                    path: path.to_path_buf(),
                    reason,
                }),
            }
        }
        board.tasks.sort_by(|a, b| id_order(&a.id, &b.id));
        Ok(board)
    }

    /// The task with this id.
    pub fn get(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.id == id)
    }

    /// The ids in `task.blocked_by` that are existing tasks not yet completed.
    pub fn open_blockers(&self, task: &Task) -> Vec<String> {
        let status: HashMap<&str, &str> = self
            .tasks
            .iter()
            .map(|t| (t.id.as_str(), t.status.as_str()))
            .collect();
        task.blocked_by
            .iter()
            .filter(|id| status.get(id.as_str()).is_some_and(|s| *s != "completed"))
            .cloned()
            .collect()
    }

    /// The printed view of `task`, with its computed state.
    pub fn view(&self, task: &Task) -> TaskView {
        let open_blockers = self.open_blockers(task);
        let blocked = !open_blockers.is_empty();
        TaskView {
            id: task.id.clone(),
            subject: task.subject.clone(),
            description: task.description.clone(),
            active_form: task.active_form.clone(),
            status: task.status.clone(),
            owner: task.owner.clone(),
            blocks: task.blocks.clone(),
            blocked_by: task.blocked_by.clone(),
            ready: task.status == "pending" && task.owner.is_none() && !blocked,
            blocked,
            open_blockers,
            metadata: task.metadata.clone(),
        }
    }

    /// Ids of the tasks that are ready now.
    pub fn ready_ids(&self) -> Vec<String> {
        self.tasks
            .iter()
            .filter(|t| self.view(t).ready)
            .map(|t| t.id.clone())
            .collect()
    }
}

/// Numeric order for numeric ids, then the rest by text.
fn id_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        _ => a.cmp(b),
    }
}

/// `<dir>/<id>.json`; `id` must be a task id ([`is_id`]), which keeps it one plain name.
fn task_path(dir: &Loc, id: &str) -> Result<Loc> {
    if !is_id(id) {
        return Err(usage(format!(
            "invalid task id {}: task ids are numbers like 3",
            crate::store::paths::quote(id)
        )));
    }
    Ok(dir.join(format!("{id}.json")))
}

fn load_one(dir: &Loc, id: &str) -> Result<Task> {
    let path = task_path(dir, id)?;
    let raw = store::read_unlocked(&path, |b| store::parse_object(b, &path))?
        .ok_or_else(|| anyhow::anyhow!("no task #{id} in {}", dir.display()))?;
    Task::from_file(raw, &path, id).map_err(|why| {
        anyhow::anyhow!(
            "{} is not a valid task: {why} (left unchanged)",
            path.display()
        )
    })
}

/// A task to create.
#[derive(Debug, Clone, Default)]
pub struct NewTask {
    /// Subject.
    pub subject: String,
    /// Description; Claude Code defaults it to the subject.
    pub description: Option<String>,
    /// `activeForm`.
    pub active_form: Option<String>,
    /// Owner.
    pub owner: Option<String>,
    /// Ids of existing tasks that block it.
    pub blocked_by: Vec<String>,
}

/// Creates a task with the next id, under the list lock, in Claude Code's key order
/// (`id, subject, description, activeForm?, status, owner?, blocks, blockedBy`), then records
/// it in each blocker's `blocks` under that task's lock. Returns the new task.
///
/// # Errors
/// An unknown blocker (nothing is created), lock timeout, I/O.
pub fn create(dir: &Loc, new: &NewTask, opts: &LockOptions) -> Result<Task> {
    if new.subject.trim().is_empty() {
        return Err(usage("the task subject is empty"));
    }
    for b in &new.blocked_by {
        load_one(dir, b).with_context(|| format!("could not add a task blocked by #{b}"))?;
    }
    let handle = dir
        .create_dir_all()
        .with_context(|| format!("could not create {}", dir.display()))?;
    // Checked before the list lock is taken, so a FIFO there never holds it.
    check_list_files(&handle)?;
    let guard = list_lock(&handle, opts)?;
    let id = next_id(&handle)?.to_string();
    let mut raw = Map::new();
    raw.insert("id".into(), id.clone().into());
    raw.insert("subject".into(), new.subject.clone().into());
    raw.insert(
        "description".into(),
        new.description
            .clone()
            .unwrap_or(new.subject.clone())
            .into(),
    );
    if let Some(a) = &new.active_form {
        raw.insert("activeForm".into(), a.clone().into());
    }
    raw.insert("status".into(), "pending".into());
    if let Some(o) = &new.owner {
        raw.insert("owner".into(), o.clone().into());
    }
    raw.insert("blocks".into(), Value::Array(Vec::new()));
    let blocked_by = new.blocked_by.iter().cloned().map(Value::String).collect();
    raw.insert("blockedBy".into(), Value::Array(blocked_by));
    task_path(dir, &id)?;
    let bytes = store::render(&raw);
    guard.verify()?;
    store::atomic_write_in(&handle, &format!("{id}.json"), bytes.as_bytes())?;
    guard.release()?;
    for b in &new.blocked_by {
        add_ref(dir, b, "blocks", &id, opts)?;
    }
    load_one(dir, &id)
}

/// The list's anchor file `.lock` (made empty when missing, as Claude Code does) and
/// `.highwatermark` must be regular files when they exist; checked before the list lock.
fn check_list_files(dir: &Dir) -> Result<()> {
    for name in [".lock", HIGH_WATER_MARK] {
        dir.expect_file(name)
            .with_context(|| format!("could not use the task list {}", dir.path().display()))?;
    }
    match dir.create_new(".lock", 0o666) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e)
            .with_context(|| format!("could not create {}", dir.path().join(".lock").display())),
    }
}

/// The list lock: the lock directory of the anchor `.lock` (`.lock.lock`).
fn list_lock(dir: &Dir, opts: &LockOptions) -> Result<lock::LockGuard> {
    lock::acquire_in(dir, ".lock", opts)
}

const HIGH_WATER_MARK: &str = ".highwatermark";

/// `max(numeric *.json names, .highwatermark) + 1`; an error, never a wrap, when that does not
/// fit (a planted `.highwatermark` of 18446744073709551615 must not make ids start over).
fn next_id(dir: &Dir) -> Result<u64> {
    let mut max = high_water_mark(dir)?;
    let names = dir
        .names()
        .with_context(|| format!("could not list {}", dir.path().display()))?;
    for name in names {
        let Some(n) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
            continue;
        };
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let n: u64 = n
            .parse()
            .map_err(|_| ids_exhausted(dir, &name.to_string_lossy()))?;
        max = max.max(n);
    }
    let next = max
        .checked_add(1)
        .filter(|n| is_id(&n.to_string()))
        .ok_or_else(|| ids_exhausted(dir, &max.to_string()))?;
    Ok(next)
}

fn ids_exhausted(dir: &Dir, what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "no task id left in {}: the highest id in use ({}) leaves no next one (a planted \
         .highwatermark or task file?); nothing was written",
        dir.path().display(),
        crate::store::paths::quote(what)
    )
}

/// The id in `.highwatermark` (0 when missing, empty or not a number, as Claude Code's
/// `parseInt` or 0). A number too large for an id is an error. Read without blocking: only a
/// regular file is read.
fn high_water_mark(dir: &Dir) -> Result<u64> {
    let path = dir.path().join(HIGH_WATER_MARK);
    let bytes = dir
        .read(HIGH_WATER_MARK)
        .with_context(|| format!("could not read {}", path.display()))?
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let digits: &str = {
        let t = text.trim();
        let end = t
            .bytes()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(t.len());
        &t[..end]
    };
    if digits.is_empty() {
        return Ok(0);
    }
    digits
        .parse()
        .map_err(|_| ids_exhausted(dir, &format!(".highwatermark {digits}")))
}

/// Adds `id` to the id list `key` (`blocks` or `blockedBy`) of task `target`, under its lock.
fn add_ref(dir: &Loc, target: &str, key: &str, id: &str, opts: &LockOptions) -> Result<()> {
    modify(dir, target, opts, |raw| {
        let list = raw.entry(key).or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(items) = list else {
            bail!("'{key}' of task #{target} is not an array")
        };
        if items.iter().any(|v| v.as_str() == Some(id)) {
            return Ok(false);
        }
        items.push(Value::String(id.to_string()));
        Ok(true)
    })
    .map(|_| ())
}

/// The locked read-merge-write of one task (`<id>.json.lock`); `change` returns whether it
/// changed anything. Returns the task before and after.
fn modify(
    dir: &Loc,
    id: &str,
    opts: &LockOptions,
    change: impl FnOnce(&mut Entry) -> Result<bool>,
) -> Result<(Task, Task)> {
    let path = task_path(dir, id)?;
    if !path.stat()?.is_some_and(|i| i.kind == Kind::File) {
        bail!("no task #{id} in {}", dir.display());
    }
    store::rewrite(
        &path,
        opts,
        |b| store::parse_object(b, &path),
        |raw| {
            let before = Task::from_file(raw.clone(), &path, id).map_err(|why| {
                anyhow::anyhow!(
                    "{} is not a valid task: {why} (left unchanged)",
                    path.display()
                )
            })?;
            let changed = change(raw)?;
            let after = Task::from_file(raw.clone(), &path, id).map_err(anyhow::Error::msg)?;
            Ok((changed, (before, after)))
        },
    )
}

/// Changes to one task. `None` leaves a field alone.
#[derive(Debug, Clone, Default)]
pub struct Patch {
    /// New status (one of [`STATUSES`]).
    pub status: Option<String>,
    /// `Some(Some(name))` assigns, `Some(None)` unassigns (removes the key).
    pub owner: Option<Option<String>>,
    /// New subject.
    pub subject: Option<String>,
    /// New description.
    pub description: Option<String>,
    /// New `activeForm`.
    pub active_form: Option<String>,
}

/// Applies `patch` to task `id` under its lock, merging like `{...old, ...patch}`. Returns
/// the task before and after.
///
/// # Errors
/// An unknown task or status, an invalid task file (left unchanged), lock timeout, I/O.
pub fn update(dir: &Loc, id: &str, patch: &Patch, opts: &LockOptions) -> Result<(Task, Task)> {
    if let Some(s) = &patch.status
        && !STATUSES.contains(&s.as_str())
    {
        return Err(usage(format!(
            "invalid status '{s}': use {}",
            STATUSES.join(", ")
        )));
    }
    modify(dir, id, opts, |raw| {
        let before = raw.clone();
        let mut set = |k: &str, v: &Option<String>| {
            if let Some(v) = v {
                raw.insert(k.to_string(), Value::String(v.clone()));
            }
        };
        set("subject", &patch.subject);
        set("description", &patch.description);
        set("activeForm", &patch.active_form);
        set("status", &patch.status);
        match &patch.owner {
            Some(Some(o)) => {
                raw.insert("owner".into(), Value::String(o.clone()));
            }
            Some(None) => {
                raw.shift_remove("owner");
            }
            None => {}
        }
        Ok(*raw != before)
    })
}

/// Records that `blocker` blocks `blocked`: `blockedBy` on one, `blocks` on the other, each
/// under its own task lock.
///
/// # Errors
/// Either task unknown, a task blocking itself, lock timeout, I/O.
pub fn link(dir: &Loc, blocker: &str, blocked: &str, opts: &LockOptions) -> Result<()> {
    if blocker == blocked {
        return Err(usage(format!("task #{blocker} cannot block itself")));
    }
    load_one(dir, blocker)?;
    add_ref(dir, blocked, "blockedBy", blocker, opts)?;
    add_ref(dir, blocker, "blocks", blocked, opts)
}

/// Why a claim was refused (Claude Code's `claimTask` reasons).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Someone else owns it.
    AlreadyClaimed(String),
    /// It is completed.
    AlreadyResolved,
    /// These existing tasks block it and are not completed.
    Blocked(Vec<String>),
}

impl Refusal {
    /// Claude Code's name for the reason.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::AlreadyClaimed(_) => "already_claimed",
            Refusal::AlreadyResolved => "already_resolved",
            Refusal::Blocked(_) => "blocked",
        }
    }
}

/// A refused claim, as an error the CLI reports with exit code 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRefused {
    /// The task.
    pub id: String,
    /// Why.
    pub refusal: Refusal,
}

impl std::fmt::Display for ClaimRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let id = &self.id;
        match &self.refusal {
            Refusal::AlreadyClaimed(o) => write!(f, "task #{id} is already claimed by {o}"),
            Refusal::AlreadyResolved => write!(f, "task #{id} is already completed"),
            Refusal::Blocked(ids) => {
                let ids: Vec<String> = ids.iter().map(|i| format!("#{i}")).collect();
                write!(
                    f,
                    "task #{id} is blocked by {}, not completed yet",
                    ids.join(", ")
                )
            }
        }?;
        write!(f, " ({})", self.refusal.code())
    }
}

impl std::error::Error for ClaimRefused {}

/// Claims task `id` for `who` under its lock, with Claude Code's rules; on success sets the
/// owner and `in_progress`. Returns the task after.
///
/// # Errors
/// [`ClaimRefused`], an unknown task, lock timeout, I/O.
pub fn claim(dir: &Loc, id: &str, who: &str, opts: &LockOptions) -> Result<Task> {
    let (_, after) = modify(dir, id, opts, |raw| {
        let task = Task::from_raw(raw.clone(), PathBuf::new()).map_err(anyhow::Error::msg)?;
        let refusal = match &task.owner {
            Some(o) if o != who => Some(Refusal::AlreadyClaimed(o.clone())),
            _ if task.status == "completed" => Some(Refusal::AlreadyResolved),
            _ => {
                // Read under this task's lock, as Claude Code does: the blockers' own state.
                let board = Board::load(dir)?;
                let open = board.open_blockers(&task);
                (!open.is_empty()).then_some(Refusal::Blocked(open))
            }
        };
        if let Some(refusal) = refusal {
            return Err(ClaimRefused {
                id: id.to_string(),
                refusal,
            }
            .into());
        }
        let before = raw.clone();
        raw.insert("owner".into(), who.into());
        raw.insert("status".into(), "in_progress".into());
        Ok(*raw != before)
    })?;
    Ok(after)
}

/// What a delete did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removed {
    /// The tasks whose `blocks` or `blockedBy` no longer name the deleted one.
    pub changed: Vec<String>,
    /// The tasks that still name it, and why they could not be changed (the task itself is
    /// deleted: such a reference names a task that no longer exists, which blocks nothing).
    pub not_changed: Vec<(String, String)>,
}

/// Deletes task `id` as Claude Code does: under the list lock raise `.highwatermark` to the id
/// (so it is never reused) and remove the file; then remove the id from every other task's
/// `blocks` and `blockedBy`, each under its own lock. A task that cannot be changed then is
/// reported in [`Removed::not_changed`], not as an error: the delete has happened.
///
/// # Errors
/// An unknown task, lock timeout, I/O (before the file is removed).
pub fn delete(dir: &Loc, id: &str, opts: &LockOptions) -> Result<Removed> {
    load_one(dir, id)?;
    let handle = dir
        .open_dir()
        .with_context(|| format!("could not open {}", dir.display()))?;
    check_list_files(&handle)?;
    let guard = list_lock(&handle, opts)?;
    let n: u64 = id.parse().unwrap_or(0);
    if n > high_water_mark(&handle)? {
        store::atomic_write_in(&handle, HIGH_WATER_MARK, n.to_string().as_bytes())?;
    }
    let name = format!("{id}.json");
    handle
        .unlink(&name)
        .with_context(|| format!("could not remove {}", dir.join(&name).display()))?;
    guard.release()?;
    let mut removed = Removed::default();
    let board = match Board::load(dir) {
        Ok(b) => b,
        Err(e) => {
            removed.not_changed.push(("*".into(), format!("{e:#}")));
            return Ok(removed);
        }
    };
    for other in board.tasks {
        if !other.blocks.iter().any(|b| b == id) && !other.blocked_by.iter().any(|b| b == id) {
            continue;
        }
        let result = modify(dir, &other.id, opts, |raw| {
            let before = raw.clone();
            for key in ["blocks", "blockedBy"] {
                if let Some(Value::Array(items)) = raw.get_mut(key) {
                    items.retain(|v| v.as_str() != Some(id));
                }
            }
            Ok(*raw != before)
        });
        match result {
            Ok(_) => removed.changed.push(other.id),
            Err(e) => removed.not_changed.push((other.id, format!("{e:#}"))),
        }
    }
    Ok(removed)
}
