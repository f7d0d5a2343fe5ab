//! Everything the commands print: JSON documents, tables and lines on stdout; warnings and
//! hints on stderr. Human output passes through [`crate::cli::term`], so no control character read
//! from a file reaches the terminal; JSON keeps every character (serde escapes what JSON must).

use std::io::{self, Write};

use anyhow::Result;
use serde::Serialize;
use tabled::Table;
use tabled::settings::Style;

use crate::cli::term;

/// Where results go and in which form.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Output {
    pub(crate) json: bool,
}

impl Output {
    /// One compact JSON document and a newline.
    pub(crate) fn json<T: Serialize>(&self, value: &T) -> Result<()> {
        let mut out = io::stdout().lock();
        write_json(&mut out, value)?;
        out.flush()?;
        Ok(())
    }

    /// One line of human output (or several, joined with `\n` by the caller). Fields read from
    /// files must already have gone through [`term::escape_line`] (or [`term::escape_block`]);
    /// any control character left except `\n` is escaped here.
    pub(crate) fn line(&self, text: &str) -> Result<()> {
        let mut out = io::stdout().lock();
        writeln!(out, "{}", term::escape_composed(text))?;
        Ok(())
    }

    /// Bytes as they are: a script teamctl generated itself (never teammate text).
    pub(crate) fn bytes(&self, bytes: &[u8]) -> Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(bytes)?;
        out.flush()?;
        Ok(())
    }

    /// A table of rows (the first row is the header). Every cell is one line
    /// ([`term::escape_line`]); the first cell of a row, which starts the printed line, is
    /// quoted unless it is a plain token ([`term::escape_lead`]).
    pub(crate) fn table(&self, rows: Vec<Vec<String>>) -> Result<()> {
        let rows = escape_cells(rows);
        let mut table = tabled::builder::Builder::from(rows).build();
        table.with(Style::blank());
        let text = Table::to_string(&table);
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        self.line(&lines.join("\n"))
    }
}

impl Output {
    /// A table like [`Output::table`], but without the outer padding and with two spaces between
    /// columns, for tables that must fit a narrow terminal.
    pub(crate) fn narrow_table(&self, rows: Vec<Vec<String>>) -> Result<()> {
        use tabled::settings::{Padding, object::Columns};
        let rows = escape_cells(rows);
        let mut table = tabled::builder::Builder::from(rows).build();
        table
            .with(Style::empty())
            .with(Padding::new(0, 2, 0, 0))
            .modify(Columns::last(), Padding::zero());
        let text = Table::to_string(&table);
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        self.line(&lines.join("\n"))
    }
}

/// `value` as one compact JSON line on `out` ([`term::JsonFormatter`]: the exact text, with
/// every control character escaped).
pub(crate) fn write_json<W: Write, T: Serialize>(out: &mut W, value: &T) -> Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, term::JsonFormatter);
    // serde_json hides the io::Error of a failed write from the error chain (its `source` is
    // the io::Error's own source): give it back, so a closed pipe is seen as one (`main`).
    value
        .serialize(&mut ser)
        .map_err(|e| match e.io_error_kind() {
            Some(kind) => anyhow::Error::from(io::Error::new(kind, e)),
            None => e.into(),
        })?;
    writeln!(out)?;
    Ok(())
}

/// `warning: …` on stderr, one line (neutralised: a warning may quote a file).
pub(crate) fn warn(msg: &str) {
    eprintln!("warning: {}", term::escape_line(msg));
}

/// `hint: …` on stderr, one line.
pub(crate) fn hint(msg: &str) {
    eprintln!("hint: {}", term::escape_line(msg));
}

/// `error: …` on stderr, once, in `main` (neutralised: library errors may quote a file or a
/// pane; further lines are indented behind [`term::CONTINUATION`]).
pub(crate) fn error(err: &anyhow::Error) {
    eprintln!("error: {}", term::escape_message(&format!("{err:#}")));
}

/// Every cell as one line ([`term::escape_line`]); the first cell of a row, which starts the
/// printed line, quoted unless it is a plain token ([`term::escape_lead`]).
fn escape_cells(rows: Vec<Vec<String>>) -> Vec<Vec<String>> {
    rows.into_iter()
        .map(|row| {
            row.into_iter()
                .enumerate()
                .map(|(i, cell)| match i {
                    0 => term::escape_lead(&cell).into_owned(),
                    _ => term::escape_line(&cell).into_owned(),
                })
                .collect()
        })
        .collect()
}
