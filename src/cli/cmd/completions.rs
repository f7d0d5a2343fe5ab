//! `teamctl completions`: the shell completion script, generated from the binary's own CLI.

use anyhow::Result;
use clap::Args;
use clap_complete::Shell;
use serde::Serialize;

use crate::cli::output::Output;

/// Print the completion script for a shell
///
/// The script is generated from this binary's own command line, so it always matches the
/// installed version; for bash, zsh and fish it is byte for byte the file committed under
/// completions/ (a test checks it). Where to put it is in the README's Install section. Needs
/// no config dir and no team.
///
/// With --json: `{"schema_version":1,"shell","script"}`. Exit 2 for an unknown shell.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl completions bash > ~/.local/share/bash-completion/completions/teamctl
  teamctl completions zsh > ~/.zfunc/_teamctl      # with fpath+=(~/.zfunc) in ~/.zshrc
  teamctl completions fish > ~/.config/fish/completions/teamctl.fish")]
pub(crate) struct CompletionsArgs {
    /// The shell to complete in
    #[arg(value_enum)]
    shell: Shell,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    shell: String,
    script: &'a str,
}

/// The script for `shell`, as `clap_complete` writes it for the binary `teamctl`.
pub(crate) fn script(shell: Shell, mut cli: clap::Command) -> Vec<u8> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cli, "teamctl", &mut buf);
    buf
}

pub(crate) fn run(out: Output, cli: clap::Command, args: CompletionsArgs) -> Result<()> {
    let bytes = script(args.shell, cli);
    if out.json {
        return out.json(&Json {
            schema_version: 1,
            shell: args.shell.to_string(),
            script: &String::from_utf8_lossy(&bytes),
        });
    }
    out.bytes(&bytes)
}
