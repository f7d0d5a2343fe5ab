//! Who may see and do what on `serve`'s port: the token (in a header, compared in constant
//! time), the Host header (the listening address or the public URL's host: no DNS rebinding)
//! and, on every request that changes something, the Origin (the page's own, when sent).

use std::net::SocketAddr;

use url::Url;

/// The header the page sends the token in (`Authorization: Bearer <token>`).
pub const AUTHORIZATION: &str = "authorization";

/// The smallest token taken from the environment.
pub const MIN_TOKEN: usize = 16;

/// What a request is checked against.
#[derive(Debug, Clone)]
pub struct Access {
    token: String,
    /// `host[:port]` values the Host header may carry, lowercased.
    hosts: Vec<String>,
    /// Origins (`scheme://host[:port]`) a changing request may come from.
    origins: Vec<String>,
}

/// Why a request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// No token, or the wrong one (401).
    Token,
    /// The Host header names another host (421: misdirected; nothing of a team is shown).
    Host,
    /// A changing request from another origin (403).
    Origin,
}

impl Refused {
    /// The status and the one line said.
    pub fn status(self) -> (u16, &'static str) {
        match self {
            Refused::Token => (401, "a token is needed: open the URL teamctl serve printed"),
            Refused::Host => (421, "this server answers only to the address it listens on"),
            Refused::Origin => (403, "refused: the request comes from another page's origin"),
        }
    }
}

impl Access {
    /// Access for `token`, served at `listen` and, when given, reached at `public`.
    pub fn new(token: &str, listen: SocketAddr, public: Option<&Url>) -> Access {
        let mut hosts = vec![listen.to_string()];
        if listen.ip().is_loopback() {
            // `localhost` is resolved on this machine: it cannot be rebound by a site.
            hosts.push(format!("localhost:{}", listen.port()));
        }
        let mut origins: Vec<String> = hosts.iter().map(|h| format!("http://{h}")).collect();
        if let Some(u) = public {
            let origin = u.origin().ascii_serialization();
            if let Some(host) = u.host_str() {
                let host = match u.port() {
                    Some(p) => format!("{host}:{p}"),
                    None => host.to_string(),
                };
                hosts.push(host.clone());
                // A proxy may pass on the port it was reached at, or the default one.
                if let Some(p) = u.port_or_known_default() {
                    hosts.push(format!("{}:{p}", u.host_str().unwrap_or_default()));
                }
            }
            origins.push(origin);
        }
        for h in &mut hosts {
            *h = h.to_ascii_lowercase();
        }
        hosts.sort();
        hosts.dedup();
        Access {
            token: token.to_string(),
            hosts,
            origins,
        }
    }

    /// Whether the Host header `host` names this server.
    pub fn host_ok(&self, host: Option<&str>) -> bool {
        host.is_some_and(|h| {
            self.hosts
                .iter()
                .any(|ok| *ok == h.trim().to_ascii_lowercase())
        })
    }

    /// Whether the `Authorization` header carries the token (constant time in its length).
    pub fn token_ok(&self, authorization: Option<&str>) -> bool {
        let Some(got) = authorization.and_then(|a| a.trim().strip_prefix("Bearer ")) else {
            return false;
        };
        let (want, got) = (self.token.as_bytes(), got.trim().as_bytes());
        want.len() == got.len() && want.iter().zip(got).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }

    /// Whether a changing request with these headers comes from the page's own origin: its
    /// Origin, when sent, is one of this server's, and the browser does not call it cross-site.
    pub fn origin_ok(&self, origin: Option<&str>, fetch_site: Option<&str>) -> bool {
        let origin_ok = origin.is_none_or(|o| self.origins.iter().any(|ok| ok == o.trim()));
        let site_ok = fetch_site.is_none_or(|s| matches!(s.trim(), "same-origin" | "none"));
        origin_ok && site_ok
    }

    /// Checks a request's headers: the Host always, the token on what needs it, the Origin on
    /// what changes something.
    ///
    /// # Errors
    /// Why it is refused.
    pub fn check(&self, h: &http::HeaderMap, token: bool, changes: bool) -> Result<(), Refused> {
        let get = |name: &str| h.get(name).and_then(|v| v.to_str().ok());
        if !self.host_ok(get("host")) {
            return Err(Refused::Host);
        }
        if token && !self.token_ok(get(AUTHORIZATION)) {
            return Err(Refused::Token);
        }
        if changes && !self.origin_ok(get("origin"), get("sec-fetch-site")) {
            return Err(Refused::Origin);
        }
        Ok(())
    }
}

/// A fresh token: 32 bytes from the OS's random source, as hex (256 bits).
///
/// # Errors
/// The OS has no random bytes to give.
pub fn fresh_token() -> anyhow::Result<String> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| anyhow::anyhow!("could not make a token: {e}"))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(public: Option<&str>) -> Access {
        let public = public.map(|p| Url::parse(p).unwrap());
        Access::new(
            "tok-tok-tok-tok-tok",
            "127.0.0.1:8123".parse().unwrap(),
            public.as_ref(),
        )
    }

    #[test]
    fn only_the_listening_address_or_the_public_host_is_a_host() {
        let a = access(None);
        assert!(a.host_ok(Some("127.0.0.1:8123")));
        assert!(a.host_ok(Some("LOCALHOST:8123")));
        assert!(!a.host_ok(Some("evil.example:8123")));
        assert!(!a.host_ok(Some("127.0.0.1")));
        assert!(!a.host_ok(None));
        let a = access(Some("https://box.tail1234.ts.net/"));
        assert!(a.host_ok(Some("box.tail1234.ts.net")));
        assert!(a.host_ok(Some("box.tail1234.ts.net:443")));
        assert!(!a.host_ok(Some("box.tail1234.ts.net.evil.example")));
    }

    #[test]
    fn the_token_must_be_the_whole_token_in_a_bearer_header() {
        let a = access(None);
        assert!(a.token_ok(Some("Bearer tok-tok-tok-tok-tok")));
        assert!(!a.token_ok(Some("Bearer tok-tok-tok-tok-to")));
        assert!(!a.token_ok(Some("tok-tok-tok-tok-tok")));
        assert!(!a.token_ok(Some("Bearer ")));
        assert!(!a.token_ok(None));
    }

    #[test]
    fn a_change_from_another_origin_is_refused() {
        let a = access(Some("http://127.0.0.1:9000"));
        assert!(a.origin_ok(None, None));
        assert!(a.origin_ok(Some("http://127.0.0.1:8123"), Some("same-origin")));
        assert!(a.origin_ok(Some("http://127.0.0.1:9000"), None));
        assert!(!a.origin_ok(Some("http://evil.example"), None));
        assert!(!a.origin_ok(Some("null"), None));
        assert!(!a.origin_ok(None, Some("cross-site")));
        assert!(!a.origin_ok(None, Some("same-site")));
    }

    #[test]
    fn tokens_are_fresh_and_long() {
        let (a, b) = (fresh_token().unwrap(), fresh_token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
