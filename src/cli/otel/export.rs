//! The OpenTelemetry SDK behind [`crate::cli::otel`]: the providers, an HTTP client, and the
//! recorder that turns what a command sees into spans, span events and metrics.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use opentelemetry::metrics::{Counter, Gauge, Histogram, MeterProvider as _};
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{
    MetricExporter, RetryPolicy, SpanExporter, WithExportConfig, WithHttpConfig,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider, Span, Tracer,
};
use serde_json::Value;
use teamctl::observe::event::{Event, Kind};
use teamctl::observe::spend::TeamSpend;
use teamctl::observe::watch::{Changes, Watch};
use teamctl::ops::policy::Outcome;
use teamctl::team::model::Frame;

use crate::cli::otel::config::{Config, FLUSH_DEADLINE, Protocol, Target};
use crate::cli::output::warn;

/// An OTLP/HTTP exporter builder set up for `t`: teamctl's HTTP client (which records a
/// failure in `failure`), the endpoint, protocol, timeout and headers, and no retries.
fn http<B: WithExportConfig + WithHttpConfig>(b: B, t: &Target, failure: &Failure) -> B {
    b.with_http_client(Client::new(t, failure.clone()))
        .with_endpoint(t.endpoint.clone())
        .with_protocol(protocol(t.protocol))
        .with_timeout(t.timeout)
        .with_headers(t.headers.iter().cloned().collect())
        .with_retry_policy(RetryPolicy::disabled())
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static RECORDER: Mutex<Option<Recorder>> = Mutex::new(None);

pub(super) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Runs `f` on the recorder (nothing once it has finished).
pub(super) fn with(f: impl FnOnce(&mut Recorder)) {
    if let Some(r) = RECORDER.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        f(r);
    }
}

/// The first problem sending telemetry (reported once, at the end).
type Failure = Arc<Mutex<Option<String>>>;

