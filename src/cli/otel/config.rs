//! Where and how the telemetry goes: the standard OpenTelemetry variables read into a
//! [`Config`] (endpoints, protocol, headers, export intervals clamped to what an idle command can
//! afford).

use std::time::Duration;

use percent_encoding::percent_decode_str;

/// The longest teamctl waits for the telemetry to be sent when it exits.
pub(crate) const FLUSH_DEADLINE: Duration = Duration::from_secs(2);

/// The shortest period `OTEL_METRIC_EXPORT_INTERVAL` and `OTEL_BSP_SCHEDULE_DELAY` may set: the
/// SDK's exporter threads wake that often, and at 0 an idle `watch` would spin a whole core.
pub(crate) const PERIOD_MIN: Duration = Duration::from_secs(1);

/// The longest period they may set (a command flushes everything when it ends anyway; a
/// period near `u64::MAX` ms would overflow the SDK's clock arithmetic).
pub(crate) const PERIOD_MAX: Duration = Duration::from_secs(3600);

/// The SDK's defaults: a metric export a minute, spans every 5 s.
const METRIC_INTERVAL: Duration = Duration::from_secs(60);

const SPAN_DELAY: Duration = Duration::from_secs(5);

/// The OTLP/HTTP encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// `http/protobuf` (the default).
    Protobuf,
    /// `http/json`.
    Json,
}

/// Where one signal goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// The full URL (`…/v1/traces`, `…/v1/metrics`).
    pub(crate) endpoint: String,
    pub(crate) protocol: Protocol,
    pub(crate) headers: Vec<(String, String)>,
    /// Per request.
    pub(crate) timeout: Duration,
}

/// What the standard OpenTelemetry variables ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Config {
    pub(crate) traces: Option<Target>,
    pub(crate) metrics: Option<Target>,
    /// `OTEL_SERVICE_NAME`, else `service.name` of `OTEL_RESOURCE_ATTRIBUTES`, else `teamctl`.
    pub(crate) service_name: String,
    /// `OTEL_RESOURCE_ATTRIBUTES`.
    pub(crate) resource: Vec<(String, String)>,
    /// How often metrics are exported (`OTEL_METRIC_EXPORT_INTERVAL`, kept within
    /// [`PERIOD_MIN`]..=[`PERIOD_MAX`]).
    pub(crate) metric_interval: Duration,
    /// How often spans are exported (`OTEL_BSP_SCHEDULE_DELAY`, kept within the same bounds).
    pub(crate) span_delay: Duration,
    /// Problems with the variables (each a warning; the rest still works).
    pub(crate) problems: Vec<String>,
}

