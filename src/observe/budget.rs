//! A spending cap on a team (`--max-cost`, `--max-tokens` of `wait`, `ask` and `run`): a check
//! over the team's total as [`crate::observe::spend::SpendReader`] read it (everything it spent
//! before the command started included), made after every change the command sees.
//!
//! The cost counted is every session's known cost, and the tokens of a model teamctl has no
//! price for (one newer than the build) at the highest prices it knows for that model's family
//! ([`TeamSpend::capped_cost_usd`]): an unknown model is never counted as free, and the
//! reading says so once. The tokens are all four kinds together (input, output, cache reads
//! and cache writes), summed without ever wrapping. A cap is exceeded when the total is above
//! it. `--max-cost-per-member` holds each member (the lead too) to a cost of its own, and
//! `--warn-at` tells once per limit (per member for the per-member cap) when spend crosses that
//! share of it ([`Warner`]).

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;

use crate::observe::spend::TeamSpend;
use crate::units::usd;

/// The limits.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cap {
    /// `--max-cost`: USD.
    pub max_cost_usd: Option<f64>,
    /// `--max-tokens`: all kinds together.
    pub max_tokens: Option<u64>,
    /// `--max-cost-per-member`: USD, for each member on its own (the lead too).
    pub max_cost_per_member: Option<f64>,
    /// `--warn-at`: a warning once spend crosses this percentage of a limit ([`Warner`]).
    pub warn_at_percent: Option<f64>,
}

impl Cap {
    /// Whether any limit is set.
    pub fn is_set(&self) -> bool {
        self.max_cost_usd.is_some()
            || self.max_tokens.is_some()
            || self.max_cost_per_member.is_some()
    }

    /// The cap crossed by `spend`, if it is: the team's first, then the member that spent the
    /// most past its own.
    pub fn exceeded(&self, spend: &TeamSpend) -> Option<Exceeded> {
        let by_cost = self
            .max_cost_usd
            .is_some_and(|m| spend.capped_cost_usd() > m);
        let by_tokens = self.max_tokens.is_some_and(|m| spend.tokens.total() > m);
        if by_cost || by_tokens {
            return Some(Exceeded {
                cap: *self,
                by_cost,
                member: None,
                spend: spend.clone(),
            });
        }
        let limit = self.max_cost_per_member?;
        let (name, _) = spend
            .members
            .iter()
            .map(|(n, m)| (n, m.capped_cost_usd()))
            .filter(|(_, c)| *c > limit)
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        Some(Exceeded {
            cap: *self,
            by_cost: true,
            member: Some(name.clone()),
            spend: spend.clone(),
        })
    }

    /// Each limit with what it counts now: (which, member, spent, limit).
    fn readings<'a>(&self, spend: &'a TeamSpend) -> Vec<(Limit, Option<&'a str>, f64, f64)> {
        let mut out = Vec::new();
        if let Some(m) = self.max_cost_usd {
            out.push((Limit::MaxCost, None, spend.capped_cost_usd(), m));
        }
        if let Some(m) = self.max_tokens {
            out.push((
                Limit::MaxTokens,
                None,
                spend.tokens.total() as f64,
                m as f64,
            ));
        }
        if let Some(m) = self.max_cost_per_member {
            for (n, s) in &spend.members {
                out.push((
                    Limit::MaxCostPerMember,
                    Some(n.as_str()),
                    s.capped_cost_usd(),
                    m,
                ));
            }
        }
        out
    }
}

/// Which limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// `--max-cost`.
    MaxCost,
    /// `--max-tokens`.
    MaxTokens,
    /// `--max-cost-per-member`.
    MaxCostPerMember,
}

impl Limit {
    /// The flag.
    pub fn flag(self) -> &'static str {
        match self {
            Limit::MaxCost => "--max-cost",
            Limit::MaxTokens => "--max-tokens",
            Limit::MaxCostPerMember => "--max-cost-per-member",
        }
    }
}

