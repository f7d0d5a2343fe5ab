//! Argument helpers several verbs share: a deadline from `--timeout`, the values of `--type`,
//! the spending cap (`--max-cost`, `--max-tokens`) and the totals it reports.

use std::time::Instant;

use anyhow::Result;
use clap::Args;
use clap::builder::PossibleValuesParser;
use serde::Serialize;
use teamctl::error::usage;
use teamctl::observe::budget::Cap;
use teamctl::observe::spend::TeamSpend;
use teamctl::team::model::FRAME_TYPES;
use teamctl::team::transcript::Tokens;
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

/// `--max-cost` and `--max-tokens`.
#[derive(Debug, Clone, Args)]
pub(crate) struct CapArgs {
    /// Stop with exit 6 once the team's total cost crosses USD (from its transcripts, what it
    /// spent before this command started included; a model teamctl has no price for counts at
    /// the highest prices it knows for that model's family, with a warning)
    #[arg(long, value_name = "USD")]
    pub(crate) max_cost: Option<String>,

    /// Stop with exit 6 once the team's total tokens (input, output, cache reads and writes)
    /// cross N, counted the same way
    #[arg(long, value_name = "N")]
    pub(crate) max_tokens: Option<u64>,
}

impl CapArgs {
    /// The cap (unset without either flag).
    pub(crate) fn cap(&self) -> Result<Cap> {
        let max_cost_usd = self
            .max_cost
            .as_deref()
            .map(|c| {
                c.trim()
                    .trim_start_matches('$')
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| {
                        usage(format!(
                            "invalid --max-cost '{c}': use an amount in USD such as 2.50"
                        ))
                    })
            })
            .transpose()?;
        Ok(Cap {
            max_cost_usd,
            max_tokens: self.max_tokens,
        })
    }
}

/// The team's totals in a verb's `--json` (`totals`): `{"tokens": {…}, "cost_usd"}`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TotalsJson {
    pub(crate) tokens: Tokens,
    pub(crate) cost_usd: Option<f64>,
}

impl TotalsJson {
    pub(crate) fn of(s: &TeamSpend) -> TotalsJson {
        TotalsJson {
            tokens: s.tokens,
            cost_usd: s.cost_usd,
        }
    }
}
