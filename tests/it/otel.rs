//! OpenTelemetry: a small OTLP/HTTP receiver on 127.0.0.1 gets the spans, span events and
//! metrics of `wait` and `watch` (protobuf decoded with the opentelemetry-proto types, and
//! http/json); an unreachable or silent collector is one warning and changes no exit code; with
//! no endpoint, no connection is attempted.

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{Metric, metric};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{Value, json};

use crate::common::TestEnv;

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Got {
    path: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

/// An OTLP/HTTP receiver: answers every POST with 200 (or never, when `silent`).
struct Receiver {
    port: u16,
    got: Arc<Mutex<Vec<Got>>>,
    connections: Arc<AtomicUsize>,
}

impl Receiver {
    fn start(silent: bool) -> Receiver {
        Self::on(TcpListener::bind("127.0.0.1:0").unwrap(), silent)
    }

    fn on(listener: TcpListener, silent: bool) -> Receiver {
        let port = listener.local_addr().unwrap().port();
        let got: Arc<Mutex<Vec<Got>>> = Arc::default();
        let connections: Arc<AtomicUsize> = Arc::default();
        let (g, c) = (got.clone(), connections.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                c.fetch_add(1, Ordering::SeqCst);
                let g = g.clone();
                std::thread::spawn(move || serve(stream, &g, silent));
            }
        });
        Receiver {
            port,
            got,
            connections,
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn requests(&self, path: &str) -> Vec<Got> {
        self.got
            .lock()
            .unwrap()
            .iter()
            .filter(|g| g.path == path)
            .cloned()
            .collect()
    }
}

fn serve(stream: TcpStream, got: &Mutex<Vec<Got>>, silent: bool) {
    let mut out = stream.try_clone().unwrap();
    let mut r = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let mut headers = HashMap::new();
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_lowercase(), v.trim().to_string());
            }
        }
        let len: usize = headers
            .get("content-length")
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        if r.read_exact(&mut body).is_err() {
            return;
        }
        got.lock().unwrap().push(Got {
            path,
            headers,
            body,
        });
        if silent {
            std::thread::sleep(Duration::from_secs(60));
            return;
        }
        let _ = out.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    }
}

fn attr<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attrs
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| a.value.as_ref())
        .and_then(|v: &AnyValue| v.value.as_ref())
}

fn s(attrs: &[KeyValue], key: &str) -> Option<String> {
    match attr(attrs, key) {
        Some(any_value::Value::StringValue(s)) => Some(s.clone()),
        Some(any_value::Value::IntValue(i)) => Some(i.to_string()),
        Some(any_value::Value::BoolValue(b)) => Some(b.to_string()),
        _ => None,
    }
}

fn spans(r: &Receiver) -> (Vec<KeyValue>, Vec<Span>) {
    let mut resource = Vec::new();
    let mut out = Vec::new();
    for g in r.requests("/v1/traces") {
        assert_eq!(g.headers["content-type"], "application/x-protobuf");
        let req = ExportTraceServiceRequest::decode(g.body.as_slice()).unwrap();
        for rs in req.resource_spans {
            resource = rs.resource.map(|r| r.attributes).unwrap_or_default();
            for ss in rs.scope_spans {
                out.extend(ss.spans);
            }
        }
    }
    (resource, out)
}

/// The teammate `researcher` of the example team writes `text` to `tester`'s inbox.
fn researcher_writes(env: &TestEnv, text: &str) {
    let p = env.inbox("demo-team", "tester");
    let tmp = p.with_extension("json.tmp.00000001");
    fs::write(
        &tmp,
        json!([{"from":"researcher","text":text,"summary":"found it","timestamp":"2026-11-29T10:00:01.000Z","msgV":1,"msg_id":"m-otel-1","read":false}]).to_string(),
    )
    .unwrap();
    fs::rename(tmp, p).unwrap();
}

/// `wait --message-from researcher` run as `tester`, with `env_vars`; the message is written
/// once the wait blocks. Returns the exit code and stderr.
fn wait_for_researcher(env: &TestEnv, env_vars: &[(&str, &str)], extra: &[&str]) -> (i32, String) {
    let mut cmd = env.std_cmd();
    cmd.args([
        "wait",
        "--message-from",
        "researcher",
        "--as",
        "tester",
        "--timeout",
        "30s",
    ])
    .args(extra)
    .envs(env_vars.iter().copied())
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut stderr = String::new();
    loop {
        let mut line = String::new();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "wait ended early: {stderr}"
        );
        stderr.push_str(&line);
        if line.starts_with("waiting up to") {
            break;
        }
    }
    researcher_writes(env, "THE SECRET ANSWER");
    err.read_to_string(&mut stderr).unwrap();
    let code = child.wait().unwrap().code().unwrap();
    (code, stderr)
}

