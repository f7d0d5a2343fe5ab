//! What an API response cost, in USD, computed as the Claude Code version that wrote it
//! computes it (the `version` of its transcript entries).
//!
//! Sources, read in the clients of the compatibility matrix (`docs/compatibility.md`; the
//! strings quoted are stable across builds, the minified names are not):
//! - 2.1.332 (npm `@anthropic-ai/claude-code-linux-x64@2.1.332`): its bundled model catalog
//!   (`"On model launch add one entry to `models` below"`, `schema_version: 1`):
//!   `pricing_tiers` (USD per million tokens: `input`, `output`, `cache_write_5m`,
//!   `cache_write_1h`, `cache_read`; `web_search` per request; `long_prompt` above a prompt
//!   size) and each model's `pricing` tier, keyed by its catalog id and its provider ids; the
//!   same catalog in 2.1.322 and 2.1.323;
//! - 2.1.210: an older catalog with the same rates (`"//":"Hand-maintained baked-in model
//!   catalog`), but `claude-sonnet-5` at 3 / 15;
//! - 2.1.112 to 2.1.196: constant tables (2.1.112 `cli.js`:
//!   `GQ={inputTokens:3,outputTokens:15,promptCacheWriteTokens:3.75,…}`); one-hour cache
//!   writes priced apart from 2.1.177 (`promptCacheWrite1hTokens`); `claude-opus-4-8` priced as
//!   `claude-opus-4` (15 / 75) by 2.1.112, unknown to 2.1.150, 5 / 25 from 2.1.159;
//! - fast mode (`speed: "fast"`): the few models with fast prices (2.1.332: the function that
//!   returns `kF`/`vF`/`e_`/`Pb` for `claude-fable-5-2`/`claude-mythos-5-2`,
//!   `claude-opus-5-5`, `claude-opus-4-8`/`claude-opus-5`, `claude-opus-4-6`/`claude-opus-4-7`);
//! - the cost of one response (2.1.332's `Ukn`, 2.1.112's `yF9`): `input/1e6*in +
//!   output/1e6*out + cache_read/1e6*read + cache_write`, where `cache_write` is
//!   `one_hour/1e6*write_1h + (all - one_hour)/1e6*write_5m` (2.1.177+; before, all at the
//!   5-minute rate), the long-prompt prices when `input + cache_read + cache_write` exceeds
//!   the threshold and times 1.1 when `inference_geo` is `us` (both 2.1.322+), plus
//!   `web_search_requests * 0.01`. The session total is the sum of these, response by
//!   response, in order (`costLedger.recordCost`), so summing in file order gives the same
//!   floating-point number (checked bit for bit against `cost-state` on 2.1.322–2.1.332).
//!
//! Claude Code prices a model missing from its table at a default and flags the session
//! (`hasUnknownModelCost`); teamctl reports such a model's cost as unknown instead. Not
//! modelled: organisation price overrides (`modelPricing`), prices fetched online, the advisor
//! tool's extra usage, and 2.1.332's per-iteration long-prompt split (only `claude-haiku-5-5`
//! has long-prompt prices).

use crate::team::transcript::entry::Usage;
use crate::team::transcript::tokens::Tokens;

/// USD per million tokens (web searches: per request).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Cache writes with the 5-minute lifetime.
    pub cache_write_5m: f64,
    /// Cache writes with the 1-hour lifetime.
    pub cache_write_1h: f64,
    /// Cache reads.
    pub cache_read: f64,
}

const fn p(
    input: f64,
    output: f64,
    cache_write_5m: f64,
    cache_write_1h: f64,
    cache_read: f64,
) -> Prices {
    Prices {
        input,
        output,
        cache_write_5m,
        cache_write_1h,
        cache_read,
    }
}

/// A pricing tier of the catalog.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tier {
    /// Standard prices.
    pub standard: Prices,
    /// Prices above `long_prompt.0` prompt tokens.
    pub long_prompt: Option<(u64, Prices)>,
}

const fn tier(standard: Prices) -> Tier {
    Tier {
        standard,
        long_prompt: None,
    }
}

