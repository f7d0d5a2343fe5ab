//! Hosts: a URL's host as Claude Code reads it ([`url_host`], WHATWG URL standard), and the host
//! patterns of `WebFetch(domain:…)` rules and `sandbox_hosts`.

use anyhow::Result;

/// The host of an `http(s)://` URL as Claude Code's `new URL(url).hostname` reads it: parsed
/// by the WHATWG URL standard (the `url` crate, as Node's URL class), so `https://a.com\@b.com/`
/// is `a.com`, a backslash is a slash, hosts are lower-cased and IDNA-encoded, IPv6 hosts are
/// bracketed. `None` for anything else (nothing to match a domain rule against).
pub fn url_host(u: &str) -> Option<String> {
    let url = url::Url::parse(u).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    url.host_str().filter(|h| !h.is_empty()).map(String::from)
}

/// A host, or `*.example.com` for its subdomains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HostPattern {
    pub(super) text: String,
    host: String,
    subdomains: bool,
}

impl HostPattern {
    pub(super) fn parse(s: &str) -> Result<HostPattern> {
        let t = s.trim().to_ascii_lowercase();
        let (host, subdomains) = match t.strip_prefix("*.") {
            Some(h) => (h.to_string(), true),
            None => (t.clone(), false),
        };
        let ok = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            && !host.starts_with('.')
            && !host.ends_with('.');
        if !ok {
            anyhow::bail!("invalid host {s:?} (a name like example.com, or *.example.com)");
        }
        Ok(HostPattern {
            text: s.trim().to_string(),
            host,
            subdomains,
        })
    }

    pub(super) fn matches(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        if self.subdomains {
            host.strip_suffix(self.host.as_str())
                .is_some_and(|r| r.ends_with('.') && r.len() > 1)
        } else {
            host == self.host
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ops::policy::Answer;
    use crate::ops::policy::fixture::{anchors, perm, policy};
    use serde_json::json;

    #[test]
    fn webfetch_domains() {
        let p = policy(
            &["WebFetch(domain:example.com)", "WebFetch(domain:*.docs.rs)"],
            &[],
        );
        let fetch = |url: &str| {
            p.decide(
                &perm("WebFetch", json!({"url": url, "prompt": "x"})),
                &anchors(),
            )
            .answer
        };
        assert_eq!(fetch("https://example.com/a"), Answer::Approve);
        assert_eq!(fetch("https://EXAMPLE.com:8443/a?b"), Answer::Approve);
        assert_eq!(fetch("https://user@example.com/"), Answer::Approve);
        assert_eq!(fetch("https://sub.example.com/"), Answer::Leave);
        assert_eq!(fetch("https://example.com.evil.net/"), Answer::Leave);
        assert_eq!(fetch("https://a.docs.rs/x"), Answer::Approve);
        assert_eq!(fetch("https://docs.rs/x"), Answer::Leave);
        // Hosts as WHATWG URL parsers (Node, Claude Code) read them: a backslash is a slash,
        // so this host is evil.com.
        assert_eq!(fetch("https://evil.com\\@example.com/"), Answer::Leave);
        assert_eq!(fetch("https://evil.com\\.example.com/"), Answer::Leave);
        assert_eq!(fetch("https://example.com\\@evil.com/"), Answer::Approve);
        assert_eq!(fetch("https://EXAMPLE.COM./"), Answer::Leave);
        assert_eq!(fetch("https://exam%70le.com/"), Answer::Approve);
        assert_eq!(fetch("ftp://example.com/"), Answer::Leave);
        assert_eq!(fetch("not a url"), Answer::Leave);
    }
}
