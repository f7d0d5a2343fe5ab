//! A team's record as the verbs that write one show it (`export`, `run --export`,
//! `delete --export`).

use serde::Serialize;
use teamctl::ops::export::{Exported, Format};

use crate::cli::term::escape_line as esc;

/// A record in `--json`: what was written, or why it could not be (`error` set, the rest
/// null).
#[derive(Serialize)]
pub(crate) struct RecordJson {
    out: Option<String>,
    format: Option<Format>,
    files: Option<usize>,
    bytes: Option<u64>,
    size: Option<u64>,
    messages: Option<usize>,
    transcripts: Option<usize>,
    warnings: Vec<String>,
    error: Option<String>,
}

impl RecordJson {
    pub(crate) fn of(r: Result<&Exported, &str>) -> RecordJson {
        match r {
            Ok(d) => RecordJson {
                out: Some(d.out.display().to_string()),
                format: Some(d.format),
                files: Some(d.files),
                bytes: Some(d.bytes),
                size: Some(d.size),
                messages: Some(d.messages),
                transcripts: Some(d.transcripts),
                warnings: d.warnings.clone(),
                error: None,
            },
            Err(e) => RecordJson {
                out: None,
                format: None,
                files: None,
                bytes: None,
                size: None,
                messages: None,
                transcripts: None,
                warnings: Vec::new(),
                error: Some(e.to_string()),
            },
        }
    }
}

/// `PATH (8 files, 11568 bytes; 3 messages, 1 transcripts)`.
pub(crate) fn summary_line(d: &Exported) -> String {
    format!(
        "{} ({} files, {} bytes{}; {} messages, {} transcripts)",
        esc(&d.out.display().to_string()),
        d.files,
        d.bytes,
        match d.format {
            Format::TarGz => format!(", {} compressed", d.size),
            Format::Folder => String::new(),
        },
        d.messages,
        d.transcripts
    )
}
