//! The stub's server: an accept thread, one thread per connection, a request log, and a shutdown
//! that closes every socket and joins every thread.

use super::http::{self, HttpRequest, Limits, ReadError};
use super::reply::{self, Action, Plan};
use super::request::{self, Prompt, RequestFacts};
use crate::wire::json::Deep;
use std::collections::HashMap;
use std::io::{self, BufRead, BufReader};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How the stub behaves; [`Config::default`] suits the real runtime.
#[derive(Debug, Clone)]
pub struct Config {
    /// The key the runtime must send as `x-api-key` (401 otherwise).
    pub api_key: String,
    /// Request size limits.
    pub limits: Limits,
    /// How long a connection may sit idle, or stall mid-request, before the stub closes it. Longer
    /// than any client keep-alive timeout, so the client is always the side that closes idle
    /// connections (a server-side close races with the client's reuse of the socket).
    pub read_timeout: Duration,
    /// Most connections served at once; more are answered 503 and closed.
    pub max_connections: usize,
    /// Port on 127.0.0.1 (0: a free one).
    pub port: u16,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            api_key: "dsh-conformance-model-stub".into(),
            // Bodies carry the session log; the 10 MB-prompt probe made ≈ 40 MB requests.
            limits: Limits {
                max_line: 16 * 1024,
                max_headers: 128,
                max_body: 256 * 1024 * 1024,
            },
            read_timeout: Duration::from_secs(120),
            max_connections: 256,
            port: 0,
        }
    }
}

/// One request the stub received, for diagnostics.
#[derive(Debug, Clone)]
pub struct RequestRecord {
    /// Arrival order, from 1.
    pub seq: u64,
    /// When it was read, since the stub started.
    pub at: Duration,
    /// Which connection carried it (from 1), to see keep-alive reuse.
    pub connection: u64,
    /// HTTP method.
    pub method: String,
    /// Request target.
    pub path: String,
    /// The API its path chose (`None` for a path the stub does not serve, or no request line).
    pub api: Option<Api>,
    /// Headers (lower-case names) in the order sent.
    pub headers: Vec<(String, String)>,
    /// Body length in bytes.
    pub body_len: usize,
    /// What the body said, when it was a Messages or chat-completions request the stub could read.
    pub facts: Option<RequestFacts>,
    /// The directive acted on (`reply`, `slow:2+reply`, `tool-result`, `notice`), if any.
    pub directive: Option<String>,
    /// The status answered; `None` while a `hang` or `slow` answer is pending or was never sent.
    pub status: Option<u16>,
    /// Why the request was refused, for 4xx answers the stub chose itself.
    pub refusal: Option<String>,
}

impl RequestRecord {
    /// The first value of a header (lower-case name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The tag of the key the request was sent with (`<key>.<tag>`, [`tagged_key`]): which
    /// runtime process sent it, when each was given a key of its own.
    pub fn tag(&self, key: &str) -> Option<&str> {
        let sent = (self.header("x-api-key"))
            .or_else(|| self.header("authorization")?.strip_prefix("Bearer "))?;
        sent.strip_prefix(key)?
            .strip_prefix('.')
            .filter(|t| !t.is_empty())
    }

    /// One line for a failure message: `#3 POST /v1/messages → 200 (reply) last-user="…"`.
    pub fn summary(&self) -> String {
        let status = self.status.map_or("-".to_owned(), |s| s.to_string());
        let mut s = format!(
            "#{} conn{} {} {} → {status}",
            self.seq, self.connection, self.method, self.path
        );
        if let Some(d) = &self.directive {
            s.push_str(&format!(" ({d})"));
        }
        if let Some(f) = &self.facts {
            let prompt = match &f.prompt {
                Prompt::Text(t) => format!("text {:?}", t.chars().take(60).collect::<String>()),
                Prompt::ToolResult(t) => {
                    format!("tool_result {:?}", t.chars().take(60).collect::<String>())
                }
                Prompt::Notice => "notice".into(),
            };
            s.push_str(&format!(
                " messages={} tools={} {prompt}",
                f.message_count,
                f.tool_names.len()
            ));
        }
        if let Some(r) = &self.refusal {
            s.push_str(&format!(" refused: {r}"));
        }
        s
    }
}

/// The header the release names a model request's session in (a subagent's own id for a child).
const SESSION_HEADER: &str = "x-deepseek-harness-session-id";