#[test]
fn a_wait_sends_its_trace_and_metrics_as_protobuf() {
    let env = TestEnv::example();
    researcher_session(&env);
    let r = Receiver::start(false);
    let endpoint = r.endpoint();
    let (code, stderr) = wait_for_researcher(
        &env,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=k%201"),
            ("OTEL_SERVICE_NAME", "ci-teams"),
            ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test"),
        ],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");

    let traces = r.requests("/v1/traces");
    assert!(!traces.is_empty());
    assert_eq!(traces[0].headers["x-api-key"], "k 1");
    let (resource, spans) = spans(&r);
    assert_eq!(s(&resource, "service.name").as_deref(), Some("ci-teams"));
    assert_eq!(
        s(&resource, "deployment.environment").as_deref(),
        Some("test")
    );
    let researcher = the_command_has_a_span_per_member(&spans);
    the_message_is_an_event_of_its_sender_without_text(researcher, &r);
    let metrics = metrics(&r);
    the_messages_and_the_duration_are_counted(&metrics);
    each_members_use_and_cost_are_gauges(&metrics);
    // And what the researcher used, on its span.
    assert_eq!(
        s(&researcher.attributes, "gen_ai.usage.output_tokens").as_deref(),
        Some("5")
    );
}

/// The researcher's own session in the example team (a pane teammate in /home/alice/src/app):
/// one response of 10 input and 5 output tokens of claude-opus-5-5 ($0.00014).
fn researcher_session(env: &TestEnv) {
    // (The example's own transcripts are taken away: this one alone is counted.)
    let proj = env.root.join("projects/-home-alice-src-app");
    let _ = fs::remove_dir_all(&proj);
    fs::create_dir_all(&proj).unwrap();
    fs::write(
        proj.join("6a6a6a6a-0000-4000-8000-000000000001.jsonl"),
        format!(
            "{}\n",
            json!({"type":"assistant","teamName":"demo-team","agentName":"researcher","timestamp":"2026-11-29T10:00:00.000Z",
                "message":{"id":"r1","model":"claude-opus-5-5","content":[{"type":"text","text":"looking"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}})
        ),
    )
    .unwrap();
}

/// The command's span, and under it one span per member from when each joined (joinedAt);
/// returns the researcher's.
fn the_command_has_a_span_per_member(spans: &[Span]) -> &Span {
    let root = spans
        .iter()
        .find(|s| s.name == "teamctl wait")
        .expect("the command's span");
    assert_eq!(
        s(&root.attributes, "teamctl.team").as_deref(),
        Some("demo-team")
    );
    assert_eq!(
        s(&root.attributes, "teamctl.exit_code").as_deref(),
        Some("0")
    );
    assert!(root.parent_span_id.is_empty());
    // A span per member, children of the command's, from when each joined (joinedAt).
    let mut names: Vec<&str> = spans
        .iter()
        .filter(|s| s.parent_span_id == root.span_id)
        .map(|s| s.name.as_str())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["member researcher", "member team-lead", "member tester"]
    );
    let researcher = spans
        .iter()
        .find(|s| s.name == "member researcher")
        .unwrap();
    assert_eq!(researcher.trace_id, root.trace_id);
    assert_eq!(
        researcher.start_time_unix_nano,
        1_764_444_660_000 * 1_000_000
    );
    assert_eq!(
        s(&researcher.attributes, "gen_ai.agent.name").as_deref(),
        Some("researcher")
    );
    researcher
}

/// The message, as a span event of its sender: names, kind, id and size, no text.
fn the_message_is_an_event_of_its_sender_without_text(researcher: &Span, r: &Receiver) {
    let ev = researcher
        .events
        .iter()
        .find(|e| {
            e.name == "teamctl.message"
                && s(&e.attributes, "teamctl.event").as_deref() == Some("message")
        })
        .expect("the message event");
    assert_eq!(
        s(&ev.attributes, "teamctl.message.to").as_deref(),
        Some("tester")
    );
    assert_eq!(
        s(&ev.attributes, "teamctl.message.id").as_deref(),
        Some("m-otel-1")
    );
    assert_eq!(
        s(&ev.attributes, "teamctl.message.kind").as_deref(),
        Some("message")
    );
    assert_eq!(
        s(&ev.attributes, "teamctl.message.size").as_deref(),
        Some("17")
    );
    assert!(attr(&ev.attributes, "teamctl.message.text").is_none());
    let all = format!("{:?}", r.got.lock().unwrap());
    assert!(!all.contains("THE SECRET ANSWER") && !all.contains("found it"));
}

/// Every metric the receiver got, by name.
fn metrics(r: &Receiver) -> HashMap<String, Metric> {
    let mut seen = HashMap::new();
    for g in r.requests("/v1/metrics") {
        let req = ExportMetricsServiceRequest::decode(g.body.as_slice()).unwrap();
        for rm in req.resource_metrics {
            for sm in rm.scope_metrics {
                for m in sm.metrics {
                    seen.insert(m.name.clone(), m);
                }
            }
        }
    }
    seen
}

/// The message counted per member, and the command's duration.
fn the_messages_and_the_duration_are_counted(seen: &HashMap<String, Metric>) {
    let Some(metric::Data::Sum(sum)) = &seen["teamctl.messages"].data else {
        panic!("teamctl.messages is not a sum")
    };
    let p = &sum.data_points[0];
    assert_eq!(
        s(&p.attributes, "teamctl.member").as_deref(),
        Some("researcher")
    );
    assert_eq!(
        s(&p.attributes, "teamctl.team").as_deref(),
        Some("demo-team")
    );
    let Some(metric::Data::Histogram(h)) = &seen["teamctl.command.duration"].data else {
        panic!("teamctl.command.duration is not a histogram")
    };
    assert_eq!(h.data_points[0].count, 1);
    assert_eq!(
        s(&h.data_points[0].attributes, "teamctl.command").as_deref(),
        Some("wait")
    );
}

/// What each member used and cost, from its transcripts: gauges by member (and token kind).
fn each_members_use_and_cost_are_gauges(seen: &HashMap<String, Metric>) {
    let Some(metric::Data::Gauge(g)) = &seen["teamctl.cost.usd"].data else {
        panic!("teamctl.cost.usd is not a gauge")
    };
    assert_eq!(
        g.data_points.len(),
        1,
        "only the researcher has a transcript"
    );
    let p = &g.data_points[0];
    assert_eq!(
        s(&p.attributes, "teamctl.member").as_deref(),
        Some("researcher")
    );
    assert_eq!(
        s(&p.attributes, "teamctl.cost.source").as_deref(),
        Some("computed")
    );
    assert_eq!(
        p.value,
        Some(
            opentelemetry_proto::tonic::metrics::v1::number_data_point::Value::AsDouble(
                0.00014000000000000001
            )
        )
    );
    let Some(metric::Data::Gauge(g)) = &seen["teamctl.tokens"].data else {
        panic!("teamctl.tokens is not a gauge")
    };
    let input = g
        .data_points
        .iter()
        .find(|p| s(&p.attributes, "gen_ai.token.type").as_deref() == Some("input"))
        .unwrap();
    assert_eq!(
        input.value,
        Some(opentelemetry_proto::tonic::metrics::v1::number_data_point::Value::AsInt(10))
    );
}

#[test]
fn http_json_and_otel_content_send_the_text() {
    let env = TestEnv::example();
    let r = Receiver::start(false);
    let traces = format!("{}/custom/traces", r.endpoint());
    let (code, stderr) = wait_for_researcher(
        &env,
        &[
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", &traces),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ],
        &["--otel-content"],
    );
    assert_eq!(code, 0, "{stderr}");
    // Only the signal with an endpoint is sent, where it says.
    assert!(r.requests("/v1/metrics").is_empty());
    let got = r.requests("/custom/traces");
    assert!(!got.is_empty());
    assert_eq!(got[0].headers["content-type"], "application/json");
    let doc: Value = serde_json::from_slice(&got[0].body).unwrap();
    let text = doc.to_string();
    assert!(text.contains("\"teamctl wait\""), "{text}");
    assert!(text.contains("THE SECRET ANSWER") && text.contains("found it"));
}

#[test]
fn an_unreachable_or_silent_collector_is_one_warning_and_changes_no_exit_code() {
    let env = TestEnv::example();
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://127.0.0.1:{}", l.local_addr().unwrap().port())
    };
    for (args, code) in [
        (vec!["watch", "--timeout", "1s"], 0),
        (
            vec![
                "wait",
                "--message-from",
                "researcher",
                "--as",
                "tester",
                "--timeout",
                "1s",
            ],
            3,
        ),
    ] {
        let out = env
            .cmd()
            .args(&args)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &closed)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let warnings: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("OpenTelemetry"))
            .collect();
        assert_eq!(warnings.len(), 1, "{stderr}");
        assert!(
            warnings[0].starts_with("warning: could not export OpenTelemetry data"),
            "{stderr}"
        );
    }
    // A collector that takes the data and never answers: the exit is not held for long.
    let silent = Receiver::start(true);
    let t = Instant::now();
    let out = env
        .cmd()
        .args(["watch", "--timeout", "1s"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", silent.endpoint())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "the exit waited {:?}",
        t.elapsed()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("OpenTelemetry").count(), 1, "{stderr}");
}

