//! A scripted model endpoint on 127.0.0.1 speaking Anthropic Messages and OpenAI chat-completions,
//! so a real runtime completes turns deterministically without a model or a key
//! (docs/CONTRACT.md#s11.1, #s13.5).
//!
//! ```no_run
//! let stub = dsh_conformance::model_stub::ModelStub::start()?;
//! let (home, cwd) = (std::env::temp_dir().join("dsh-home"), std::env::temp_dir().join("dsh-cwd"));
//! let mut cmd = std::process::Command::new("./runtime");
//! stub.configure(&mut cmd, &home, &cwd).arg("--profile").arg("sdk");
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # How a runtime reaches it
//! [`ModelStub::env`] gives `DEEPSEEK_BASE_URL=http://127.0.0.1:<port>` (the 0.2.1rc2 runtime
//! appends `/v1/messages`, or only `/messages` when the URL already ends in `/v1`) and
//! `DEEPSEEK_API_KEY` (sent back as `x-api-key`; any other key is answered 401). Initialize with
//! `{cwd, provider:"deepseek-official", model:"deepseek-v4-flash"}`. A runtime that follows the
//! OpenAI conventions finds `OPENAI_BASE_URL=http://127.0.0.1:<port>/v1` (it appends
//! `/chat/completions`) and `OPENAI_API_KEY` (the same key, sent as `Authorization: Bearer <key>`):
//! see [OpenAI chat-completions](#openai-chat-completions). Both APIs are served by the same stub
//! at once, chosen by the path ([`Api`]).
//!
//! # What the real runtime sends (observed with 0.2.1rc2 against this stub)
//! Only `POST /v1/messages`; every turn and every session of one runtime process reused a single
//! keep-alive connection (22 requests over 2 sessions: one connection). Headers: `host`,
//! `connection: keep-alive`, `user-agent: deepseek-harness/0.2.1-rc.2 (+https://github.com/deepseek-ai/deepseek-harness)`,
//! `content-type: application/json`, `accept: text/event-stream`, `x-api-key`,
//! `anthropic-version: 2023-06-01`, `x-deepseek-harness-user-id: <uuid>`,
//! `x-deepseek-harness-session-id: <sessionId>` (the child's uuid for a subagent),
//! `accept-language: *`, `sec-fetch-mode: cors`, `accept-encoding: gzip, deflate`, `content-length`.
//! Body keys in order: `model, stream (true), messages, max_tokens (256000 by default), thinking
//! ({type:"enabled"}), output_config ({effort:"high"}), system (a string), tools (25: bash,
//! create_goal, edit, exit_plan_mode, get_goal, glob, grep, interrupt_agent, job_kill, job_list,
//! job_output, list_agents, read, read_image, send_message, skill, subagent, subagent_fork,
//! todo_write, update_goal, web_fetch, web_search, workflow, working_directory, write; each
//! `{name, description, input_schema}`), dsh_session_log, dsh_plugin_packages`. Which text the
//! directive is read from, given the blocks the runtime adds to user messages: see [`request`].
//!
//! # What the stub answers (Anthropic Messages)
//! The directive ([`directive`], the reference runtime's grammar) of the last user-authored text block holding one picks the
//! answer ([`answer`], written by [`reply`]). Every stream is `200`, `content-type: text/event-stream`, sent whole with a
//! `content-length` (after the `slow` delay), as `event: <type>\ndata: <json>\n\n` events:
//!
//! | directive | SSE events (B = content_block) | runtime's `turn/end` reason |
//! |---|---|---|
//! | `reply: X`, no directive (echo) | message_start, B_start text, text_delta ×2 (X split at its middle char; one when X is a single char, none when empty), B_stop, message_delta end_turn, message_stop | `completed` |
//! | `maxtokens` | as reply with `partial...`, message_delta **max_tokens** | `max-tokens` |
//! | `thinking` | message_start, B_start thinking, thinking_delta `let me think`, signature_delta `fakesig`, B_stop, text block `thought done` (index 1), end_turn, message_stop | `completed` (content reasoning + text) |
//! | `empty` | message_start, message_delta end_turn, message_stop (no block) | error `EMPTY_RESPONSE` after 5 retries (≈15 s) |
//! | `tool[: CMD]` | message_start, B_start tool_use `{id:"toolu_stub_N", name:"bash", input:{}}`, one input_json_delta `{"description": "probe command", "command": "CMD"}`, B_stop, message_delta **tool_use**, message_stop | next request carries the tool_result → `tool result: <text>`; `completed` |
//! | `subagent: P` | as tool with name `subagent`, args `{"description": "probe child", "prompt": "P"}` | `completed`; the child's prompt P drives the child; the parent's wake-up notice → `ok` |
//! | `call: NAME {JSON}` | as tool with name NAME, args the JSON object as given (compact) — any tool the request offers; one it does not offer: HTTP 400 naming it | as its tool: the reference offers `bash` and `subagent` (as `tool`/`subagent`), refuses others with the same 400 |
//! | `call!: NAME {JSON}` | as `call:`, sent even when the request does not offer NAME | an unoffered tool: the error result `Error: unknown tool "NAME"` (`ToolNotFoundError`/`UNKNOWN_TOOL`), and the turn goes on |
//! | `slow[:N] D` | D's answer after N s (default 2; a D without directive is a reply with that text) | D's |
//! | `error500` | HTTP 500 `{"type":"error","error":{"type":"api_error","message":"fake internal error"}}` | error `SERVER` status 500 after 5 retries |
//! | `error400` | HTTP 400, `invalid_request_error`, `fake bad request` | error `INVALID_REQUEST` status 400, no retry |
//! | `sseerror` | 200 with only `event: error` `{"type":"error","error":{"type":"overloaded_error","message":"fake overloaded"}}` | error `SERVER` after 5 retries |
//! | `truncate` | message_start, B_start text, text_delta `trunc`, then the body ends | error `STREAM_CLOSED`, no retry |
//! | `hang` | nothing, until the client closes or the stub stops | none (the turn never ends) |
//! | tool_result in the last user message | reply `tool result: <its text>` | `completed` |
//! | runtime notice only (e.g. subagent settled) | reply `ok` | `completed` |
//!
//! message_start carries `{id:"msg_stub_N", type:"message", role:"assistant", model:<request's>,
//! content:[], stop_reason:null, stop_sequence:null, usage:{input_tokens:10, output_tokens:0}}`;
//! message_delta carries `usage:{output_tokens:5}`.
//!
//! The real runtime maps the stub's refusals to `turn/end` errors carrying the stub's message:
//! 401 → code `AUTH` (status 401), 404 → code `HTTP_404` (status 404), neither retried.
//!
//! Timing (2-core machine, debug build of the kit, real runtime 0.2.1rc2): boot + initialize
//! ≈ 1.15 s; a session's first `reply: hi` turn ≈ 0.55 s from prompt to `idle` (response after
//! ≈ 20 ms); later turns ≈ 25–55 ms; a new session's first turn ≈ 90 ms; shutdown → exit ≈ 0.13 s.
//!
//! # OpenAI chat-completions
//! `POST /v1/chat/completions` and `POST /chat/completions` (the OpenAI base URL with or without
//! `/v1`), keyed by `Authorization: Bearer <key>` (an `x-api-key` is not looked at there: 401).
//! The same [`answer::decide`] as the Messages side picks the answer ([`chat`] writes it), read
//! by [`request::analyse_chat`]: the prompt is the last message with role `user` or `tool`; a
//! `user` message's `content` is a string or `{type:"text", text}` parts, read as the Messages
//! side reads text blocks; a `tool` message (the result of the assistant's `tool_calls`) is the
//! tool result. Offered tools are `tools[].function.name`. `stream: true` streams
//! `data: <chat.completion.chunk>\n\n` events ending `data: [DONE]\n\n` (`text/event-stream`);
//! `stream` false or absent answers one `chat.completion` object (`application/json`); any other
//! `stream` is a 400.
//!
//! | directive | streamed deltas (then `data: [DONE]`) | not streamed: `choices[0]` | `finish_reason` |
//! |---|---|---|---|
//! | `reply: X`, echo | `{role:"assistant", content:""}`, `content` ×2 (X's halves, as above), `{}` | `message {role, content: X}` | `stop` |
//! | `maxtokens` | as reply with `partial...` | as reply | `length` |
//! | `thinking` | `{role, content:null, reasoning_content:""}`, `{reasoning_content:"let me think"}`, `content` `thought done` ×2, `{}` | `{role, content:"thought done", reasoning_content:"let me think"}` | `stop` |
//! | `empty` | `{role:"assistant"}`, `{}` | `content: ""` | `stop` |
//! | `tool[: CMD]`, `subagent: P`, `call: NAME {JSON}` | `{role, content:null, tool_calls:[{index:0, id:"call_stub_N", type:"function", function:{name, arguments:""}}]}`, `{tool_calls:[{index:0, function:{arguments}}]}`, `{}` (arguments: the Messages side's `partial_json`) | `{role, content:null, tool_calls:[{id, type:"function", function:{name, arguments}}]}` | `tool_calls` (a tool not offered: HTTP 400 naming it) |
//! | `slow[:N] D` | D's after N s | D's | D's |
//! | `error500` / `error400` | HTTP 500 / 400 `{"error":{"message":"fake internal error","type":"server_error","param":null,"code":"internal_error"}}` / `fake bad request`, `invalid_request_error` | the same | — |
//! | `sseerror` | 200 whose only event is `data: {"error":{"message":"fake overloaded","type":"server_error","param":null,"code":"overloaded"}}` (no `[DONE]`) | 200 whose body is that error object | — |
//! | `truncate` | the role chunk, `{content:"trunc"}`, then the body ends (no finish, no `[DONE]`) | the `chat.completion` cut after `"content":"tr` | — |
//! | `hang` | nothing | nothing | — |
//! | tool result (a `tool` message last) / runtime notice | reply `tool result: <its content>` / `ok` | as reply | `stop` |
//!
//! Each chunk is `{id:"chatcmpl-stub-N", object:"chat.completion.chunk", created:0,
//! model:<request's>, choices:[{index:0, delta, logprobs:null, finish_reason}]}`; the last also
//! carries `usage:{prompt_tokens:10, completion_tokens:5, total_tokens:15}` (as does the
//! `chat.completion`). The stub's own refusals on this side are OpenAI error bodies
//! `{"error":{"message":"model-stub: …", type, param:null, code}}` (401 `authentication_error` /
//! `invalid_api_key`, 400 `invalid_request_error`, 405). Requests are logged like Messages ones
//! ([`RequestRecord::api`] says which API), so a chat-completions runtime's model checks are
//! judged, not UNTESTABLE.
//!
//! # Against docs/CONTRACT.md#s11.1
//! Confirmed: the `/v1` handling, the key as `x-api-key`, the body keys, 25 tools, the reasons and
//! error codes per directive. Not said there: the user's prompt is not the last text block (the
//! runtime appends its context snapshot, a subagent's parent note; it merges a prompt after a failed
//! turn into the same message; it sends subagent-settled notices as user messages — the recorded
//! stub answered those `ok`), which is why [`request`] skips runtime-authored blocks; the headers
//! include `connection: keep-alive`, `accept-language: *`, `sec-fetch-mode: cors`,
//! `accept-encoding: gzip, deflate`; the recorded `thinking` reply carried a signature (`fakesig`, seen in
//! `replayState`), which the stub sends as a `signature_delta`. Nothing stated there was found wrong.
//!
//! Requests the stub cannot answer get a JSON error body starting `model-stub:` (which the runtime
//! copies into its `turn/end` error) and a log entry with the reason: 404 any other path, 405
//! other methods, 401 missing or wrong key, 400 malformed HTTP / not JSON / no user message /
//! `stream` not true (Messages) or not a boolean (chat-completions) / a tool directive whose tool
//! is not offered, 413 bodies over the limit, 431 oversized header lines. The body is
//! Anthropic-style on `/v1/messages` and on paths no API has, OpenAI-style on the
//! chat-completions paths.