pub(super) fn start(verb: &'static str, content: bool, config: Config) {
    if enabled() {
        return;
    }
    for p in &config.problems {
        warn(p);
    }
    let failure: Failure = Arc::default();
    let mut attrs: Vec<KeyValue> = config
        .resource
        .iter()
        .filter(|(k, _)| k != "service.name")
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    attrs.push(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    let resource = Resource::builder_empty()
        .with_service_name(config.service_name.clone())
        .with_attributes(attrs)
        .build();
    let mut traces = None;
    if let Some(t) = &config.traces {
        match http(SpanExporter::builder().with_http(), t, &failure).build() {
            Ok(e) => {
                let batch = BatchConfigBuilder::default()
                    .with_scheduled_delay(config.span_delay)
                    .build();
                let processor = BatchSpanProcessor::builder(e)
                    .with_batch_config(batch)
                    .build();
                traces = Some(
                    SdkTracerProvider::builder()
                        .with_span_processor(processor)
                        .with_resource(resource.clone())
                        .with_max_events_per_span(4096)
                        .build(),
                );
            }
            Err(e) => warn(&format!("OpenTelemetry traces are not exported: {e}")),
        }
    }
    let mut metrics = None;
    if let Some(t) = &config.metrics {
        match http(MetricExporter::builder().with_http(), t, &failure).build() {
            Ok(e) => {
                let reader = PeriodicReader::builder(e)
                    .with_interval(config.metric_interval)
                    .build();
                metrics = Some(
                    SdkMeterProvider::builder()
                        .with_reader(reader)
                        .with_resource(resource.clone())
                        .build(),
                );
            }
            Err(e) => warn(&format!("OpenTelemetry metrics are not exported: {e}")),
        }
    }
    if traces.is_none() && metrics.is_none() {
        return;
    }
    let tracer = traces
        .as_ref()
        .map(|p| opentelemetry::trace::TracerProvider::tracer(p, "teamctl"));
    let meter = metrics
        .as_ref()
        .map(|p| p.meter("teamctl"))
        .unwrap_or_else(|| opentelemetry::global::meter("teamctl"));
    let root = tracer.as_ref().map(|t| {
        let span = t
            .span_builder(format!("teamctl {verb}"))
            .with_kind(SpanKind::Internal)
            .with_attributes([KeyValue::new("teamctl.command", verb)])
            .start(t);
        Context::current_with_span(span)
    });
    let recorder = Recorder {
        verb,
        content,
        started: Instant::now(),
        team: None,
        tracer,
        root,
        members: HashMap::new(),
        messages: meter
            .u64_counter("teamctl.messages")
            .with_description("Messages seen arriving in a team's inboxes")
            .build(),
        task_changes: meter
            .u64_counter("teamctl.task.changes")
            .with_description("Task files created, updated or deleted")
            .build(),
        decisions: meter
            .u64_counter("teamctl.policy.decisions")
            .with_description("Requests answered (or left) by a policy")
            .build(),
        duration: meter
            .f64_histogram("teamctl.command.duration")
            .with_unit("s")
            .with_description("How long the command ran")
            .build(),
        tokens: meter
            .u64_gauge("teamctl.tokens")
            .with_unit("{token}")
            .with_description("Tokens a member has used so far, by kind (gen_ai.token.type)")
            .build(),
        cost: meter
            .f64_gauge("teamctl.cost.usd")
            .with_unit("USD")
            .with_description("What a member has cost so far")
            .build(),
        traces,
        metrics,
        failure,
    };
    *RECORDER.lock().unwrap_or_else(|e| e.into_inner()) = Some(recorder);
    ENABLED.store(true, Ordering::SeqCst);
}

fn protocol(p: Protocol) -> opentelemetry_otlp::Protocol {
    match p {
        Protocol::Protobuf => opentelemetry_otlp::Protocol::HttpBinary,
        Protocol::Json => opentelemetry_otlp::Protocol::HttpJson,
    }
}

/// Ends the trace, records the command's duration and sends everything, waiting at most
/// [`FLUSH_DEADLINE`]; warns once if anything could not be sent.
pub(super) fn finish(code: u8) {
    if !ENABLED.swap(false, Ordering::SeqCst) {
        return;
    }
    let Some(mut r) = RECORDER.lock().unwrap_or_else(|e| e.into_inner()).take() else {
        return;
    };
    let now = SystemTime::now();
    let team = r.team_attr();
    r.duration.record(
        r.started.elapsed().as_secs_f64(),
        &[
            KeyValue::new("teamctl.command", r.verb),
            KeyValue::new("teamctl.exit_code", i64::from(code)),
            team.clone(),
        ],
    );
    for (_, mut span) in r.members.drain() {
        span.end_with_timestamp(now);
    }
    if let Some(root) = &r.root {
        let span = root.span();
        span.set_attribute(KeyValue::new("teamctl.exit_code", i64::from(code)));
        if code != 0 {
            span.set_status(Status::error(format!("exit code {code}")));
        }
        span.end_with_timestamp(now);
    }
    // Both providers at once, each on a thread of its own: a collector that does not answer
    // must not hold the exit for longer than the deadline.
    let (tx, rx) = mpsc::channel::<()>();
    let mut waiting = 0;
    if let Some(p) = r.traces.take() {
        let tx = tx.clone();
        waiting += 1;
        std::thread::spawn(move || {
            let _ = p.shutdown_with_timeout(FLUSH_DEADLINE);
            let _ = tx.send(());
        });
    }
    if let Some(p) = r.metrics.take() {
        let tx = tx.clone();
        waiting += 1;
        std::thread::spawn(move || {
            let _ = p.shutdown_with_timeout(FLUSH_DEADLINE);
            let _ = tx.send(());
        });
    }
    let end = Instant::now() + FLUSH_DEADLINE;
    let mut done = 0;
    while done < waiting {
        match rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
            Ok(()) => done += 1,
            Err(_) => break,
        }
    }
    let failure = r.failure.lock().unwrap_or_else(|e| e.into_inner()).take();
    match failure {
        Some(f) => warn(&format!(
            "could not export OpenTelemetry data: {f} (the command's result is not affected)"
        )),
        None if done < waiting => warn(&format!(
            "OpenTelemetry export did not finish within {} s; some data was not sent",
            FLUSH_DEADLINE.as_secs()
        )),
        None => {}
    }
}

/// What a command has seen so far, as spans and instruments.
pub(super) struct Recorder {
    verb: &'static str,
    content: bool,
    started: Instant,
    team: Option<String>,
    tracer: Option<Tracer>,
    /// The command's span, as the context its children start in.
    root: Option<Context>,
    /// A span per member, open while it is in the team.
    members: HashMap<String, Span>,
    messages: Counter<u64>,
    task_changes: Counter<u64>,
    decisions: Counter<u64>,
    duration: Histogram<f64>,
    tokens: Gauge<u64>,
    cost: Gauge<f64>,
    traces: Option<SdkTracerProvider>,
    metrics: Option<SdkMeterProvider>,
    failure: Failure,
}