// `pricing_tiers` of the 2.1.332 catalog.
const TIER_2_10: Tier = tier(p(2.0, 10.0, 2.5, 4.0, 0.2));
const TIER_2_10_READ_0_10: Tier = tier(p(2.0, 10.0, 2.5, 4.0, 0.1));
const TIER_3_15: Tier = tier(p(3.0, 15.0, 3.75, 6.0, 0.3));
const TIER_5_25: Tier = tier(p(5.0, 25.0, 6.25, 10.0, 0.5));
const TIER_15_75: Tier = tier(p(15.0, 75.0, 18.75, 30.0, 1.5));
const TIER_10_50: Tier = tier(p(10.0, 50.0, 12.5, 20.0, 1.0));
const TIER_10_50_READ_0_25: Tier = tier(p(10.0, 50.0, 12.5, 20.0, 0.25));
const TIER_4_20_READ_0_20: Tier = tier(p(4.0, 20.0, 5.0, 8.0, 0.2));
const TIER_8_40_READ_0_20: Tier = tier(p(8.0, 40.0, 10.0, 16.0, 0.2));
const HAIKU_35: Tier = tier(p(0.8, 4.0, 1.0, 1.6, 0.08));
const HAIKU_45: Tier = tier(p(1.0, 5.0, 1.25, 2.0, 0.1));
const HAIKU_55: Tier = Tier {
    standard: p(0.1, 0.5, 0.125, 0.2, 0.01),
    long_prompt: Some((100_000, p(0.5, 2.5, 0.625, 1.0, 0.05))),
};

/// USD per web search request (every tier of the catalog).
pub const WEB_SEARCH: f64 = 0.01;

/// The catalog's models: id, first-party API id, tier (`models[]` of the 2.1.332 catalog);
/// [`tier_of`] applies what older versions did differently.
const MODELS: [(&str, &str, Tier); 24] = [
    ("claude-3-5-haiku", "claude-3-5-haiku-20241022", HAIKU_35),
    ("claude-haiku-4-5", "claude-haiku-4-5-20251001", HAIKU_45),
    ("claude-haiku-5-5", "claude-haiku-5-5", HAIKU_55),
    ("claude-3-5-sonnet", "claude-3-5-sonnet-20241022", TIER_3_15),
    ("claude-3-7-sonnet", "claude-3-7-sonnet-20250219", TIER_3_15),
    ("claude-sonnet-4-0", "claude-sonnet-4-20250514", TIER_3_15),
    ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929", TIER_3_15),
    ("claude-sonnet-4-6", "claude-sonnet-4-6", TIER_3_15),
    ("claude-sonnet-5", "claude-sonnet-5", TIER_2_10),
    (
        "claude-sonnet-5-5",
        "claude-sonnet-5-5",
        TIER_2_10_READ_0_10,
    ),
    ("claude-opus-4-0", "claude-opus-4-20250514", TIER_15_75),
    ("claude-opus-4-1", "claude-opus-4-1-20250805", TIER_15_75),
    ("claude-opus-4-5", "claude-opus-4-5-20251101", TIER_5_25),
    ("claude-opus-4-6", "claude-opus-4-6", TIER_5_25),
    ("claude-opus-4-7", "claude-opus-4-7", TIER_5_25),
    ("claude-opus-4-8", "claude-opus-4-8", TIER_5_25),
    ("claude-opus-5", "claude-opus-5", TIER_5_25),
    ("claude-opus-5-5", "claude-opus-5-5", TIER_4_20_READ_0_20),
    ("claude-fable-5", "claude-fable-5", TIER_10_50),
    ("claude-fable-5-1", "claude-fable-5-1", TIER_10_50_READ_0_25),
    ("claude-fable-5-2", "claude-fable-5-2", TIER_8_40_READ_0_20),
    ("claude-mythos-5", "claude-mythos-5", TIER_10_50),
    (
        "claude-mythos-5-1",
        "claude-mythos-5-1",
        TIER_10_50_READ_0_25,
    ),
    (
        "claude-mythos-5-2",
        "claude-mythos-5-2",
        TIER_8_40_READ_0_20,
    ),
];

