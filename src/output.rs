//! Everything the commands print: JSON documents, tables and lines on stdout; warnings and
//! hints on stderr.

use std::io::{self, Write};

use anyhow::Result;
use serde::Serialize;
use tabled::Table;
use tabled::settings::Style;

/// Where results go and in which form.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Output {
    pub(crate) json: bool,
}

impl Output {
    /// One compact JSON document and a newline.
    pub(crate) fn json<T: Serialize>(&self, value: &T) -> Result<()> {
        let mut out = io::stdout().lock();
        serde_json::to_writer(&mut out, value)?;
        writeln!(out)?;
        out.flush()?;
        Ok(())
    }

    /// One line of human output.
    pub(crate) fn line(&self, text: &str) -> Result<()> {
        let mut out = io::stdout().lock();
        writeln!(out, "{text}")?;
        Ok(())
    }

    /// Bytes as they are (a generated script).
    pub(crate) fn bytes(&self, bytes: &[u8]) -> Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(bytes)?;
        out.flush()?;
        Ok(())
    }

    /// A table of rows (the first row is the header).
    pub(crate) fn table(&self, rows: Vec<Vec<String>>) -> Result<()> {
        let mut table = tabled::builder::Builder::from(rows).build();
        table.with(Style::blank());
        let text = Table::to_string(&table);
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        self.line(&lines.join("\n"))
    }
}

/// `warning: …` on stderr.
pub(crate) fn warn(msg: &str) {
    eprintln!("warning: {msg}");
}

/// `hint: …` on stderr.
pub(crate) fn hint(msg: &str) {
    eprintln!("hint: {msg}");
}