impl Recorder {
    fn team_attr(&self) -> KeyValue {
        KeyValue::new("teamctl.team", self.team.clone().unwrap_or_default())
    }

    pub(super) fn team(&mut self, name: &str) {
        self.team = Some(name.to_string());
        if let Some(root) = &self.root {
            root.span()
                .set_attribute(KeyValue::new("teamctl.team", name.to_string()));
        }
    }

    /// What each member has used and cost (from its transcripts): the `teamctl.tokens` and
    /// `teamctl.cost.usd` gauges, and the GenAI usage attributes on its span.
    pub(super) fn spend(&mut self, spend: &TeamSpend) {
        let team = self.team_attr();
        for (name, m) in &spend.members {
            let mut attrs = vec![team.clone(), KeyValue::new("teamctl.member", name.clone())];
            if let Some(model) = &m.model {
                attrs.push(KeyValue::new("gen_ai.request.model", model.clone()));
            }
            for (kind, n) in [
                ("input", m.tokens.input),
                ("output", m.tokens.output),
                ("cache_read", m.tokens.cache_read),
                ("cache_creation", m.tokens.cache_creation),
            ] {
                let mut a = attrs.clone();
                a.push(KeyValue::new("gen_ai.token.type", kind));
                self.tokens.record(n, &a);
            }
            if let (Some(usd), Some(source)) = (m.cost_usd, m.cost_source) {
                let mut a = attrs.clone();
                a.push(KeyValue::new("teamctl.cost.source", source.as_str()));
                self.cost.record(usd, &a);
            }
            if let Some(span) = self.members.get_mut(name) {
                span.set_attribute(KeyValue::new(
                    "gen_ai.usage.input_tokens",
                    i64::try_from(m.tokens.input).unwrap_or(i64::MAX),
                ));
                span.set_attribute(KeyValue::new(
                    "gen_ai.usage.output_tokens",
                    i64::try_from(m.tokens.output).unwrap_or(i64::MAX),
                ));
                if let Some(usd) = m.cost_usd {
                    span.set_attribute(KeyValue::new("teamctl.cost.usd", usd));
                }
            }
        }
    }

    pub(super) fn members(&mut self, watch: &Watch) {
        self.team(watch.team().name.as_str());
        for (name, entry) in watch.members() {
            self.joined(name, entry, None);
        }
    }

