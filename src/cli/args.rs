//! Argument helpers several verbs share: a deadline from `--timeout`, the values of `--type`.

use std::time::Instant;

use anyhow::Result;
use clap::builder::PossibleValuesParser;
use teamctl::team::model::FRAME_TYPES;
use teamctl::time;

/// The moment `--timeout` (a duration from now) ends, or `None` without one.
pub(crate) fn deadline(timeout: Option<&str>) -> Result<Option<Instant>> {
    Ok(timeout
        .map(time::parse_duration)
        .transpose()?
        .map(|d| Instant::now() + d))
}

/// The values of `--type`: `message`, `protocol` or a frame type.
pub(crate) fn type_values() -> PossibleValuesParser {
    let mut v = vec!["message", "protocol"];
    v.extend(FRAME_TYPES);
    PossibleValuesParser::new(v)
}
