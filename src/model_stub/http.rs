//! The little HTTP/1.1 the stub needs: read one request (bounded), write one response.
//!
//! Hand-written on `std::io` rather than an HTTP crate: one route, one client, no TLS; a server crate
//! would bring an async runtime or a thread-pool design larger than this whole module, while the
//! bounds a test kit needs (header and body limits, timeouts, explicit 4xx answers) are a few lines
//! each here.

use std::io::{self, BufRead, Write};

/// Limits on what one request may hold.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Longest request line or header line, in bytes.
    pub max_line: usize,
    /// Most header lines.
    pub max_headers: usize,
    /// Largest body, in bytes.
    pub max_body: usize,
}

/// One parsed request.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    /// `POST`, `GET`, …
    pub method: String,
    /// The request target as sent (`/v1/messages`).
    pub target: String,
    /// `HTTP/1.1` or `HTTP/1.0`.
    pub version: String,
    /// Header names lower-cased, values trimmed, in the order sent.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// The first value of a header (name in lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the connection may carry another request after this one.
    pub fn keep_alive(&self) -> bool {
        let conn = self.header("connection").map(str::to_ascii_lowercase);
        match self.version.as_str() {
            "HTTP/1.0" => conn.is_some_and(|c| c.contains("keep-alive")),
            _ => !conn.is_some_and(|c| c.contains("close")),
        }
    }
}

/// Why no request could be read.
#[derive(Debug)]
pub enum ReadError {
    /// The peer closed (or the idle timeout hit) before the first byte of a request: not an error.
    Idle,
    /// The socket failed or timed out mid-request: nothing sensible can be answered.
    Io(io::Error),
    /// A malformed or oversized request: answer `status` with `message`, then close.
    Bad {
        /// HTTP status to answer.
        status: u16,
        /// Why, in one sentence.
        message: String,
    },
}

fn bad(status: u16, message: impl Into<String>) -> ReadError {
    ReadError::Bad {
        status,
        message: message.into(),
    }
}

/// Reads one request. A request line that starts arriving but is never finished is an error.
/// `interim` receives `100 Continue` when the client asks for it (curl does for bodies over 1 KiB).
pub fn read_request<R: BufRead, W: Write>(
    r: &mut R,
    interim: &mut W,
    limits: &Limits,
) -> Result<HttpRequest, ReadError> {
    let mut line = Vec::new();
    // Tolerate empty lines before the request line (RFC 9112 §2.2).
    loop {
        match read_line(r, &mut line, limits.max_line) {
            Ok(0) => return Err(ReadError::Idle),
            Ok(_) => {}
            Err(ReadError::Io(e)) if is_timeout(&e) && line.is_empty() => {
                return Err(ReadError::Idle)
            }
            Err(e) => return Err(e),
        }
        if !trim_crlf(&line).is_empty() {
            break;
        }
    }
    let request_line = String::from_utf8_lossy(trim_crlf(&line)).into_owned();
    let mut parts = request_line.split(' ');
    let (method, target, version) = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(t), Some(v), None)
            if !m.is_empty() && t.starts_with('/') && v.starts_with("HTTP/1.") =>
        {
            (m.to_owned(), t.to_owned(), v.to_owned())
        }
        _ => {
            return Err(bad(
                400,
                format!("malformed request line {:?}", truncate(&request_line, 200)),
            ))
        }
    };
    let mut headers = Vec::new();
    loop {
        line.clear();
        if read_line(r, &mut line, limits.max_line)? == 0 {
            return Err(ReadError::Io(io::ErrorKind::UnexpectedEof.into()));
        }
        let l = trim_crlf(&line);
        if l.is_empty() {
            break;
        }
        if headers.len() == limits.max_headers {
            return Err(bad(
                431,
                format!("more than {} header lines", limits.max_headers),
            ));
        }
        let text = String::from_utf8_lossy(l);
        let Some((name, value)) = text.split_once(':') else {
            return Err(bad(
                400,
                format!("malformed header line {:?}", truncate(&text, 200)),
            ));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let mut req = HttpRequest {
        method,
        target,
        version,
        headers,
        body: Vec::new(),
    };
    let expects_continue = req
        .header("expect")
        .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"));
    let chunked = req
        .header("transfer-encoding")
        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    match (chunked, req.header("content-length")) {
        (true, Some(_)) => return Err(bad(400, "both Transfer-Encoding and Content-Length")),
        (true, None) => {
            if expects_continue {
                interim
                    .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                    .map_err(ReadError::Io)?;
            }
            req.body = read_chunked(r, limits)?;
        }
        (false, Some(cl)) => {
            let n: usize = cl
                .parse()
                .map_err(|_| bad(400, format!("bad Content-Length {cl:?}")))?;
            if n > limits.max_body {
                return Err(bad(
                    413,
                    format!(
                        "body of {n} bytes exceeds the stub's limit of {} bytes",
                        limits.max_body
                    ),
                ));
            }
            if expects_continue && n > 0 {
                interim
                    .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                    .map_err(ReadError::Io)?;
            }
            req.body = vec![0; n];
            r.read_exact(&mut req.body).map_err(ReadError::Io)?;
        }
        (false, None) => {}
    }
    Ok(req)
}

fn read_chunked<R: BufRead>(r: &mut R, limits: &Limits) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        if read_line(r, &mut line, limits.max_line)? == 0 {
            return Err(ReadError::Io(io::ErrorKind::UnexpectedEof.into()));
        }
        let text = String::from_utf8_lossy(trim_crlf(&line)).into_owned();
        let size_text = text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| bad(400, format!("bad chunk size {size_text:?}")))?;
        if size == 0 {
            // Trailers, up to the empty line.
            loop {
                line.clear();
                if read_line(r, &mut line, limits.max_line)? == 0 || trim_crlf(&line).is_empty() {
                    return Ok(body);
                }
            }
        }
        if body.len().saturating_add(size) > limits.max_body {
            return Err(bad(
                413,
                format!(
                    "chunked body exceeds the stub's limit of {} bytes",
                    limits.max_body
                ),
            ));
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(&mut body[start..]).map_err(ReadError::Io)?;
        line.clear();
        read_line(r, &mut line, limits.max_line)?;
    }
}

/// Appends one line (through `\n`) to `buf`; `Ok(0)` at EOF. Longer than `max` → 431/414.
fn read_line<R: BufRead>(r: &mut R, buf: &mut Vec<u8>, max: usize) -> Result<usize, ReadError> {
    let start = buf.len();
    loop {
        let available = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ReadError::Io(e)),
        };
        if available.is_empty() {
            return Ok(buf.len() - start);
        }
        let (take, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        buf.extend_from_slice(&available[..take]);
        r.consume(take);
        if buf.len() - start > max {
            return Err(bad(
                431,
                format!("a request or header line is longer than {max} bytes"),
            ));
        }
        if done {
            return Ok(buf.len() - start);
        }
    }
}

fn trim_crlf(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// True for the error kinds a socket read timeout produces.
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// The reason phrase of the statuses the stub answers.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Writes a complete response with a `Content-Length` body.
pub fn write_response<W: Write>(
    w: &mut W,
    status: u16,
    content_type: &str,
    body: &[u8],
    keep_alive: bool,
) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\ncache-control: no-cache\r\nconnection: {}\r\n\r\n",
        reason(status),
        body.len(),
        if keep_alive { "keep-alive" } else { "close" },
    );
    let mut out = Vec::with_capacity(head.len() + body.len());
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(body);
    w.write_all(&out)?;
    w.flush()
}