pub mod answer;
pub mod chat;
pub use crate::directive;
pub mod http;
pub mod reply;
pub mod request;
pub mod serve;
mod server;

pub use directive::{parse_directive, Directive};
pub use server::{tagged_key, Api, Config, RequestRecord};

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Environment variables a runtime reads that would let the stub be bypassed or a real provider be
/// reached; [`ModelStub::configure`] removes them.
pub const SCRUBBED_ENV: [&str; 6] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
];

/// A running model stub. Dropping it closes every connection and joins every thread.
pub struct ModelStub {
    server: server::Server,
}

impl ModelStub {
    /// Starts a stub with the default [`Config`] on 127.0.0.1 and a free port.
    pub fn start() -> io::Result<ModelStub> {
        ModelStub::start_with(Config::default())
    }

    /// Starts a stub with `config`.
    pub fn start_with(config: Config) -> io::Result<ModelStub> {
        Ok(ModelStub {
            server: server::Server::start(config)?,
        })
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr
    }

    /// `http://127.0.0.1:<port>` — the value of `DEEPSEEK_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.server.addr)
    }

    /// `http://127.0.0.1:<port>/v1` — the value of `OPENAI_BASE_URL` (clients append
    /// `/chat/completions`).
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// The key runtimes must send (`DEEPSEEK_API_KEY`, `OPENAI_API_KEY`).
    pub fn api_key(&self) -> &str {
        &self.server.shared_config().api_key
    }

    /// `DEEPSEEK_BASE_URL` and `DEEPSEEK_API_KEY` for the runtime under test, then
    /// `OPENAI_BASE_URL` ([`ModelStub::openai_base_url`]) and `OPENAI_API_KEY` (the same key) for
    /// runtimes that follow the OpenAI conventions.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("DEEPSEEK_BASE_URL".into(), self.base_url()),
            ("DEEPSEEK_API_KEY".into(), self.api_key().to_owned()),
            ("OPENAI_BASE_URL".into(), self.openai_base_url()),
            ("OPENAI_API_KEY".into(), self.api_key().to_owned()),
        ]
    }

    /// The full environment a runtime needs to run against this stub with a private state folder:
    /// [`ModelStub::env`] plus `DSH_HOME=<dsh_home>` and `NO_PROXY` covering 127.0.0.1.
    pub fn runtime_env(&self, dsh_home: &Path) -> Vec<(String, String)> {
        let mut env = self.env();
        env.push(("DSH_HOME".into(), dsh_home.to_string_lossy().into_owned()));
        env.push(("NO_PROXY".into(), "127.0.0.1,localhost".into()));
        env.push(("no_proxy".into(), "127.0.0.1,localhost".into()));
        env
    }

    /// Prepares `cmd` to run a runtime against this stub: [`ModelStub::runtime_env`], proxies
    /// removed ([`SCRUBBED_ENV`]), working directory `cwd`. Arguments stay the caller's.
    pub fn configure<'c>(
        &self,
        cmd: &'c mut Command,
        dsh_home: &Path,
        cwd: &Path,
    ) -> &'c mut Command {
        for name in SCRUBBED_ENV {
            cmd.env_remove(name);
        }
        cmd.envs(self.runtime_env(dsh_home)).current_dir(cwd)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.server.log()
    }

    /// The request log as text, one [`RequestRecord::summary`] per line (for failure messages).
    pub fn log_text(&self) -> String {
        self.requests().iter().map(|r| r.summary() + "\n").collect()
    }

    /// When each request from the `from`-th (0-based) on arrived, and the session its
    /// `x-deepseek-harness-session-id` header names (`None` without one): what a runtime is
    /// visibly doing between its frames, cheaper than [`ModelStub::requests`].
    pub fn arrivals(&self, from: usize) -> Vec<(Instant, Option<String>)> {
        self.server.arrivals(from)
    }

    /// How many requests arrived so far.
    pub fn request_count(&self) -> usize {
        self.server.log_len()
    }

    /// How many client connections are open right now.
    pub fn open_connections(&self) -> usize {
        self.server.open_connections()
    }

    /// Waits until at least `n` requests arrived (true) or `timeout` passed (false).
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.server.log_len() >= n {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl std::fmt::Debug for ModelStub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelStub")
            .field("addr", &self.server.addr)
            .finish_non_exhaustive()
    }
}
