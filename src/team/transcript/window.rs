//! How many tokens a model's context window holds, by catalog id ([`pricing::catalog_id`]):
//! `context.window` of each model in Claude Code 2.1.332's bundled model catalog (the 3.5 and
//! 3.7 models, which it lists without one, have 200,000). A name with Claude Code's `[1m]`
//! suffix asks for the million-token window. A model the table does not know has none
//! (`None`), never a guess.

use crate::team::transcript::pricing;

/// `context.window` by catalog id.
const WINDOWS: [(&str, u64); 24] = [
    ("claude-3-5-haiku", 200_000),
    ("claude-haiku-4-5", 200_000),
    ("claude-haiku-5-5", 1_000_000),
    ("claude-3-5-sonnet", 200_000),
    ("claude-3-7-sonnet", 200_000),
    ("claude-sonnet-4-0", 200_000),
    ("claude-sonnet-4-5", 200_000),
    ("claude-sonnet-4-6", 200_000),
    ("claude-sonnet-5", 1_000_000),
    ("claude-sonnet-5-5", 1_000_000),
    ("claude-opus-4-0", 200_000),
    ("claude-opus-4-1", 200_000),
    ("claude-opus-4-5", 200_000),
    ("claude-opus-4-6", 200_000),
    ("claude-opus-4-7", 1_000_000),
    ("claude-opus-4-8", 1_000_000),
    ("claude-opus-5", 1_000_000),
    ("claude-opus-5-5", 1_000_000),
    ("claude-fable-5", 1_000_000),
    ("claude-fable-5-1", 1_000_000),
    ("claude-fable-5-2", 1_000_000),
    ("claude-mythos-5", 1_000_000),
    ("claude-mythos-5-1", 1_000_000),
    ("claude-mythos-5-2", 1_000_000),
];

/// The context window of `model` in tokens, `None` for a model teamctl does not know.
pub fn context_window(model: &str) -> Option<u64> {
    let id = pricing::catalog_id(model)?;
    let window = WINDOWS.iter().find(|(m, _)| *m == id)?.1;
    if model.trim().to_ascii_lowercase().ends_with("[1m]") {
        return Some(window.max(1_000_000));
    }
    Some(window)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_by_model() {
        assert_eq!(context_window("claude-opus-5-5"), Some(1_000_000));
        assert_eq!(context_window("claude-sonnet-4-5-20250929"), Some(200_000));
        assert_eq!(context_window("claude-sonnet-4-5[1m]"), Some(1_000_000));
        assert_eq!(context_window("claude-haiku-4-5"), Some(200_000));
        assert_eq!(context_window("gpt-9"), None);
        assert_eq!(context_window("claude-opus-9-9"), None);
    }

    #[test]
    fn every_priced_model_has_a_window() {
        for (id, _) in WINDOWS {
            assert_eq!(pricing::catalog_id(id), Some(id));
        }
    }
}