    /// Opens `name`'s span: from its `joinedAt`, else from `at`, else now.
    fn joined(&mut self, name: &str, entry: &teamctl::store::Entry, at: Option<SystemTime>) {
        if self.members.contains_key(name) {
            return;
        }
        let (Some(tracer), Some(root)) = (&self.tracer, &self.root) else {
            return;
        };
        let start = entry
            .get("joinedAt")
            .and_then(Value::as_i64)
            .and_then(|ms| u64::try_from(ms).ok())
            .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms))
            .or(at)
            .unwrap_or_else(SystemTime::now);
        let s = |k: &str| entry.get(k).and_then(Value::as_str).map(String::from);
        let mut attrs = vec![
            self.team_attr(),
            KeyValue::new("teamctl.member", name.to_string()),
            KeyValue::new("gen_ai.agent.name", name.to_string()),
        ];
        if let Some(id) = s("agentId") {
            attrs.push(KeyValue::new("gen_ai.agent.id", id));
        }
        for (key, attr) in [
            ("agentType", "teamctl.member.agent_type"),
            ("backendType", "teamctl.member.backend"),
            ("model", "gen_ai.request.model"),
        ] {
            if let Some(v) = s(key) {
                attrs.push(KeyValue::new(attr, v));
            }
        }
        let span = tracer
            .span_builder(format!("member {name}"))
            .with_kind(SpanKind::Internal)
            .with_start_time(start)
            .with_attributes(attrs)
            .start_with_context(tracer, root);
        self.members.insert(name.to_string(), span);
    }

    /// Adds an event to the span of `member` when it has one, else to the command's.
    fn add_event(
        &mut self,
        member: Option<&str>,
        name: &'static str,
        at: SystemTime,
        attrs: Vec<KeyValue>,
    ) {
        match member.and_then(|m| self.members.get_mut(m)) {
            Some(span) => span.add_event_with_timestamp(name, at, attrs),
            None => {
                if let Some(root) = &self.root {
                    root.span().add_event_with_timestamp(name, at, attrs);
                }
            }
        }
    }

    pub(super) fn changes(&mut self, changes: &Changes) {
        for e in &changes.events {
            self.event(e);
        }
    }

    fn event(&mut self, e: &Event) {
        let at = chrono::DateTime::parse_from_rfc3339(&e.at)
            .map(SystemTime::from)
            .unwrap_or_else(|_| SystemTime::now());
        let team = self.team_attr();
        let content = self.content;
        match e.event {
            Kind::MemberJoined => {
                if let (Some(name), Some(entry)) = (&e.member, &e.member_entry) {
                    self.joined(name, entry, Some(at));
                }
            }
            Kind::MemberLeft => {
                if let Some(mut span) = e.member.as_ref().and_then(|m| self.members.remove(m)) {
                    span.end_with_timestamp(at);
                }
            }
            Kind::MemberUpdated => {
                let changed: Vec<String> = e
                    .changes
                    .as_ref()
                    .map(|c| c.keys().cloned().collect())
                    .unwrap_or_default();
                let mut attrs = vec![KeyValue::new("teamctl.changed", changed.join(","))];
                if let Some(active) = e
                    .member_entry
                    .as_ref()
                    .and_then(|m| m.get("isActive"))
                    .and_then(Value::as_bool)
                {
                    attrs.push(KeyValue::new("teamctl.member.is_active", active));
                }
                self.add_event(e.member.as_deref(), "teamctl.member_updated", at, attrs);
            }
            Kind::Message | Kind::Consumed | Kind::Read => {
                let msg = e.message.as_ref();
                let field = |k: &str| msg.and_then(|m| m.get(k)).and_then(Value::as_str);
                let text = field("text").unwrap_or("");
                let frame = Frame::decode(text).map(|f| f.frame_type);
                let from = e.from.clone().unwrap_or_default();
                let to = e.to.clone().unwrap_or_default();
                let kind = if frame.is_some() {
                    "protocol"
                } else {
                    "message"
                };
                let mut attrs = vec![
                    KeyValue::new("teamctl.event", e.event.as_str()),
                    KeyValue::new("teamctl.message.from", from.clone()),
                    KeyValue::new("teamctl.message.to", to.clone()),
                    KeyValue::new("teamctl.message.kind", kind),
                    KeyValue::new("teamctl.message.id", e.id.clone().unwrap_or_default()),
                    KeyValue::new("teamctl.message.size", text.len() as i64),
                ];
                if let Some(f) = &frame {
                    attrs.push(KeyValue::new("teamctl.message.frame_type", f.clone()));
                }
                if content {
                    attrs.push(KeyValue::new("teamctl.message.text", text.to_string()));
                    if let Some(s) = field("summary") {
                        attrs.push(KeyValue::new("teamctl.message.summary", s.to_string()));
                    }
                }
                if e.event == Kind::Message {
                    let mut m = vec![
                        team,
                        KeyValue::new("teamctl.member", from.clone()),
                        KeyValue::new("teamctl.message.to", to),
                        KeyValue::new("teamctl.message.kind", kind),
                    ];
                    if let Some(f) = frame {
                        m.push(KeyValue::new("teamctl.message.frame_type", f));
                    }
                    self.messages.add(1, &m);
                }
                self.add_event(Some(&from), "teamctl.message", at, attrs);
            }
            Kind::TaskCreated | Kind::TaskUpdated | Kind::TaskDeleted => {
                let task = e.task.as_ref();
                let field = |k: &str| task.and_then(|t| t.get(k)).and_then(Value::as_str);
                let status = field("status").unwrap_or("").to_string();
                let owner = field("owner").map(String::from);
                let mut attrs = vec![
                    KeyValue::new("teamctl.event", e.event.as_str()),
                    KeyValue::new("teamctl.task.id", e.id.clone().unwrap_or_default()),
                    KeyValue::new("teamctl.task.status", status.clone()),
                ];
                if let Some(o) = &owner {
                    attrs.push(KeyValue::new("teamctl.task.owner", o.clone()));
                }
                if let Some(c) = &e.changes {
                    let keys: Vec<&str> = c.keys().map(String::as_str).collect();
                    attrs.push(KeyValue::new("teamctl.changed", keys.join(",")));
                }
                if content && let Some(s) = field("subject") {
                    attrs.push(KeyValue::new("teamctl.task.subject", s.to_string()));
                }
                self.task_changes.add(
                    1,
                    &[
                        team,
                        KeyValue::new("teamctl.event", e.event.as_str()),
                        KeyValue::new("teamctl.task.status", status),
                    ],
                );
                self.add_event(owner.as_deref(), "teamctl.task", at, attrs);
            }
            _ => {}
        }
    }

    pub(super) fn decision(&mut self, o: &Outcome) {
        let r = &o.request;
        let d = &o.decision;
        let answer = serde_json::to_value(d.answer)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let kind = serde_json::to_value(r.kind)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let mut attrs = vec![
            KeyValue::new("teamctl.request.id", r.request_id.clone()),
            KeyValue::new("teamctl.request.kind", kind),
            KeyValue::new("teamctl.request.from", r.from.clone()),
            KeyValue::new("teamctl.decision.answer", answer.clone()),
            KeyValue::new("teamctl.decision.rule", d.rule.clone()),
            KeyValue::new("teamctl.decision.list", d.list),
            KeyValue::new("teamctl.decision.deferred", o.deferred),
            KeyValue::new("teamctl.decision.written", o.response.is_some()),
        ];
        if let Some(t) = &r.tool_name {
            attrs.push(KeyValue::new("teamctl.request.tool", t.clone()));
        }
        if self.content {
            attrs.push(KeyValue::new(
                "teamctl.request.asks",
                teamctl::ops::policy::asks(r),
            ));
        }
        let team = self.team_attr();
        self.decisions.add(
            1,
            &[
                team,
                KeyValue::new("teamctl.member", r.from.clone()),
                KeyValue::new("teamctl.decision.answer", answer),
            ],
        );
        let from = r.from.clone();
        self.add_event(Some(&from), "teamctl.decision", SystemTime::now(), attrs);
    }

    pub(super) fn acted(&mut self, a: &teamctl::observe::keep::Acted) {
        if let Some(root) = &self.root {
            let action = serde_json::to_value(a.action)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            root.span().add_event(
                "teamctl.action",
                vec![
                    KeyValue::new("teamctl.action", action),
                    KeyValue::new("teamctl.member", a.stuck.member.clone()),
                    KeyValue::new("teamctl.waiting", a.stuck.reason.to_string()),
                    KeyValue::new("teamctl.action.ok", a.ok),
                ],
            );
        }
    }

    pub(super) fn budget_warning(&mut self, w: &teamctl::observe::budget::Warning) {
        if let Some(root) = &self.root {
            let limit = serde_json::to_value(w.limit)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            let mut attrs = vec![
                KeyValue::new("teamctl.budget.limit", limit),
                KeyValue::new("teamctl.budget.spent", w.spent),
                KeyValue::new("teamctl.budget.max", w.max),
                KeyValue::new("teamctl.budget.percent", w.percent),
            ];
            if let Some(m) = &w.member {
                attrs.push(KeyValue::new("teamctl.member", m.clone()));
            }
            root.span().add_event("teamctl.budget_warning", attrs);
        }
    }

    pub(super) fn step(&mut self, state: &str, message: &str) {
        if let Some(root) = &self.root {
            root.span().add_event(
                "teamctl.step",
                vec![
                    KeyValue::new("teamctl.state", state.to_string()),
                    KeyValue::new("teamctl.step.message", message.to_string()),
                ],
            );
        }
    }
}

