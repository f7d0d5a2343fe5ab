//! Provisioning a team's files (spec §6): the race-safe check under Claude Code's config lock,
//! what a failed earlier attempt left cleared, the task folder, the inboxes with their briefs,
//! teamctl's private record, then `config.json`, published with `link(2)`.

use std::io;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use super::spec::{Creating, Launch, Spec, color_of};
use super::worktree::Trees;
use crate::error::Error;
use crate::host::claude::Permission;
use crate::sandbox::Rules;
use crate::store::dir::{Dir, Loc};
use crate::store::id;
use crate::store::lock::{self, LockGuard, LockOptions};
use crate::store::paths::{Layout, MemberName, TeamName};
use crate::store::{self, Entry};
use crate::team::config::{LEAD, TEAMCTL_KEY};
use crate::team::lead::{self, MemberLaunch};
use crate::team::model::NewMessage;

/// `config.json` of a new team in Claude Code's shape (spec §6), members without panes yet.
pub fn config_doc(
    spec: &Spec,
    trees: &Trees,
    lead_session_id: &str,
    now: DateTime<Utc>,
    tmux_session: Option<&str>,
) -> Entry {
    let team = spec.team.as_str();
    let ms = now.timestamp_millis();
    let cwd = spec.cwd.to_string_lossy();
    let mut members = vec![json!({
        "agentId": format!("{LEAD}@{team}"),
        "name": LEAD,
        "agentType": "team-lead",
        "joinedAt": ms,
        "tmuxPaneId": "leader",
        "cwd": cwd,
        "subscriptions": [],
        "backendType": "in-process",
    })];
    for (i, m) in spec.members.iter().enumerate() {
        let mut e = Map::new();
        e.insert("agentId".into(), format!("{}@{team}", m.name).into());
        e.insert("name".into(), m.name.as_str().into());
        e.insert(
            "agentType".into(),
            m.agent_type.as_deref().unwrap_or("general-purpose").into(),
        );
        // As Claude Code writes its own teammates: the model as given (an alias stays one).
        if let Some(model) = &m.model {
            e.insert("model".into(), model.as_str().into());
        }
        e.insert("color".into(), color_of(i).as_str().into());
        e.insert("planModeRequired".into(), false.into());
        e.insert("joinedAt".into(), ms.into());
        e.insert("tmuxPaneId".into(), "".into());
        e.insert(
            "cwd".into(),
            trees.cwd(spec, i).to_string_lossy().as_ref().into(),
        );
        e.insert("subscriptions".into(), json!([]));
        members.push(Value::Object(e));
    }
    let mut doc = Map::new();
    doc.insert("name".into(), team.into());
    if let Some(d) = &spec.description {
        doc.insert("description".into(), d.as_str().into());
    }
    doc.insert("createdAt".into(), ms.into());
    doc.insert("leadAgentId".into(), format!("{LEAD}@{team}").into());
    doc.insert("leadSessionId".into(), lead_session_id.into());
    doc.insert("members".into(), Value::Array(members));
    doc.insert(
        TEAMCTL_KEY.into(),
        json!({
            "leads": true,
            "version": env!("CARGO_PKG_VERSION"),
            "launch": match spec.launch { Launch::Tmux => "tmux", Launch::None => "none" },
            "tmuxSession": tmux_session,
        }),
    );
    doc
}