/// A Claude Code version as its 2.1 patch number: `2.1.332` → 332; older releases → 0, newer
/// minor or major releases, and no version at all → the newest rules.
pub fn patch(version: Option<&str>) -> u32 {
    const NEWEST: u32 = u32::MAX;
    let Some(v) = version else { return NEWEST };
    let mut parts = v.trim().split('.').map(|p| {
        p.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse::<u32>()
            .ok()
    });
    match (
        parts.next().flatten(),
        parts.next().flatten(),
        parts.next().flatten(),
    ) {
        (Some(2), Some(1), Some(p)) => p,
        (Some(maj), Some(min), _) if (maj, min) < (2, 1) => 0,
        (Some(_), Some(_), _) => NEWEST,
        _ => NEWEST,
    }
}

/// The tier version `patch` priced `id` at, `None` when it did not know the model.
fn tier_of(id: &str, tier: Tier, patch: u32) -> Option<Tier> {
    let since = match id {
        "claude-fable-5" | "claude-mythos-5" => 177,
        "claude-sonnet-5" => 210,
        "claude-haiku-5-5" | "claude-sonnet-5-5" | "claude-opus-5" | "claude-opus-5-5"
        | "claude-fable-5-1" | "claude-fable-5-2" | "claude-mythos-5-1" | "claude-mythos-5-2" => {
            322
        }
        _ => 0,
    };
    if patch < since {
        return None;
    }
    match id {
        "claude-sonnet-5" if patch < 322 => Some(TIER_3_15),
        // 2.1.112 matched the name to claude-opus-4; 2.1.150 did not know it.
        "claude-opus-4-8" if patch < 150 => Some(TIER_15_75),
        "claude-opus-4-8" if patch < 159 => None,
        _ => Some(tier),
    }
}

/// The fast-mode prices version `patch` had for `id`.
fn fast(id: &str, patch: u32) -> Option<Prices> {
    match id {
        "claude-fable-5-2" | "claude-mythos-5-2" if patch >= 322 => {
            Some(p(16.0, 80.0, 20.0, 32.0, 0.4))
        }
        "claude-opus-5-5" if patch >= 322 => Some(p(8.0, 40.0, 10.0, 16.0, 0.4)),
        "claude-opus-5" if patch >= 322 => Some(p(10.0, 50.0, 12.5, 20.0, 1.0)),
        "claude-opus-4-8" if patch >= 159 => Some(p(10.0, 50.0, 12.5, 20.0, 1.0)),
        "claude-opus-4-7" if patch >= 150 => Some(p(30.0, 150.0, 37.5, 60.0, 3.0)),
        "claude-opus-4-6" => Some(p(30.0, 150.0, 37.5, 60.0, 3.0)),
        _ => None,
    }
}

/// The catalog id a model name stands for: the name as the API, Bedrock (`us.anthropic.…`),
/// Vertex (`…@date`) or a gateway (`…/name`) spells it, with or without `[1m]`, dated or not.
/// `None` for a model not in the catalog.
pub fn catalog_id(model: &str) -> Option<&'static str> {
    let mut m = model.trim().to_ascii_lowercase();
    for suffix in ["[1m]", "[2m]"] {
        if let Some(s) = m.strip_suffix(suffix) {
            m = s.to_string();
        }
    }
    if let Some(i) = m.rfind('/') {
        m = m[i + 1..].to_string();
    }
    // Bedrock's `anthropic.…` and `<region>.anthropic.…`.
    if let Some(rest) = m.strip_prefix("anthropic.") {
        m = rest.to_string();
    } else if let Some((region, rest)) = m.split_once(".anthropic.")
        && !region.contains('.')
    {
        m = rest.to_string();
    }
    // Bedrock's `-v1:0` and Vertex's `@date`.
    if let Some(i) = m.find(':') {
        m.truncate(i);
    }
    let m = m.replace('@', "-");
    let m = m
        .strip_suffix("-v1")
        .or(m.strip_suffix("-v2"))
        .unwrap_or(&m)
        .to_string();
    if let Some((id, _, _)) = MODELS.iter().find(|(id, fp, _)| *id == m || *fp == m) {
        return Some(id);
    }
    // A dated or otherwise suffixed name: the longest catalog id it starts with.
    MODELS
        .iter()
        .filter(|(id, _, _)| {
            m.strip_prefix(id)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
        })
        .max_by_key(|(id, _, _)| id.len())
        .map(|(id, _, _)| *id)
}

