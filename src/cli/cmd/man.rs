//! `teamctl man`: write the man pages, generated from the binary's own CLI.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;

use crate::cli::output::Output;

/// Write the man pages (teamctl.1 and one teamctl-<command>.1 per command) into a directory
///
/// The pages are generated from this binary's own command line, byte for byte the files
/// committed under man/man1/. The directory is created if needed; files of the same name in
/// it are replaced. Prints the path of each page written. Needs no config dir and no team.
///
/// With --json: `{"schema_version":1,"dir","files":[path…]}`. Exit 1 when the directory cannot
/// be created or written.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl man --out ~/.local/share/man/man1 && man teamctl-send
  sudo teamctl man --out /usr/local/share/man/man1")]
pub(crate) struct ManArgs {
    /// The directory to write the pages into (a man1 folder on your MANPATH)
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

#[derive(Serialize)]
struct Json {
    schema_version: u32,
    dir: String,
    files: Vec<String>,
}

/// Writes every page into `dir` (which must exist), exactly as `clap_mangen::generate_to`
/// does (the same walk, hidden commands skipped), and returns the paths written, sorted.
pub(crate) fn write_pages(cli: clap::Command, dir: &Path) -> Result<Vec<PathBuf>> {
    fn walk(cmd: clap::Command, dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
            walk(sub, dir, out)?;
        }
        out.push(clap_mangen::Man::new(cmd).generate_to(dir)?);
        Ok(())
    }
    let mut cli = cli.disable_help_subcommand(true);
    cli.build();
    let mut out = Vec::new();
    walk(cli, dir, &mut out)
        .with_context(|| format!("could not write the man pages into {}", dir.display()))?;
    out.sort();
    Ok(out)
}

pub(crate) fn run(out: Output, cli: clap::Command, args: ManArgs) -> Result<()> {
    fs::create_dir_all(&args.out)
        .with_context(|| format!("could not create {}", args.out.display()))?;
    let files: Vec<String> = write_pages(cli, &args.out)?
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if out.json {
        return out.json(&Json {
            schema_version: 1,
            dir: args.out.display().to_string(),
            files,
        });
    }
    for f in &files {
        out.line(f)?;
    }
    Ok(())
}