/// Provisioning: the race-safe check, the cleared folder, task folder, inboxes (with their
/// briefs, unless teammates are started in `tmux_session`: `write_briefs` writes them once
/// they have started), then `config.json`. Returns each brief's `msg_id`, in member order.
///
/// # Errors
/// "already exists", "busy" (another create holds the config lock), I/O.
pub fn provision(
    c: &Creating,
    trees: &Trees,
    lead_session_id: &str,
    tmux_session: Option<&str>,
) -> Result<Vec<String>> {
    let Creating {
        layout,
        spec,
        leads,
        now,
        lock: opts,
        ..
    } = *c;
    let team = &spec.team;
    let config = layout.config_path(team);
    // Anything named config.json (a symlink too) is a team that exists.
    if config.stat()?.is_some() {
        return Err(already_exists(layout, team));
    }
    let dir_loc = layout.team_dir(team);
    let dir = dir_loc
        .create_dir_all()
        .with_context(|| format!("could not create {}", dir_loc.display()))?;
    let guard = config_lock(&dir, team, &config, opts)?;
    if dir.stat("config.json")?.is_some() {
        return Err(already_exists(layout, team));
    }
    clear_leftovers(&dir, &dir_loc)?;
    fresh_task_folder(layout, team)?;
    let ids = inboxes(layout, &dir, spec)?;
    if tmux_session.is_none() {
        write_briefs(c, &ids)?;
    }

    // teamctl's private record that it leads this team, before the team exists: what decides
    // that teamctl speaks as its lead and may take it down (never config.json's own say-so).
    let mut record = lead::new_record(
        layout,
        team,
        lead_session_id,
        now.timestamp_millis(),
        Some(&spec.cwd),
    );
    record.tmux_session = tmux_session.map(String::from);
    record.launch = Some(launch_record(spec, trees, &[]));
    leads.record(layout, team, &record)?;

    let doc = config_doc(spec, trees, lead_session_id, now, tmux_session);
    publish_config(layout, &dir, team, &config, &doc)?;
    guard.release()?;
    Ok(ids)
}

/// Claude Code's own config lock, taken without waiting: a second create fails fast.
fn config_lock(dir: &Dir, team: &TeamName, config: &Loc, opts: &LockOptions) -> Result<LockGuard> {
    match lock::acquire_in(
        dir,
        "config.json",
        &LockOptions {
            timeout: Duration::ZERO,
            ..*opts
        },
    ) {
        Ok(g) => Ok(g),
        Err(e) if matches!(e.downcast_ref::<Error>(), Some(Error::LockTimeout { .. })) => {
            bail!(
                "team '{team}' is being created or updated by another process right now \
                 ({} is held)",
                lock::lock_dir(config).display()
            )
        }
        Err(e) => Err(e),
    }
}

/// What a failed earlier attempt left (never the lock we hold), removed without following
/// a symlink anywhere.
fn clear_leftovers(dir: &Dir, dir_loc: &Loc) -> Result<()> {
    for name in dir
        .names()
        .with_context(|| format!("could not list {}", dir_loc.display()))?
    {
        if name == "config.json.lock" {
            continue;
        }
        dir.remove_tree(&name)
            .with_context(|| format!("could not clear {}", dir_loc.join(&name).display()))?;
    }
    Ok(())
}

/// The team's task folder, empty.
fn fresh_task_folder(layout: &Layout, team: &TeamName) -> Result<()> {
    let tasks_root = layout.tasks_root();
    let tasks = layout.tasks_dir(team);
    tasks_root
        .create_dir_all()
        .and_then(|d| d.remove_tree(team.as_str()))
        .with_context(|| format!("could not clear {}", tasks.display()))?;
    tasks
        .create_dir_all()
        .with_context(|| format!("could not create {}", tasks.display()))?;
    Ok(())
}

/// The lead's inbox `[]`, and each teammate's inbox `[]`. Returns the `msg_id` each brief
/// will have, in member order.
fn inboxes(layout: &Layout, dir: &Dir, spec: &Spec) -> Result<Vec<String>> {
    let team = &spec.team;
    dir.sub_create("inboxes", 0o777)
        .with_context(|| format!("could not create {}", layout.inboxes_dir(team).display()))?;
    let lead = MemberName::parse(LEAD)?;
    store::atomic_write(&layout.inbox_path(team, &lead), b"[]")?;
    let mut ids = Vec::new();
    for m in &spec.members {
        store::atomic_write(&layout.inbox_path(team, &m.name), b"[]")?;
        ids.push(id::random_msg_id().to_string());
    }
    Ok(ids)
}