/// State shared by the accept thread, the connection threads and the owner.
pub(crate) struct Shared {
    config: Config,
    started: Instant,
    stopping: AtomicBool,
    next_request: AtomicU64,
    next_call: AtomicU64,
    log: Mutex<Vec<RequestRecord>>,
    /// Clones of open connection sockets, so shutdown can unblock their threads.
    open: Mutex<HashMap<u64, TcpStream>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking connection thread must not take the diagnostics down with it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The running server (owned by [`super::ModelStub`]).
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    pub(crate) shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl Server {
    pub(crate) fn start(config: Config) -> io::Result<Server> {
        let listener = TcpListener::bind(("127.0.0.1", config.port))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            config,
            started: Instant::now(),
            stopping: AtomicBool::new(false),
            next_request: AtomicU64::new(1),
            next_call: AtomicU64::new(1),
            log: Mutex::new(Vec::new()),
            open: Mutex::new(HashMap::new()),
            workers: Mutex::new(Vec::new()),
        });
        let s = Arc::clone(&shared);
        let acceptor = std::thread::Builder::new()
            .name("model-stub-accept".into())
            .spawn(move || accept_loop(listener, s))?;
        Ok(Server {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    pub(crate) fn log(&self) -> Vec<RequestRecord> {
        lock(&self.shared.log).clone()
    }

    /// When each request from the `from`-th on arrived, and the session its header names.
    pub(crate) fn arrivals(&self, from: usize) -> Vec<(Instant, Option<String>)> {
        let log = lock(&self.shared.log);
        let session = |r: &RequestRecord| {
            let h = r.headers.iter().find(|(n, _)| n == SESSION_HEADER);
            h.map(|(_, v)| v.clone())
        };
        log.iter()
            .skip(from)
            .map(|r| (self.shared.started + r.at, session(r)))
            .collect()
    }

    pub(crate) fn open_connections(&self) -> usize {
        lock(&self.shared.open).len()
    }

    pub(crate) fn log_len(&self) -> usize {
        lock(&self.shared.log).len()
    }

    pub(crate) fn shared_config(&self) -> &Config {
        &self.shared.config
    }

    pub(crate) fn stop(&mut self) {
        let Some(acceptor) = self.acceptor.take() else {
            return;
        };
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Wake the blocking accept(); it sees `stopping` and drops the listener.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        let _ = acceptor.join();
        for stream in lock(&self.shared.open).values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
        let workers = std::mem::take(&mut *lock(&self.shared.workers));
        for w in workers {
            let _ = w.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut next_conn = 1u64;
    for stream in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(mut stream) = stream else {
            // Out of descriptors or similar: do not spin.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        if lock(&shared.open).len() >= shared.config.max_connections {
            let message = format!(
                "model-stub: more than {} connections at once",
                shared.config.max_connections
            );
            shared.record(0, None, |r| {
                r.status = Some(503);
                r.refusal = Some(message.clone());
            });
            let body = reply::error_body("overloaded_error", &message);
            let _ = http::write_response(&mut stream, 503, "application/json", &body, false);
            continue;
        }
        let id = next_conn;
        next_conn += 1;
        let Ok(clone) = stream.try_clone() else {
            continue;
        };
        lock(&shared.open).insert(id, clone);
        let s = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name(format!("model-stub-conn{id}"))
            .spawn(move || {
                serve_connection(stream, id, &s);
                lock(&s.open).remove(&id);
            });
        let mut workers = lock(&shared.workers);
        workers.retain(|w| !w.is_finished());
        match spawned {
            Ok(handle) => workers.push(handle),
            Err(_) => {
                lock(&shared.open).remove(&id);
            }
        }
    }
}

fn serve_connection(stream: TcpStream, conn: u64, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(shared.config.read_timeout));
    let _ = stream.set_write_timeout(Some(shared.config.read_timeout));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while !shared.stopping.load(Ordering::SeqCst) {
        let req = match http::read_request(&mut reader, &mut writer, &shared.config.limits) {
            Ok(r) => r,
            Err(ReadError::Idle) | Err(ReadError::Io(_)) => return,
            Err(ReadError::Bad { status, message }) => {
                shared.record(conn, None, |r| {
                    r.status = Some(status);
                    r.refusal = Some(message.clone());
                });
                let body =
                    reply::error_body("invalid_request_error", &format!("model-stub: {message}"));
                let _ = http::write_response(&mut writer, status, "application/json", &body, false);
                return;
            }
        };
        let keep_alive = req.keep_alive();
        if !answer(&req, conn, shared, &mut writer, &mut reader, keep_alive) || !keep_alive {
            return;
        }
    }
}

impl Shared {
    /// Appends a record built by `fill` and returns its index in the log.
    fn record(
        &self,
        conn: u64,
        req: Option<&HttpRequest>,
        fill: impl FnOnce(&mut RequestRecord),
    ) -> usize {
        let mut r = RequestRecord {
            seq: self.next_request.fetch_add(1, Ordering::SeqCst),
            at: self.started.elapsed(),
            connection: conn,
            method: req.map(|r| r.method.clone()).unwrap_or_default(),
            path: req.map(|r| r.target.clone()).unwrap_or_default(),
            api: None,
            headers: req.map(|r| r.headers.clone()).unwrap_or_default(),
            body_len: req.map_or(0, |r| r.body.len()),
            facts: None,
            directive: None,
            status: None,
            refusal: None,
        };
        fill(&mut r);
        let mut log = lock(&self.log);
        log.push(r);
        log.len() - 1
    }

    fn set_status(&self, index: usize, status: u16) {
        if let Some(r) = lock(&self.log).get_mut(index) {
            r.status = Some(status);
        }
    }
}

/// The API a request speaks, chosen by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Anthropic Messages: `POST /v1/messages`, key in `x-api-key`.
    Messages,
    /// OpenAI chat-completions: `POST /v1/chat/completions` or `POST /chat/completions`, key in
    /// `Authorization: Bearer`.
    ChatCompletions,
}

impl Api {
    /// The API served at `path` (query removed), if any.
    pub fn of_path(path: &str) -> Option<Api> {
        match path {
            "/v1/messages" => Some(Api::Messages),
            "/v1/chat/completions" | "/chat/completions" => Some(Api::ChatCompletions),
            _ => None,
        }
    }