impl Config {
    /// Reads the variables through `var` (empty counts as unset): `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// (`/v1/traces`, `/v1/metrics` appended) or the per-signal `…_TRACES_ENDPOINT` /
    /// `…_METRICS_ENDPOINT` (used as they are), `…_PROTOCOL`, `…_HEADERS` and `…_TIMEOUT` (each
    /// per signal or for both), `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
    /// `OTEL_METRIC_EXPORT_INTERVAL` and `OTEL_BSP_SCHEDULE_DELAY` (clamped), and
    /// `OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER`/`OTEL_METRICS_EXPORTER` = `none`. `None`: no
    /// endpoint, nothing to export. A value that is dropped or changed is a problem (a warning
    /// that names the variable, and for a header its key or position, never its value).
    pub(crate) fn from_vars(var: &dyn Fn(&str) -> Option<String>) -> Option<Config> {
        let get = |k: &str| {
            var(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        if get("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return None;
        }
        let base = get("OTEL_EXPORTER_OTLP_ENDPOINT");
        let mut problems = Vec::new();
        let mut target = |signal: &str, path: &str, exporter: &str| -> Option<Target> {
            if get(exporter).is_some_and(|v| v.eq_ignore_ascii_case("none")) {
                return None;
            }
            let up = signal.to_uppercase();
            let endpoint = match (get(&format!("OTEL_EXPORTER_OTLP_{up}_ENDPOINT")), &base) {
                (Some(e), _) => e,
                (None, Some(b)) => format!("{}/{path}", b.trim_end_matches('/')),
                (None, None) => return None,
            };
            let protocol = match get(&format!("OTEL_EXPORTER_OTLP_{up}_PROTOCOL"))
                .or_else(|| get("OTEL_EXPORTER_OTLP_PROTOCOL"))
                .as_deref()
            {
                None | Some("http/protobuf") => Protocol::Protobuf,
                Some("http/json") => Protocol::Json,
                Some(other) => {
                    problems.push(format!(
                        "OTEL_EXPORTER_OTLP_PROTOCOL {other:?} is not supported (teamctl speaks \
                         http/protobuf and http/json); using http/protobuf"
                    ));
                    Protocol::Protobuf
                }
            };
            let headers_var = [
                format!("OTEL_EXPORTER_OTLP_{up}_HEADERS"),
                "OTEL_EXPORTER_OTLP_HEADERS".into(),
            ]
            .into_iter()
            .find_map(|name| get(&name).map(|v| (name, v)));
            let headers = headers_var
                .map(|(name, v)| headers(&name, &v, &mut problems))
                .unwrap_or_default();
            let timeout = get(&format!("OTEL_EXPORTER_OTLP_{up}_TIMEOUT"))
                .or_else(|| get("OTEL_EXPORTER_OTLP_TIMEOUT"))
                .and_then(|t| t.parse::<u64>().ok())
                .map_or(Duration::from_secs(10), Duration::from_millis);
            Some(Target {
                endpoint,
                protocol,
                headers,
                // A command must not wait long for its telemetry.
                timeout: timeout.min(FLUSH_DEADLINE),
            })
        };
        let traces = target("traces", "v1/traces", "OTEL_TRACES_EXPORTER");
        let metrics = target("metrics", "v1/metrics", "OTEL_METRICS_EXPORTER");
        if traces.is_none() && metrics.is_none() {
            return None;
        }
        let resource = get("OTEL_RESOURCE_ATTRIBUTES")
            .map(|r| pairs(&r))
            .unwrap_or_default();
        let metric_interval = period(
            "OTEL_METRIC_EXPORT_INTERVAL",
            get("OTEL_METRIC_EXPORT_INTERVAL"),
            METRIC_INTERVAL,
            &mut problems,
        );
        let span_delay = period(
            "OTEL_BSP_SCHEDULE_DELAY",
            get("OTEL_BSP_SCHEDULE_DELAY"),
            SPAN_DELAY,
            &mut problems,
        );
        // The general headers variable is read once per signal: say a problem once.
        let mut seen = std::collections::HashSet::new();
        problems.retain(|p| seen.insert(p.clone()));
        let service_name = get("OTEL_SERVICE_NAME")
            .or_else(|| {
                resource
                    .iter()
                    .find(|(k, _)| k == "service.name")
                    .map(|(_, v)| v.clone())
            })
            .unwrap_or_else(|| "teamctl".into());
        Some(Config {
            traces,
            metrics,
            service_name,
            resource,
            metric_interval,
            span_delay,
            problems,
        })
    }
}

/// The period in milliseconds that `name` holds (`value`), kept within [`PERIOD_MIN`] and
/// [`PERIOD_MAX`]; `default` when unset or not a number. A change is a problem.
fn period(
    name: &str,
    value: Option<String>,
    default: Duration,
    problems: &mut Vec<String>,
) -> Duration {
    let Some(v) = value else {
        return default;
    };
    let ms = |d: Duration| d.as_millis();
    match v.parse::<u64>() {
        Ok(n) => {
            let asked = Duration::from_millis(n);
            let kept = asked.clamp(PERIOD_MIN, PERIOD_MAX);
            if kept != asked {
                problems.push(format!(
                    "{name}={n} is outside {} to {} ms: using {} ms",
                    ms(PERIOD_MIN),
                    ms(PERIOD_MAX),
                    ms(kept)
                ));
            }
            kept
        }
        Err(_) => {
            problems.push(format!(
                "{name} is not a number of milliseconds: using {} ms",
                ms(default)
            ));
            default
        }
    }
}

/// The headers in `value` (the variable `name`): `k=v,k2=v2` with percent-encoded values. An
/// entry that is not `key=value`, whose key is not an HTTP header name or whose value is not a
/// header value is left out, with a problem naming it by position (and by key when the key is
/// a valid name), never by its value: a header is often a credential.
fn headers(name: &str, value: &str, problems: &mut Vec<String>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, entry) in value.split(',').enumerate() {
        let n = i + 1;
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let Some((k, v)) = entry.split_once('=') else {
            problems.push(format!(
                "{name}: entry {n} is not key=value; it is left out"
            ));
            continue;
        };
        let k = k.trim();
        if k.is_empty() || !k.bytes().all(is_token) {
            problems.push(format!(
                "{name}: entry {n} has no valid header name before its '='; it is left out"
            ));
            continue;
        }
        let v = percent_decode_str(v.trim())
            .decode_utf8_lossy()
            .into_owned();
        if !v.bytes().all(|b| b == b'\t' || (b >= 0x20 && b != 0x7f)) {
            problems.push(format!(
                "{name}: the value of header {k} (entry {n}) holds a control character; it is \
                 left out"
            ));
            continue;
        }
        out.push((k.to_string(), v));
    }
    out
}

/// A byte of an HTTP token (a header name, RFC 9110).
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// `k=v,k2=v2` with percent-encoded values (W3C baggage style, as the variables use).
fn pairs(s: &str) -> Vec<(String, String)> {
    s.split(',')
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            let k = k.trim();
            (!k.is_empty()).then(|| {
                (
                    k.to_string(),
                    percent_decode_str(v.trim())
                        .decode_utf8_lossy()
                        .into_owned(),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Option<Config> {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_vars(&|k| m.get(k).cloned())
    }

    #[test]
    fn nothing_without_an_endpoint() {
        assert_eq!(config(&[]), None);
        assert_eq!(config(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")]), None);
        assert_eq!(
            config(&[
                ("OTEL_SERVICE_NAME", "x"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
            ]),
            None
        );
        assert_eq!(
            config(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318"),
                ("OTEL_SDK_DISABLED", "true")
            ]),
            None
        );
    }

    #[test]
    fn endpoints_protocols_headers_and_resource() {
        let c = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318/"),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:9/custom"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b,x-team=t"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "500"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=ci,deployment.environment=prod",
            ),
        ])
        .unwrap();
        let t = c.traces.unwrap();
        assert_eq!(t.endpoint, "http://h:4318/v1/traces");
        assert_eq!(t.protocol, Protocol::Protobuf);
        assert_eq!(
            t.headers,
            [
                ("api-key".into(), "a b".into()),
                ("x-team".into(), "t".into())
            ]
        );
        assert_eq!(t.timeout, Duration::from_millis(500));
        let m = c.metrics.unwrap();
        assert_eq!(m.endpoint, "http://m:9/custom");
        assert_eq!(m.protocol, Protocol::Json);
        assert_eq!(m.timeout, Duration::from_millis(500));
        assert_eq!(c.service_name, "ci");
        assert_eq!(c.resource.len(), 2);

        // One signal only; grpc is not spoken; a long timeout is cut to the flush deadline.
        let c = config(&[
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t/v1/traces"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_SERVICE_NAME", "svc"),
        ])
        .unwrap();
        assert!(c.metrics.is_none());
        assert_eq!(c.traces.as_ref().unwrap().timeout, FLUSH_DEADLINE);
        assert_eq!(c.service_name, "svc");
        assert_eq!(c.problems.len(), 1);
        let c = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ])
        .unwrap();
        assert!(c.traces.is_some() && c.metrics.is_none());
        assert_eq!(c.metric_interval, METRIC_INTERVAL);
        assert_eq!(c.span_delay, SPAN_DELAY);
        assert!(c.problems.is_empty());
    }