/// The prices Claude Code `version` used for a response of `model` with `usage` (fast mode,
/// long prompts), or `None` for a model it did not know.
pub fn prices(model: &str, usage: &Usage, version: Option<&str>) -> Option<Prices> {
    let id = catalog_id(model)?;
    let (_, _, t) = MODELS.iter().find(|(i, _, _)| *i == id)?;
    let v = patch(version);
    let t = tier_of(id, *t, v)?;
    if usage.speed.as_deref() == Some("fast")
        && let Some(f) = fast(id, v)
    {
        return Some(f);
    }
    let prompt =
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    Some(match t.long_prompt {
        Some((above, lp)) if v >= 322 && prompt > above => lp,
        _ => t.standard,
    })
}

/// The highest standard prices teamctl knows for a model like `model` (one of its family:
/// `opus`, `sonnet`, `haiku`, … in its name; any model when none is), and the catalog id they
/// are from: what a spending cap counts a model it cannot price at, so that an unknown model
/// is never counted as free.
pub fn ceiling(model: &str) -> (&'static str, Prices) {
    let m = model.to_ascii_lowercase();
    let family = ["opus", "sonnet", "haiku", "fable", "mythos"]
        .into_iter()
        .find(|f| m.contains(f));
    let like = |id: &str| family.is_none_or(|f| id.contains(f));
    let highest = |candidates: &mut dyn Iterator<Item = &(&'static str, &str, Tier)>| {
        candidates
            .max_by(|a, b| a.2.standard.output.total_cmp(&b.2.standard.output))
            .map(|(id, _, t)| (*id, t.standard))
    };
    highest(&mut MODELS.iter().filter(|(id, _, _)| like(id)))
        .or_else(|| highest(&mut MODELS.iter()))
        .unwrap_or(("claude-opus-4-0", TIER_15_75.standard))
}

/// `tokens` at `prices` (cache writes at the one-hour rate, the higher).
pub fn at(prices: &Prices, tokens: &Tokens) -> f64 {
    tokens.input as f64 / 1e6 * prices.input
        + tokens.output as f64 / 1e6 * prices.output
        + tokens.cache_read as f64 / 1e6 * prices.cache_read
        + tokens.cache_creation as f64 / 1e6 * prices.cache_write_1h.max(prices.cache_write_5m)
}

