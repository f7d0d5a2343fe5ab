//! Argument helpers several verbs share: a deadline from `--timeout`, the values of `--type`,
//! the spending cap (`--max-cost`, `--max-tokens`, `--max-cost-per-member`, `--warn-at`) and
//! the totals it reports.

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
#[command(next_help_heading = "Spending cap")]
pub(crate) struct CapArgs {
    /// Stop with exit 6 once the team's total cost crosses USD (from its transcripts, what it
    /// spent before this command started included; a model teamctl has no price for counts at
    /// the highest prices it knows for that model's family, with a warning)
    #[arg(long, value_name = "USD")]
    #[arg(
        help = "Stop with exit 6 once the team's total cost crosses USD",
        long_help
    )]
    pub(crate) max_cost: Option<String>,

    /// Stop with exit 6 once the team's total tokens (input, output, cache reads and writes)
    /// cross N, counted the same way
    #[arg(long, value_name = "N")]
    #[arg(
        help = "Stop with exit 6 once the team's total tokens cross N",
        long_help
    )]
    pub(crate) max_tokens: Option<u64>,

    /// Stop with exit 6, naming the member, once one member's own cost (the lead's too) crosses
    /// USD, counted the same way
    #[arg(long, value_name = "USD")]
    #[arg(
        help = "Stop with exit 6 once one member's own cost crosses USD",
        long_help
    )]
    pub(crate) max_cost_per_member: Option<String>,

    /// Warn once when spend crosses PERCENT of a limit above (per member for
    /// --max-cost-per-member): a line on stderr, a budget_warning JSON line on stderr with
    /// --json, and an OpenTelemetry event [default: off]
    #[arg(long, value_name = "PERCENT")]
    #[arg(help = "Warn once at PERCENT of a limit above", long_help)]
    pub(crate) warn_at: Option<String>,
}

impl CapArgs {
    /// The cap (unset without either flag).
    pub(crate) fn cap(&self) -> Result<Cap> {
        let amount = |flag: &str, v: Option<&str>| {
            v.map(|c| {
                c.trim()
                    .trim_start_matches('$')
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| {
                        usage(format!(
                            "invalid {flag} '{c}': use an amount in USD such as 2.50"
                        ))
                    })
            })
            .transpose()
        };
        let warn_at_percent = self
            .warn_at
            .as_deref()
            .map(|w| {
                w.trim()
                    .trim_end_matches('%')
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v > 0.0 && *v <= 100.0)
                    .ok_or_else(|| {
                        usage(format!(
                            "invalid --warn-at '{w}': use a percentage above 0 and at most \
                             100, such as 80"
                        ))
                    })
            })
            .transpose()?;
        let cap = Cap {
            max_cost_usd: amount("--max-cost", self.max_cost.as_deref())?,
            max_tokens: self.max_tokens,
            max_cost_per_member: amount(
                "--max-cost-per-member",
                self.max_cost_per_member.as_deref(),
            )?,
            warn_at_percent,
        };
        if warn_at_percent.is_some() && !cap.is_set() {
            return Err(usage(
                "--warn-at needs a limit to warn about: --max-cost, --max-tokens or \
                 --max-cost-per-member",
            ));
        }
        Ok(cap)
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