    #[test]
    fn periods_are_kept_within_bounds() {
        let with = |interval: &str, delay: &str| {
            config(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h"),
                ("OTEL_METRIC_EXPORT_INTERVAL", interval),
                ("OTEL_BSP_SCHEDULE_DELAY", delay),
            ])
            .unwrap()
        };
        let c = with("0", "18446744073709551615");
        assert_eq!(c.metric_interval, PERIOD_MIN);
        assert_eq!(c.span_delay, PERIOD_MAX);
        assert_eq!(
            c.problems,
            [
                "OTEL_METRIC_EXPORT_INTERVAL=0 is outside 1000 to 3600000 ms: using 1000 ms",
                "OTEL_BSP_SCHEDULE_DELAY=18446744073709551615 is outside 1000 to 3600000 ms: \
                 using 3600000 ms"
            ]
        );
        let c = with("5000", "soon");
        assert_eq!(c.metric_interval, Duration::from_secs(5));
        assert_eq!(c.span_delay, SPAN_DELAY);
        assert_eq!(
            c.problems,
            ["OTEL_BSP_SCHEDULE_DELAY is not a number of milliseconds: using 5000 ms"]
        );
    }

    #[test]
    fn a_dropped_header_is_named_never_shown() {
        let c = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "good=1, Bearer s3cr3t ,,x y=s3cr3t,=s3cr3t,auth=s3%0dcr3t,ok=a%20b",
            ),
        ])
        .unwrap();
        let t = c.traces.unwrap();
        assert_eq!(
            t.headers,
            [("good".into(), "1".into()), ("ok".into(), "a b".into())]
        );
        assert_eq!(t.headers, c.metrics.unwrap().headers);
        assert_eq!(
            c.problems,
            [
                "OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value; it is left out",
                "OTEL_EXPORTER_OTLP_HEADERS: entry 4 has no valid header name before its '='; \
                 it is left out",
                "OTEL_EXPORTER_OTLP_HEADERS: entry 5 has no valid header name before its '='; \
                 it is left out",
                "OTEL_EXPORTER_OTLP_HEADERS: the value of header auth (entry 6) holds a control \
                 character; it is left out",
            ]
        );
        assert!(!c.problems.iter().any(|p| p.contains("s3cr3t")));
    }

    /// Over generated header lists: every header kept is one the HTTP client accepts (so the
    /// exporter drops nothing silently), every entry left out is named in a problem, and no
    /// problem shows a value.
    #[cfg(feature = "otel")]
    #[test]
    fn generated_headers_are_kept_valid_or_named() {
        const PIECES: &[&str] = &[
            "a", "X-Key", "=", "==", ",", " ", "%0A", "%0d", "%20", "%", "%zz", "\t", ":",
            "Bearer", "é", "\u{7f}", "(", "@", "secret",
        ];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for _ in 0..3000 {
            let entries: Vec<String> = (0..1 + next(4))
                .map(|_| {
                    let key: String = (0..next(3)).map(|_| PIECES[next(PIECES.len())]).collect();
                    let value: String = (0..next(4)).map(|_| PIECES[next(PIECES.len())]).collect();
                    format!("{key}=VALUE{value}")
                })
                .collect();
            let list = entries.join(",");
            let mut problems = Vec::new();
            let kept = headers("H", &list, &mut problems);
            for (k, v) in &kept {
                assert!(
                    http::HeaderName::from_bytes(k.as_bytes()).is_ok(),
                    "{k:?} in {list:?}"
                );
                assert!(http::HeaderValue::from_str(v).is_ok(), "{v:?} in {list:?}");
            }
            let entries = list.split(',').filter(|e| !e.trim().is_empty()).count();
            assert_eq!(
                kept.len() + problems.len(),
                entries,
                "{list:?}: {problems:?}"
            );
            for p in &problems {
                assert!(!p.contains("VALUE"), "a value is shown: {p}");
            }
        }
    }
}