/// What one response cost in USD, as Claude Code `version` computes it (see the module docs);
/// `None` for a model it cannot price.
pub fn cost(model: &str, usage: &Usage, version: Option<&str>) -> Option<f64> {
    let pr = prices(model, usage, version)?;
    let v = patch(version);
    let all = usage.cache_creation_input_tokens as f64;
    // One-hour writes are priced apart from 2.1.177.
    let one_hour = if v >= 177 {
        usage.cache_creation_1h()
    } else {
        0
    };
    let write = if one_hour == 0 {
        all / 1e6 * pr.cache_write_5m
    } else {
        one_hour as f64 / 1e6 * pr.cache_write_1h
            + (usage.cache_creation_input_tokens - one_hour) as f64 / 1e6 * pr.cache_write_5m
    };
    let tokens = usage.input_tokens as f64 / 1e6 * pr.input
        + usage.output_tokens as f64 / 1e6 * pr.output
        + usage.cache_read_input_tokens as f64 / 1e6 * pr.cache_read
        + write;
    let searches = usage.web_searches as f64 * WEB_SEARCH;
    if v < 322 {
        // Before the geo multiplier the web searches were one more term of the same sum.
        return Some(tokens + searches);
    }
    let geo = if usage.inference_geo.as_deref() == Some("us") {
        1.1
    } else {
        1.0
    };
    Some(tokens * geo + searches)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        }
    }

    #[test]
    fn names_map_to_the_catalog() {
        for (name, id) in [
            ("claude-opus-5-5", Some("claude-opus-5-5")),
            ("claude-opus-5-5[1m]", Some("claude-opus-5-5")),
            ("claude-sonnet-4-5-20250929", Some("claude-sonnet-4-5")),
            ("claude-sonnet-4-20250514", Some("claude-sonnet-4-0")),
            (
                "us.anthropic.claude-haiku-4-5-20251001-v1:0",
                Some("claude-haiku-4-5"),
            ),
            ("claude-3-5-haiku@20241022", Some("claude-3-5-haiku")),
            ("anthropic/claude-opus-4-6", Some("claude-opus-4-6")),
            ("claude-opus-5-5-20270101", Some("claude-opus-5-5")),
            ("claude-opus-5", Some("claude-opus-5")),
            ("gpt-5", None),
            ("<synthetic>", None),
        ] {
            assert_eq!(catalog_id(name), id, "{name}");
        }
    }

    #[test]
    fn costs_as_claude_code_computes_them() {
        // Seen with 2.1.332 and the mock API: 10 in + 5 out on claude-opus-5-5, three responses
        // in a row: totalCostUSD 0.00042, two: 0.00028000000000000003.
        let one = cost("claude-opus-5-5", &usage(10, 5), None).unwrap();
        assert_eq!(one, 0.00014000000000000001);
        assert_eq!(one + one + one, 0.00042);
        assert_eq!(one + one, 0.00028000000000000003);
        // Cache writes, one-hour part, US inference, web searches.
        let u = Usage {
            input_tokens: 1000,
            output_tokens: 2000,
            cache_read_input_tokens: 10_000,
            cache_creation_input_tokens: 4000,
            cache_write_1h: 1000,
            web_searches: 2,
            inference_geo: Some("us".into()),
            speed: None,
        };
        let want = (1000.0 / 1e6 * 3.0
            + 2000.0 / 1e6 * 15.0
            + 10_000.0 / 1e6 * 0.3
            + (1000.0 / 1e6 * 6.0 + 3000.0 / 1e6 * 3.75))
            * 1.1
            + 2.0 * 0.01;
        assert_eq!(cost("claude-sonnet-4-5", &u, Some("2.1.332")), Some(want));
        // Fast mode, long prompts, unknown models.
        let mut f = usage(1_000_000, 0);
        f.speed = Some("fast".into());
        assert_eq!(cost("claude-opus-5-5", &f, None), Some(8.0));
        assert_eq!(cost("claude-sonnet-4-5", &f, None), Some(3.0));
        assert_eq!(
            cost("claude-haiku-5-5", &usage(100_001, 0), None),
            Some(100_001.0 / 1e6 * 0.5)
        );
        assert_eq!(
            cost("claude-haiku-5-5", &usage(100_000, 0), None),
            Some(100_000.0 / 1e6 * 0.1)
        );
        assert_eq!(cost("some-model", &usage(1, 1), None), None);
    }

    #[test]
    fn older_versions_priced_as_they_did() {
        assert_eq!(patch(Some("2.1.112")), 112);
        assert_eq!(patch(Some("2.1.332")), 332);
        assert_eq!(patch(Some("2.0.77")), 0);
        assert_eq!(patch(Some("2.2.1")), u32::MAX);
        assert_eq!(patch(None), u32::MAX);
        // The one-hour cache writes: apart from 2.1.177.
        let u = Usage {
            cache_creation_input_tokens: 1_000_000,
            cache_write_1h: 1_000_000,
            ..Usage::default()
        };
        assert_eq!(cost("claude-sonnet-4-6", &u, Some("2.1.160")), Some(3.75));
        assert_eq!(cost("claude-sonnet-4-6", &u, Some("2.1.177")), Some(6.0));
        // US inference costs more from 2.1.322 only.
        let mut us = usage(1_000_000, 0);
        us.inference_geo = Some("us".into());
        assert_eq!(cost("claude-opus-4-8", &us, Some("2.1.210")), Some(5.0));
        assert_eq!(cost("claude-opus-4-8", &us, Some("2.1.332")), Some(5.5));
        // Models and prices that changed.
        let m = usage(1_000_000, 0);
        assert_eq!(cost("claude-opus-4-8", &m, Some("2.1.112")), Some(15.0));
        assert_eq!(cost("claude-opus-4-8", &m, Some("2.1.150")), None);
        assert_eq!(cost("claude-sonnet-5", &m, Some("2.1.210")), Some(3.0));
        assert_eq!(cost("claude-sonnet-5", &m, Some("2.1.332")), Some(2.0));
        assert_eq!(cost("claude-opus-5-5", &m, Some("2.1.210")), None);
    }
}
