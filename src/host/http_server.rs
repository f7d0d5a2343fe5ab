//! The one HTTP server teamctl runs (the webhook's answers, `teamctl serve`): hyper's HTTP/1.1
//! on a small tokio runtime in a thread of its own, so a slow or idle client never holds up
//! another. Each connection is bounded: at most [`Limits::connections`] at once (more wait in
//! the kernel's queue), a request's head must arrive whole within [`Limits::head`] of its
//! first byte (an idle keep-alive connection is closed after it too), its body whole within
//! [`Limits::body`] after the head and up to [`Limits::max_body`] bytes (else 408 or 413,
//! without the handler). The handler is plain blocking code, run on the runtime's blocking
//! threads; a response may stream ([`Reply::stream`]), fed from any thread.

use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread;
use std::time::Duration;

use anyhow::{Context as _, Result};
use http_body_util::{BodyExt, Limited};
pub use hyper::body::Bytes;
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{Semaphore, mpsc, oneshot};

/// A request as the handler gets it: the head, and the whole body.
pub type Request = http::Request<Vec<u8>>;
/// A response as the handler gives it.
pub type Response = http::Response<Reply>;
/// What answers a request: plain blocking code, called once per request on a blocking thread.
pub type Handler = Arc<dyn Fn(Request) -> Response + Send + Sync>;

/// The bounds every connection keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once; more wait in the kernel's queue until one ends.
    pub connections: usize,
    /// A request's head (its line and headers) arrives whole within this, counted from its
    /// first byte or from when the connection became idle.
    pub head: Duration,
    /// Its body arrives whole within this after the head.
    pub body: Duration,
    /// The largest body taken (413 past it).
    pub max_body: usize,
    /// The largest head taken (431 past it).
    pub max_head: usize,
    /// Whether a connection may carry more than one request.
    pub keep_alive: bool,
}

/// A body: whole, or streamed from a [`Feed`].
pub struct Reply(ReplyInner);

enum ReplyInner {
    Whole(Option<Bytes>),
    Stream(mpsc::Receiver<Bytes>),
}

impl Reply {
    /// A whole body.
    pub fn whole(bytes: impl Into<Vec<u8>>) -> Reply {
        Reply(ReplyInner::Whole(Some(Bytes::from(bytes.into()))))
    }

    /// An empty body.
    pub fn empty() -> Reply {
        Reply(ReplyInner::Whole(None))
    }

    /// A body sent as it is fed, holding up to `queue` chunks the client has not taken yet;
    /// it ends when the [`Feed`] is dropped.
    pub fn stream(queue: usize) -> (Feed, Reply) {
        let (tx, rx) = mpsc::channel(queue.max(1));
        (Feed(tx), Reply(ReplyInner::Stream(rx)))
    }
}

/// The sending end of a streamed body; cheap to clone.
#[derive(Clone, Debug)]
pub struct Feed(mpsc::Sender<Bytes>);

/// Why a chunk was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fed {
    /// Queued.
    Queued,
    /// The client has not taken the chunks before it: the queue is full.
    Full,
    /// The client is gone.
    Gone,
}

impl Feed {
    /// Queues `chunk` without waiting, from any thread (a [`Bytes`] is shared, not copied:
    /// one event sent to many streams is one buffer).
    pub fn send(&self, chunk: impl Into<Bytes>) -> Fed {
        match self.0.try_send(chunk.into()) {
            Ok(()) => Fed::Queued,
            Err(mpsc::error::TrySendError::Full(_)) => Fed::Full,
            Err(mpsc::error::TrySendError::Closed(_)) => Fed::Gone,
        }
    }

    /// Whether the client is gone (the response was dropped).
    pub fn is_gone(&self) -> bool {
        self.0.is_closed()
    }
}

impl hyper::body::Body for Reply {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.0 {
            ReplyInner::Whole(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            ReplyInner::Stream(rx) => rx.poll_recv(cx).map(|c| c.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(&self.0, ReplyInner::Whole(None))
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match &self.0 {
            ReplyInner::Whole(b) => {
                hyper::body::SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64))
            }
            ReplyInner::Stream(_) => hyper::body::SizeHint::default(),
        }
    }
}

/// A running server; dropping it stops taking connections.
pub struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

impl Server {
    /// Serves `listener` with `handler` under `limits`, in a thread named `name`.
    ///
    /// # Errors
    /// The listener cannot be made non-blocking, or the runtime or its thread cannot start.
    pub fn start(
        name: &str,
        listener: TcpListener,
        limits: Limits,
        handler: Handler,
    ) -> Result<Server> {
        let addr = listener
            .local_addr()
            .context("could not read the listening address")?;
        listener
            .set_nonblocking(true)
            .context("could not make the listener non-blocking")?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .max_blocking_threads(limits.connections.max(1))
            .thread_name(format!("{name}-work"))
            .build()
            .context("could not start the HTTP server's runtime")?;
        let (stop, stopped) = oneshot::channel();
        thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                runtime.block_on(async move {
                    // A listener that cannot join the runtime: nothing is served.
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    let serving = std::pin::pin!(accept_loop(listener, limits, handler));
                    first_of(serving, stopped).await;
                });
            })
            .context("could not start the HTTP server's thread")?;
        Ok(Server {
            addr,
            stop: Some(stop),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Waits for whichever of the two ends first.
async fn first_of<A: Future + Unpin, B: Future + Unpin>(mut a: A, mut b: B) {
    std::future::poll_fn(|cx| {
        if Pin::new(&mut a).poll(cx).is_ready() || Pin::new(&mut b).poll(cx).is_ready() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await
}

/// Takes connections while a slot is free, each served on a task of its own.
async fn accept_loop(listener: tokio::net::TcpListener, limits: Limits, handler: Handler) {
    let slots = Arc::new(Semaphore::new(limits.connections.max(1)));
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            // Out of descriptors and the like: wait a little rather than spin.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let handler = handler.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| answer(req, limits, handler.clone()));
            let mut http = http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(limits.head)
                .max_buf_size(limits.max_head.max(8192))
                .keep_alive(limits.keep_alive);
            let _ = http.serve_connection(TokioIo::new(stream), service).await;
            drop(slot);
        });
    }
}

/// One request: its body read within the limits, then the handler on a blocking thread.
async fn answer(
    req: http::Request<Incoming>,
    limits: Limits,
    handler: Handler,
) -> Result<Response, Infallible> {
    let (head, body) = req.into_parts();
    let declared = head
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body as u64) {
        return Ok(refusal(413, "the body is too large"));
    }
    let collected =
        tokio::time::timeout(limits.body, Limited::new(body, limits.max_body).collect()).await;
    let body = match collected {
        Err(_) => return Ok(refusal(408, "the body did not arrive in time")),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return Ok(refusal(413, "the body is too large"));
        }
        Ok(Err(_)) => return Ok(refusal(400, "the body could not be read")),
        Ok(Ok(c)) => c.to_bytes().to_vec(),
    };
    let req = http::Request::from_parts(head, body);
    match tokio::task::spawn_blocking(move || handler(req)).await {
        Ok(resp) => Ok(resp),
        Err(_) => Ok(refusal(500, "the request could not be answered")),
    }
}