/// Spend crossed `--warn-at` percent of a limit (`budget_warning` events).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Warning {
    /// Which limit.
    pub limit: Limit,
    /// The member, for `--max-cost-per-member`.
    pub member: Option<String>,
    /// What it counts now (USD, or tokens for `--max-tokens`).
    pub spent: f64,
    /// The limit.
    pub max: f64,
    /// `spent` as a percentage of `max`, to one decimal.
    pub percent: f64,
    /// `--warn-at`.
    pub warn_at_percent: f64,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let amount = |v: f64| match self.limit {
            Limit::MaxTokens => format!("{} tokens", v as u64),
            _ => usd(v),
        };
        let who = match &self.member {
            Some(m) => format!("{m} has spent"),
            None => "the team has spent".into(),
        };
        write!(
            f,
            "budget warning: {who} {} of {} {} ({:.1}%, past --warn-at {}%)",
            amount(self.spent),
            self.limit.flag(),
            amount(self.max),
            self.percent,
            self.warn_at_percent
        )
    }
}

/// Tells each limit's `--warn-at` crossing once: per limit, and per member for
/// `--max-cost-per-member`.
#[derive(Debug, Clone, Default)]
pub struct Warner {
    told: BTreeSet<(Limit, Option<String>)>,
}

impl Warner {
    /// The crossings of `cap`'s `--warn-at` by `spend` not told yet (none without `--warn-at`).
    pub fn check(&mut self, cap: &Cap, spend: &TeamSpend) -> Vec<Warning> {
        let Some(at) = cap.warn_at_percent else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (limit, member, spent, max) in cap.readings(spend) {
            let percent = if max > 0.0 {
                spent * 100.0 / max
            } else {
                f64::INFINITY
            };
            if percent < at || !self.told.insert((limit, member.map(String::from))) {
                continue;
            }
            out.push(Warning {
                limit,
                member: member.map(String::from),
                spent,
                max,
                percent: (percent * 10.0).round() / 10.0,
                warn_at_percent: at,
            });
        }
        out
    }
}

/// The cap was crossed: by how much and by whom.
#[derive(Debug, Clone, PartialEq)]
pub struct Exceeded {
    /// The cap.
    pub cap: Cap,
    /// Whether the cost (else the tokens) crossed it.
    pub by_cost: bool,
    /// The member over `--max-cost-per-member` (`None`: the team crossed its own cap).
    pub member: Option<String>,
    /// The team's work when it was crossed.
    pub spend: TeamSpend,
}

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = &self.member {
            let m = &self.spend.members[name];
            let about = if m.unpriced.is_empty() { "" } else { "about " };
            return write!(
                f,
                "budget exceeded: {name} spent {about}{} of --max-cost-per-member {} (the team: {})",
                usd(m.capped_cost_usd()),
                usd(self.cap.max_cost_per_member.unwrap_or(0.0)),
                usd(self.spend.capped_cost_usd())
            );
        }
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
                ..Cap::default()
            },
            by_cost: true,
            member: None,
            spend: spend.clone(),
        };
        assert_eq!(
            e.to_string(),
            "budget exceeded: $1.50 of $1.00, by bob $1.50, alice $0.0040"
        );
        let e = Exceeded {
            cap: Cap {
                max_tokens: Some(100),
                ..Cap::default()
            },
            by_cost: false,
            member: None,
            spend: spend.clone(),
        };
        assert_eq!(
            e.to_string(),
            "budget exceeded: 140 tokens of 100, by alice 100, bob 40"
        );
        let per_member = Cap {
            max_cost_per_member: Some(1.0),
            warn_at_percent: Some(50.0),
            ..Cap::default()
        };
        let e = per_member.exceeded(&spend).unwrap();
        assert_eq!(e.member.as_deref(), Some("bob"));
        assert_eq!(
            e.to_string(),
            "budget exceeded: bob spent $1.50 of --max-cost-per-member $1.00 (the team: $1.50)"
        );
        let mut w = Warner::default();
        let told = w.check(&per_member, &spend);
        assert_eq!(told.len(), 1);
        assert_eq!(
            told[0].to_string(),
            "budget warning: bob has spent $1.50 of --max-cost-per-member $1.00 (150.0%, past \
             --warn-at 50%)"
        );
        assert!(w.check(&per_member, &spend).is_empty(), "told once");
        spend.members.get_mut("alice").unwrap().cost_usd = Some(0.6);
        let told = w.check(&per_member, &spend);
        assert_eq!(told[0].member.as_deref(), Some("alice"));
    }
}
