//! A spending cap on a team (`--max-cost`, `--max-tokens` of `wait`, `ask` and `run`): a check
//! over the team's total as [`crate::observe::spend::SpendReader`] read it (everything it spent
//! before the command started included), made after every change the command sees.
//!
//! The cost counted is every session's known cost, and the tokens of a model teamctl has no
//! price for (one newer than the build) at the highest prices it knows for that model's family
//! ([`TeamSpend::capped_cost_usd`]): an unknown model is never counted as free, and the
//! reading says so once. The tokens are all four kinds together (input, output, cache reads
//! and cache writes), summed without ever wrapping. A cap is exceeded when the total is above
//! it.

use std::fmt;

use crate::observe::spend::TeamSpend;
use crate::units::usd;

/// The limits.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cap {
    /// `--max-cost`: USD.
    pub max_cost_usd: Option<f64>,
    /// `--max-tokens`: all kinds together.
    pub max_tokens: Option<u64>,
}

impl Cap {
    /// Whether any limit is set.
    pub fn is_set(&self) -> bool {
        self.max_cost_usd.is_some() || self.max_tokens.is_some()
    }

    /// The cap crossed by `spend`, if it is.
    pub fn exceeded(&self, spend: &TeamSpend) -> Option<Exceeded> {
        let by_cost = self
            .max_cost_usd
            .is_some_and(|m| spend.capped_cost_usd() > m);
        let by_tokens = self.max_tokens.is_some_and(|m| spend.tokens.total() > m);
        (by_cost || by_tokens).then(|| Exceeded {
            cap: *self,
            by_cost,
            spend: spend.clone(),
        })
    }
}

/// The cap was crossed: by how much and by whom.
#[derive(Debug, Clone, PartialEq)]
pub struct Exceeded {
    /// The cap.
    pub cap: Cap,
    /// Whether the cost (else the tokens) crossed it.
    pub by_cost: bool,
    /// The team's work when it was crossed.
    pub spend: TeamSpend,
}

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut members: Vec<(&String, f64, u64, bool)> = self
            .spend
            .members
            .iter()
            .map(|(n, m)| {
                let estimated = !m.unpriced.is_empty();
                (n, m.capped_cost_usd(), m.tokens.total(), estimated)
            })
            .collect();
        if self.by_cost {
            members.sort_by(|a, b| b.1.total_cmp(&a.1));
            let by: Vec<String> = members
                .iter()
                .map(|(n, c, _, estimated)| {
                    let about = if *estimated { "about " } else { "" };
                    format!("{n} {about}{}", usd(*c))
                })
                .collect();
            let unpriced: Vec<&str> = self.spend.unpriced.keys().map(String::as_str).collect();
            let estimate = if unpriced.is_empty() {
                String::new()
            } else {
                format!(
                    " (with {} estimated at the highest known prices: no price for it)",
                    unpriced.join(", ")
                )
            };
            write!(
                f,
                "budget exceeded: {} of {}{estimate}, by {}",
                usd(self.spend.capped_cost_usd()),
                usd(self.cap.max_cost_usd.unwrap_or(0.0)),
                by.join(", ")
            )
        } else {
            members.sort_by_key(|m| std::cmp::Reverse(m.2));
            let by: Vec<String> = members
                .iter()
                .map(|(n, _, t, _)| format!("{n} {t}"))
                .collect();
            write!(
                f,
                "budget exceeded: {} tokens of {}, by {}",
                self.spend.tokens.total(),
                self.cap.max_tokens.unwrap_or(0),
                by.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::spend::MemberSpend;
    use crate::team::transcript::Tokens;

    #[test]
    fn the_message_names_the_spenders() {
        let mut spend = TeamSpend::default();
        let m = |c: f64, t: u64| MemberSpend {
            cost_usd: Some(c),
            tokens: Tokens {
                input: t,
                ..Tokens::default()
            },
            ..MemberSpend::default()
        };
        spend.members.insert("alice".into(), m(0.004, 100));
        spend.members.insert("bob".into(), m(1.5, 40));
        spend.known_cost_usd = 1.504;
        spend.tokens.input = 140;
        let e = Exceeded {
            cap: Cap {
                max_cost_usd: Some(1.0),
                max_tokens: None,
            },
            by_cost: true,
            spend: spend.clone(),
        };
        assert_eq!(
            e.to_string(),
            "budget exceeded: $1.50 of $1.00, by bob $1.50, alice $0.0040"
        );
        let e = Exceeded {
            cap: Cap {
                max_cost_usd: None,
                max_tokens: Some(100),
            },
            by_cost: false,
            spend,
        };
        assert_eq!(
            e.to_string(),
            "budget exceeded: 140 tokens of 100, by alice 100, bob 40"
        );
    }
}