/// A plain-text refusal that closes the connection.
pub fn refusal(status: u16, text: &str) -> Response {
    let mut resp = http::Response::new(Reply::whole(format!("{text}\n")));
    *resp.status_mut() =
        http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::BAD_REQUEST);
    let h = resp.headers_mut();
    h.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::Instant;

    use super::*;

    const QUICK: Limits = Limits {
        connections: 4,
        head: Duration::from_millis(400),
        body: Duration::from_millis(400),
        max_body: 1024,
        max_head: 8192,
        keep_alive: true,
    };

    /// A server answering `200 <method> <path> <body length>`, and its address.
    fn echo(limits: Limits) -> (Server, String) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let handler: Handler = Arc::new(|req: Request| {
            let text = format!("{} {} {}", req.method(), req.uri(), req.body().len());
            http::Response::new(Reply::whole(text))
        });
        let server = Server::start("test-http", listener, limits, handler).unwrap();
        let addr = server.addr().to_string();
        (server, addr)
    }

    /// Everything the server sends on `c` until it closes (or 5 s pass).
    fn read_all(c: &mut TcpStream) -> String {
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut out = Vec::new();
        let _ = c.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn a_head_trickled_a_byte_at_a_time_is_cut_off_at_its_deadline() {
        let (_s, addr) = echo(QUICK);
        let mut c = TcpStream::connect(&addr).unwrap();
        let start = Instant::now();
        c.write_all(b"GET / HTTP/1.1\r\nX-Slow: ").unwrap();
        // A byte every 100 ms would defeat any per-read timeout of 400 ms.
        let mut cut = false;
        while start.elapsed() < Duration::from_secs(3) {
            if c.write_all(b"a").is_err() {
                cut = true;
                break;
            }
            thread::sleep(Duration::from_millis(100));
        }
        assert!(cut, "the slow head was never cut off");
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn a_body_that_does_not_arrive_in_time_is_408_and_one_too_large_413() {
        let (_s, addr) = echo(QUICK);
        let mut c = TcpStream::connect(&addr).unwrap();
        c.write_all(b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc")
            .unwrap();
        assert!(read_all(&mut c).starts_with("HTTP/1.1 408"));
        let mut c = TcpStream::connect(&addr).unwrap();
        c.write_all(b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 1025\r\n\r\n")
            .unwrap();
        assert!(read_all(&mut c).starts_with("HTTP/1.1 413"));
        let mut c = TcpStream::connect(&addr).unwrap();
        c.write_all(
            b"POST /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\nContent-Length: 3\r\n\r\nabc",
        )
        .unwrap();
        assert!(read_all(&mut c).ends_with("POST /x 3"));
    }

    #[test]
    fn an_idle_keep_alive_connection_is_closed_and_frees_its_slot() {
        let limits = Limits {
            connections: 1,
            ..QUICK
        };
        let (_s, addr) = echo(limits);
        let mut idle = TcpStream::connect(&addr).unwrap();
        let start = Instant::now();
        // The one slot is taken: the next client waits in the queue until the idle one is
        // closed at its head deadline, then is answered.
        let mut c = TcpStream::connect(&addr).unwrap();
        c.write_all(b"GET /next HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
            .unwrap();
        assert!(read_all(&mut c).ends_with("GET /next 0"));
        assert!(
            start.elapsed() >= Duration::from_millis(300),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(read_all(&mut idle), "");
    }

    #[test]
    fn a_streamed_reply_sends_what_is_fed_and_ends_when_the_feed_is_dropped() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let tx = std::sync::Mutex::new(tx);
        let handler: Handler = Arc::new(move |_req: Request| {
            let (feed, reply) = Reply::stream(4);
            tx.lock().unwrap().send(feed).unwrap();
            http::Response::new(reply)
        });
        let s = Server::start("test-stream", listener, QUICK, handler).unwrap();
        let mut c = TcpStream::connect(s.addr()).unwrap();
        c.write_all(b"GET /s HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
        let feed = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(feed.send("one;"), Fed::Queued);
        assert_eq!(feed.send("two;"), Fed::Queued);
        drop(feed);
        let got = read_all(&mut c);
        assert!(got.contains("one;") && got.contains("two;"), "{got}");
        assert!(
            got.contains("\r\n0\r\n\r\n"),
            "the chunked body ends: {got}"
        );
    }
}
