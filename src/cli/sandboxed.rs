//! `run --sandbox`: the lead's tmux server started in a sandbox of its own (bubblewrap;
//! `ops::run::confine`), then `run` itself started again, unconfined, with `TMUX_TMPDIR` naming
//! that server's folder, so that everything it does with tmux reaches the sandboxed server and
//! the lead and its teammates run inside. Its exit code is this process's; a signal here is
//! passed on to it once (it ends its lead first), and the server is ended after it (unless
//! `--keep`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};
use teamctl::host::sandbox;
use teamctl::ops::run::Spec;
use teamctl::ops::run::confine::{self, Keeper, Place};
use teamctl::sandbox::Rules;

use crate::cli::context::Ctx;
use crate::cli::{env, signals};

/// Starts the sandbox's tmux server, runs `run` again in it, and exits as that run did.
pub(crate) fn run(ctx: &Ctx, spec: &Spec, claude: Option<&Path>) -> Result<()> {
    let leads = ctx.records.leads().context(
        "run --sandbox keeps its tmux server's socket in teamctl's data dir, and has none: set \
         TEAMCTL_DATA_DIR",
    )?;
    let bwrap = std::env::var_os(env::BWRAP_BIN)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let engine = sandbox::find(bwrap.as_deref(), std::env::var_os("PATH").as_deref(), false)?;
    let home = dirs::home_dir();
    let state = (!ctx.config_dir_chosen())
        .then(|| ctx.claude_json().ok())
        .flatten();
    let sockets = confine::socket_places(
        std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
        std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from),
    );
    let place = Place {
        layout: &ctx.layout,
        cwd: &spec.cwd,
        leads,
        name: &spec.name,
        home: home.as_deref(),
        claude: claude.unwrap_or(Path::new("/")),
        state: state.as_deref(),
        sockets: &sockets,
    };
    let (rules, dir) = confine::rules(&place, &engine)?;
    let file = dir.join("rules.json");
    std::fs::write(&file, serde_json::to_vec(&rules)?)
        .with_context(|| format!("could not write {}", file.display()))?;
    eprintln!(
        "sandbox: {} ({}): tmux server in {}",
        engine.kind.as_str(),
        engine.path,
        dir.display()
    );
    let keeper = Keeper::start(&rules, &dir, spec.keep)?;
    signals::defer();
    let code = again(&dir, &file);
    keeper.stop();
    let code = code?;
    if code != 0 {
        // The inner run printed its result and said why; its exit code is this one.
        std::process::exit(code);
    }
    Ok(())
}

/// This `teamctl run` again, with the sandbox's server as its tmux server; its exit code.
fn again(dir: &Path, rules: &Path) -> Result<i32> {
    let me = std::env::current_exe().context("could not find teamctl's own binary")?;
    let mut cmd = Command::new(me);
    cmd.args(std::env::args_os().skip(1))
        .env("TMUX_TMPDIR", dir)
        .env_remove("TMUX")
        .env(env::RUN_SANDBOX, rules);
    // Its own process group: the terminal's Ctrl-C reaches it once, through here.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().context("could not start run in the sandbox")?;
    let mut passed = false;
    loop {
        if let Some(status) = child.try_wait()? {
            use std::os::unix::process::ExitStatusExt;
            return Ok(status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)));
        }
        if signals::received() && !passed {
            passed = true;
            // SAFETY: kill with a pid this process started and has not reaped.
            unsafe {
                libc::kill(child.id() as i32, libc::SIGTERM);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The sandbox `run --sandbox` started this run in, when it did (read from the file it names
/// in `TEAMCTL_RUN_SANDBOX`), for the run's record.
pub(crate) fn rules_given() -> Result<Option<Rules>> {
    let Some(file) = std::env::var_os(env::RUN_SANDBOX) else {
        return Ok(None);
    };
    let bytes = std::fs::read(&file)
        .with_context(|| format!("could not read {}", Path::new(&file).display()))?;
    Ok(Some(
        serde_json::from_slice(&bytes).context("the sandbox's rules")?,
    ))
}