#[test]
fn with_no_endpoint_no_connection_is_attempted() {
    // The exporters' default endpoint: if teamctl tried anything, it would be here.
    let Ok(listener) = TcpListener::bind("127.0.0.1:4318") else {
        eprintln!("skipping: 127.0.0.1:4318 is taken");
        return;
    };
    let r = Receiver::on(listener, false);
    let env = TestEnv::example();
    let out = env
        .cmd()
        .args(["watch", "--timeout", "1s", "--otel-content"])
        .env("OTEL_SERVICE_NAME", "x")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(r.connections.load(Ordering::SeqCst), 0);
}

/// `OTEL_METRIC_EXPORT_INTERVAL=0` (or `OTEL_BSP_SCHEDULE_DELAY=0`) made the SDK's exporter
/// threads spin: an idle `watch` used a whole core. Such a period is kept within 1 s to 1 h,
/// with a warning; an idle `watch` then costs next to no CPU. A header entry that is dropped is
/// named by position (or key), never by its value, and the others are still sent.
#[test]
fn absurd_periods_are_clamped_and_dropped_headers_named() {
    let env = TestEnv::example();
    let r = Receiver::start(false);
    let mut cmd = env.std_cmd();
    cmd.args(["watch", "--timeout", "3s"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", r.endpoint())
        .env("OTEL_METRIC_EXPORT_INTERVAL", "0")
        .env("OTEL_BSP_SCHEDULE_DELAY", "0")
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-team=t, Bearer s3cr3t,x y=s3cr3t,auth=s3%0Acr3t",
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // Reaped by wait4 below, which also gives its CPU time.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.spawn().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    // The child's own CPU time, from its exit.
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{stderr}"
    );
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let cpu = secs(usage.ru_utime) + secs(usage.ru_stime);
    assert!(
        cpu < 0.5,
        "an idle watch used {cpu:.2} s of CPU in 3 s: {stderr}"
    );
    for want in [
        "warning: OTEL_METRIC_EXPORT_INTERVAL=0 is outside 1000 to 3600000 ms: using 1000 ms",
        "warning: OTEL_BSP_SCHEDULE_DELAY=0 is outside 1000 to 3600000 ms: using 1000 ms",
        "warning: OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value; it is left out",
        "warning: OTEL_EXPORTER_OTLP_HEADERS: entry 3 has no valid header name",
        "warning: OTEL_EXPORTER_OTLP_HEADERS: the value of header auth (entry 4) holds a control",
    ] {
        assert_eq!(
            stderr.lines().filter(|l| l.starts_with(want)).count(),
            1,
            "{want:?} once in {stderr}"
        );
    }
    assert!(
        !stderr.contains("s3cr3t"),
        "a header's value was shown: {stderr}"
    );
    // What the command recorded still went out, with the good header only.
    let got = r.requests("/v1/metrics");
    assert!(!got.is_empty(), "no metrics were sent");
    for g in &got {
        assert_eq!(g.headers.get("x-team").map(String::as_str), Some("t"));
        assert!(!g.headers.contains_key("auth"), "{:?}", g.headers);
    }
}