/// OTLP over HTTP with `ureq` (blocking; the SDK exports from threads of its own): no async
/// runtime. The first failure (a transport error, a status other than 2xx) is kept for the
/// warning at the end.
#[derive(Debug)]
struct Client {
    agent: ureq::Agent,
    failure: Failure,
}

impl Client {
    fn new(t: &Target, failure: Failure) -> Client {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(t.timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .build()
            .into();
        Client { agent, failure }
    }

    fn fail(&self, what: String) {
        let mut f = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        f.get_or_insert(what);
    }
}

#[async_trait]
impl HttpClient for Client {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let uri = parts.uri.to_string();
        let mut req = self.agent.post(&uri);
        for (k, v) in &parts.headers {
            req = req.header(k, v);
        }
        match req.send(&body[..]) {
            Ok(resp) => {
                let status = resp.status();
                let mut body = resp.into_body();
                let bytes = body
                    .with_config()
                    .limit(1 << 20)
                    .read_to_vec()
                    .unwrap_or_default();
                if !status.is_success() {
                    self.fail(format!("{uri} answered {status}"));
                }
                let mut r = Response::new(Bytes::from(bytes));
                *r.status_mut() = status;
                Ok(r)
            }
            Err(e) => {
                self.fail(format!("{uri}: {e}"));
                Err(Box::new(e))
            }
        }
    }
}