    /// The body of an error answer in this API's shape.
    pub fn error_body(self, kind: &str, message: &str) -> Vec<u8> {
        match self {
            Api::Messages => reply::error_body(kind, message),
            Api::ChatCompletions => super::chat::error_body(kind, message),
        }
    }
}

/// A request the stub refuses: the status, the error's kind and its message.
struct Refusal(u16, &'static str, String);

fn invalid(message: impl Into<String>) -> Refusal {
    Refusal(400, "invalid_request_error", message.into())
}

/// Whether the request carries the stub's key, as `api` sends it.
/// Whether `sent` is the stub's `key`, alone or tagged (`<key>.<tag>`, [`tagged_key`]).
fn key_matches(sent: &str, key: &str) -> bool {
    sent == key
        || sent
            .strip_prefix(key)
            .is_some_and(|t| t.starts_with('.') && t.len() > 1)
}

/// The stub's `key` tagged with `tag`: a runtime given it is served as with the key, and each of
/// its requests is logged with the tag ([`RequestRecord::tag`]), so a client of the stub that
/// runs several runtimes at once tells their requests apart (the suite tags each case).
pub fn tagged_key(key: &str, tag: &str) -> String {
    format!("{key}.{tag}")
}

fn authorized(api: Api, req: &HttpRequest, key: &str) -> Result<(), &'static str> {
    match api {
        Api::Messages => match req.header("x-api-key") {
            Some(k) if key_matches(k, key) => Ok(()),
            None => Err("no x-api-key header (set DEEPSEEK_API_KEY from the stub's env)"),
            Some(_) => Err("x-api-key does not match the stub's key"),
        },
        Api::ChatCompletions => match req.header("authorization") {
            Some(v) if v.strip_prefix("Bearer ").is_some_and(|k| key_matches(k, key)) => Ok(()),
            None => Err("no Authorization header (send `Authorization: Bearer <key>`, the key OPENAI_API_KEY or DEEPSEEK_API_KEY of the stub's env)"),
            Some(_) => Err("Authorization is not `Bearer <the stub's key>`"),
        },
    }
}

/// The request's route, method, key and body checked: its API and facts, or why it is refused.
fn validate(
    req: &HttpRequest,
    api: Option<Api>,
    path: &str,
    key: &str,
) -> Result<(Api, RequestFacts), Refusal> {
    let Some(api) = api else {
        let msg = format!(
            "no route {} {path}; the stub serves only POST /v1/messages (Anthropic Messages) and POST /v1/chat/completions or /chat/completions (OpenAI chat-completions)",
            req.method
        );
        return Err(Refusal(404, "not_found_error", msg));
    };
    if req.method != "POST" {
        let msg = format!("{} {path}: only POST is served", req.method);
        return Err(Refusal(405, "invalid_request_error", msg));
    }
    authorized(api, req, key).map_err(|m| Refusal(401, "authentication_error", m.to_owned()))?;
    let text = String::from_utf8_lossy(&req.body);
    let body = match crate::wire::json::parse(&text) {
        Ok(p) => Deep::new(p.value),
        Err(e) => return Err(invalid(format!("the body is not JSON: {e}"))),
    };
    let facts = match api {
        Api::Messages => request::analyse(&body),
        Api::ChatCompletions => request::analyse_chat(&body),
    }
    .map_err(invalid)?;
    let stream_given = body.get("stream").is_some_and(|s| !s.is_null());
    match api {
        Api::Messages if facts.stream != Some(true) => Err(invalid(
            "the stub only streams: the body must say \"stream\": true",
        )),
        Api::ChatCompletions if stream_given && facts.stream.is_none() => {
            Err(invalid("`stream` is not a boolean"))
        }
        _ => Ok((api, facts)),
    }
}

/// Validates and answers one request. Returns false when the connection must close.
fn answer(
    req: &HttpRequest,
    conn: u64,
    shared: &Shared,
    writer: &mut TcpStream,
    reader: &mut BufReader<TcpStream>,
    keep_alive: bool,
) -> bool {
    let path = req.target.split('?').next().unwrap_or("");
    let api = Api::of_path(path);
    let (api, facts) = match validate(req, api, path, &shared.config.api_key) {
        Ok(v) => v,
        Err(Refusal(status, kind, message)) => {
            shared.record(conn, Some(req), |r| {
                r.api = api;
                r.status = Some(status);
                r.refusal = Some(message.clone());
            });
            let body = api
                .unwrap_or(Api::Messages)
                .error_body(kind, &format!("model-stub: {message}"));
            return http::write_response(writer, status, "application/json", &body, keep_alive)
                .is_ok();
        }
    };
    let call_id = shared.next_call.fetch_add(1, Ordering::SeqCst);
    let plan = match api {
        Api::Messages => reply::plan(&facts, call_id),
        Api::ChatCompletions => super::chat::plan(&facts, call_id, facts.stream == Some(true)),
    };
    let label = match (&plan.directive, &facts.prompt) {
        (Some(d), _) => d.label(),
        (None, Prompt::ToolResult(_)) => "tool-result".into(),
        (None, _) => "notice".into(),
    };
    let Plan { delay, action, .. } = plan;
    let index = shared.record(conn, Some(req), |r| {
        r.api = Some(api);
        r.facts = Some(facts);
        r.directive = Some(label);
    });
    if !delay.is_zero() && !wait(reader, shared, Some(delay)) {
        return false;
    }
    let (status, kind, body) = match action {
        Action::Stream(body) => (200, "text/event-stream", body),
        Action::Json(body) => (200, "application/json", body),
        Action::Error {
            status,
            kind,
            message,
        } => (status, "application/json", api.error_body(kind, &message)),
        Action::Hang => {
            wait(reader, shared, None);
            return false;
        }
    };
    shared.set_status(index, status);
    http::write_response(writer, status, kind, &body, keep_alive).is_ok()
}

/// Waits `limit` (forever when `None`) without answering. Returns false when the client closed
/// the connection or the stub is stopping: then there is no one left to answer.
fn wait(reader: &mut BufReader<TcpStream>, shared: &Shared, limit: Option<Duration>) -> bool {
    const SLICE: Duration = Duration::from_millis(100);
    let start = Instant::now();
    let _ = reader.get_ref().set_read_timeout(Some(SLICE));
    let alive = loop {
        if shared.stopping.load(Ordering::SeqCst) {
            break false;
        }
        if limit.is_some_and(|l| start.elapsed() >= l) {
            break true;
        }
        // A read tells a closed peer (EOF) from a live one (timeout); bytes of a pipelined
        // request stay buffered for the next read_request.
        match reader.fill_buf() {
            Ok([]) => break false,
            Ok(_) => std::thread::sleep(SLICE),
            Err(e) if http::is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break false,
        }
    };
    let _ = reader
        .get_ref()
        .set_read_timeout(Some(shared.config.read_timeout));
    alive
}