/// Each teammate's brief appended to its inbox under the inbox lock, with the `msg_id` of `ids`
/// (in member order).
///
/// # Errors
/// A lock or write failure.
pub(super) fn write_briefs(c: &Creating, ids: &[String]) -> Result<()> {
    let Creating {
        layout,
        spec,
        now,
        lock: opts,
        ..
    } = *c;
    for (m, msg_id) in spec.members.iter().zip(ids) {
        let msg = NewMessage {
            from: LEAD.into(),
            text: m.brief.clone(),
            summary: None,
            timestamp: now,
            color: None,
            msg_id: msg_id.clone(),
        };
        store::append(
            &layout.inbox_path(&spec.team, &m.name),
            &msg.to_entry(),
            false,
            opts,
        )?;
    }
    Ok(())
}

/// `config.json` written to a temp file, then published with link(2), which fails if one
/// appeared meanwhile: never an overwrite.
fn publish_config(
    layout: &Layout,
    dir: &Dir,
    team: &TeamName,
    config: &Loc,
    doc: &Entry,
) -> Result<()> {
    let tmp = format!("config.json.tmp.{}", id::temp_suffix());
    store::atomic_write_in(dir, &tmp, store::render(doc).as_bytes())?;
    let linked = dir.hard_link(&tmp, "config.json");
    let _ = dir.unlink(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(already_exists(layout, team)),
        Err(e) => Err(e).with_context(|| format!("could not create {}", config.display())),
    }
}

pub(super) fn already_exists(layout: &Layout, team: &TeamName) -> anyhow::Error {
    anyhow::anyhow!(
        "team '{team}' already exists ({}); it is never overwritten: pick another name or \
         remove it with `teamctl delete {team}`",
        layout.config_path(team).display()
    )
}

/// A permission as the record keeps it: the mode, and whether prompts are skipped.
fn permission_parts(p: &Permission) -> (Option<String>, bool) {
    match p {
        Permission::Default => (None, false),
        Permission::Mode(m) => (Some(m.clone()), false),
        Permission::Skip => (None, true),
    }
}

/// How `spec`'s teammates are started, for teamctl's record (a restart starts each so again):
/// `trees` are their worktrees and `rules` their sandboxes, in member order (`rules` empty:
/// none known yet).
pub(super) fn launch_record(
    spec: &Spec,
    trees: &Trees,
    rules: &[Option<Rules>],
) -> crate::team::lead::Launch {
    let members: Vec<MemberLaunch> = spec
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let (permission_mode, skip_permissions) = permission_parts(&m.permission);
            MemberLaunch {
                name: m.name.to_string(),
                model: m.model.clone(),
                agent_type: m.agent_type.clone(),
                permission_mode,
                skip_permissions,
                runtime: m.runtime.clone(),
                cwd: Some(trees.cwd(spec, i).to_string_lossy().into_owned()),
                worktree: trees.get(i).map(|t| t.tree.clone()),
                sandbox: rules.get(i).cloned().flatten(),
            }
        })
        .collect();
    // The team-wide fields say what every teammate shares, for a reader of an older
    // record; each teammate's own entry is what a restart uses.
    let first = members.first().cloned().unwrap_or_default();
    let same = |f: &dyn Fn(&MemberLaunch) -> bool| members.iter().all(f);
    crate::team::lead::Launch {
        permission_mode: first
            .permission_mode
            .clone()
            .filter(|p| same(&|m| m.permission_mode.as_ref() == Some(p))),
        skip_permissions: first.skip_permissions && same(&|m| m.skip_permissions),
        model: first
            .model
            .clone()
            .filter(|x| same(&|m| m.model.as_ref() == Some(x))),
        agent_type: first
            .agent_type
            .clone()
            .filter(|x| same(&|m| m.agent_type.as_ref() == Some(x))),
        members,
    }
}
