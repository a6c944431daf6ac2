//! Request methods, by edition, with the validation order and messages of docs/CONTRACT.md#s3
//! and #s9.

use super::events::{new_id, user_message, Events};
use super::sessions::SHUTTING_DOWN;
use super::{persist, script, Edition, Msg, Route, Runtime, Session};
use crate::wire::json::{js_number, Deep};
use crate::wire::{write, ErrorCode, Request};
use serde_json::{json, Map, Value};
use std::rc::Rc;

/// What a handler decided: answer now, answer later (legacy prompt, wait), or fail.
type Answer = Result<Option<Value>, String>;

const NOT_INITIALIZED: &str = "SDK server is not initialized";

impl Runtime {
    pub(super) fn request(&mut self, mut req: Request, now: u64, out: &mut Vec<u8>) {
        let current = self.cfg.edition == Edition::Current;
        let answer = match req.method.as_str() {
            "initialize" => self.initialize(req.params.object()),
            "session/prompt" => {
                let params = req.params.take_object();
                self.prompt(params, &req.id, now, out)
            }
            "shutdown" => {
                // Memoized: every shutdown is answered `{}` and the process exits once.
                self.shutting_down = true;
                self.exit = Some(0);
                self.release_sessions();
                Ok(Some(json!({})))
            }
            "session/resume" if current => self.resume(req.params.object()),
            "session/wait" if current => self.wait(req.params.object(), &req.id),
            "session/working-directory/get" if current => {
                self.working_directory(req.params.object(), false, now, out)
            }
            "session/working-directory/set" if current => {
                self.working_directory(req.params.object(), true, now, out)
            }
            m => {
                // Written in parts: no `format!` per unknown method (cheap frames, issue 13).
                let parts = ["unknown DeepSeek Harness SDK runtime method: ", m];
                write::error_parts(out, &req.id, ErrorCode::INTERNAL_ERROR, &parts);
                return;
            }
        };
        match answer {
            Ok(Some(v)) => write::result(out, &req.id, &v),
            Ok(None) => {}
            Err(m) => write::error(out, &req.id, ErrorCode::INTERNAL_ERROR, &m),
        }
    }

    fn initialize(&mut self, p: &Map<String, Value>) -> Answer {
        let current = self.cfg.edition == Edition::Current;
        let effort = p.get("reasoningEffort");
        if current {
            if let Some(e) = effort {
                if e.as_str().is_none_or(str::is_empty) {
                    return Err("initialize reasoningEffort must be a non-empty string".into());
                }
            }
        }
        if let Some(mt) = p.get("maxTokens") {
            if !positive_safe_integer(mt) {
                return Err("initialize maxTokens must be a positive safe integer".into());
            }
        }
        let cwd = resolve_cwd(&self.cfg.process_cwd.to_string_lossy(), p.get("cwd"))?;
        let max_tokens = p.get("maxTokens").and_then(Value::as_f64);
        if !current {
            // 2026-08 commits the cwd before the provider check (docs/CONTRACT.md#s3.1).
            self.route = Rc::new(Route {
                cwd: Rc::from(cwd.as_str()),
                ..(*self.route).clone()
            });
        }
        let provider = js_string(p.get("provider"));
        if provider != "deepseek-official" {
            return Err(format!("no adapter registered for provider \"{provider}\""));
        }
        let model = match p.get("model") {
            Some(Value::String(m)) => m.clone(),
            other if current => {
                return Err(format!("adapter returned invalid exact model metadata for provider \"deepseek-official\" model \"{}\"", js_string(other)));
            }
            other => js_string(other),
        };
        if current {
            if let Some(Value::String(e)) = effort {
                if !matches!(e.as_str(), "low" | "medium" | "high" | "max") {
                    return Err(format!("provider \"deepseek-official\" model \"{model}\" does not support reasoning effort \"{e}\""));
                }
            }
        }
        self.route = Rc::new(Route {
            model,
            max_tokens,
            cwd: Rc::from(cwd.as_str()),
        });
        self.initialized = true;
        Ok(Some(
            json!({"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}),
        ))
    }

    fn prompt(
        &mut self,
        mut p: Deep<Map<String, Value>>,
        id: &crate::wire::Id,
        now: u64,
        out: &mut Vec<u8>,
    ) -> Answer {
        let content = p.shift_remove("contentBlocks").map(Deep::new);
        // Never cloned: a client value may be 100 000 levels deep.
        let sid = match p.get("sessionId") {
            None => SessionArg::Missing,
            Some(Value::String(s)) => SessionArg::Str(s.clone()),
            Some(v @ (Value::Object(_) | Value::Array(_))) => {
                SessionArg::Composite(super::script::js_string(v))
            }
            Some(_) => SessionArg::Other,
        };
        self.prompt_inner(sid, content, id, now, out)
    }

    fn prompt_inner(
        &mut self,
        sid: SessionArg,
        content: Option<Deep>,
        id: &crate::wire::Id,
        now: u64,
        out: &mut Vec<u8>,
    ) -> Answer {
        let edition = self.cfg.edition;
        if edition == Edition::Current && !self.initialized {
            return Err(NOT_INITIALIZED.into());
        }
        let sid = match sid {
            SessionArg::Str(s) => s,
            SessionArg::Missing => {
                let n = self.anonymous_open();
                return Err(format!(
                    "agent id \"undefined\" does not match session id \"session-{n}\""
                ));
            }
            // The session's header holds a copy of the id: an object or array is not the same
            // value any more (`!==`) and fails that check; other values reach the format's
            // (recorded: prompt_session_id_types).
            SessionArg::Composite(s) => {
                return Err(format!(
                    "session header id \"{s}\" does not match session id \"{s}\""
                ))
            }
            SessionArg::Other => return Err("format v4 header id must be a string".into()),
        };
        self.open_session(&sid, now, out)?;
        let content = match content {
            Some(c) if c.is_array() => c,
            None => return Err("Cannot read properties of undefined (reading 'filter')".into()),
            Some(c) if c.is_null() => {
                return Err("Cannot read properties of null (reading 'filter')".into())
            }
            Some(_) => return Err("blocks.filter is not a function".into()),
        };
        if edition == Edition::Current {
            // durablePromptContent: image data becomes an attachment before the message is queued.
            // It reads every block's `type` first (a null block throws there), then stores
            // the images.
            let blocks = content.as_array().map(Vec::as_slice).unwrap_or_default();
            if blocks.iter().any(Value::is_null) {
                return Err("Cannot read properties of null (reading 'type')".into());
            }
            super::image::check_blocks(blocks, self.cfg.home.is_some())?;
        }
        if edition == Edition::Legacy && self.sessions.get(sid.as_str()).is_some_and(Session::busy)
        {
            return Err(format!("session already has an active prompt: {sid}"));
        }
        let step = script::for_content(&content);
        let mid = new_id();
        let msg = Msg {
            value: Deep::new(user_message(
                content.into_inner(),
                json!({"kind":"user"}),
                mid.clone(),
            )),
            step,
            finished: None,
        };
        self.deliver(&sid, msg, now, out);
        if edition == Edition::Legacy {
            if let Some(s) = self.sessions.get_mut(sid.as_str()) {
                s.legacy_pending.push(id.clone());
            }
            return Ok(None);
        }
        Ok(Some(json!({"messageId": mid})))
    }

    fn resume(&mut self, p: &Map<String, Value>) -> Answer {
        let sid = match p.get("sessionId") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err("session/resume requires a non-empty sessionId string".into()),
        };
        if !self.initialized {
            return Err(NOT_INITIALIZED.into());
        }
        if self.shutting_down {
            return Err(SHUTTING_DOWN.into());
        }
        if self.sessions.contains_key(sid.as_str()) {
            return Err(format!("SDK session is already open or opening: {sid}"));
        }
        let Some(store) = self.store.as_mut() else {
            return Err("cannot resume: session persistence is not configured (load a dsh-session-persistence backend)".into());
        };
        let Some(st) = store.load(&sid) else {
            return Err(format!("session \"{sid}\" not found"));
        };
        if store.claim(&sid) == Err(persist::Claim::Owned) {
            return Err(format!(
                "session \"{sid}\" is already owned by an active write handle"
            ));
        }
        let mut s = Session::new(self.route.clone());
        // The real runtime appends one unstreamed event when it reopens a log.
        s.seq = st.seq + 1;
        s.turns = st.turns;
        s.primed = true;
        s.titled = true;
        // Its log told the model about the directory it reopens in.
        s.context_cwd = Some(s.cwd.clone());
        s.goal = st.goal.as_ref().and_then(super::goals::Goal::restore);
        let stored = s.stored();
        self.adopt(&sid, s);
        self.save(&sid, stored);
        Ok(Some(json!({})))
    }

    fn wait(&mut self, p: &Map<String, Value>, id: &crate::wire::Id) -> Answer {
        let sid = match p.get("sessionId") {
            Some(Value::String(s)) => s.as_str(),
            _ => return Err("session/wait requires a sessionId string".into()),
        };
        if !self.initialized {
            return Err(NOT_INITIALIZED.into());
        }
        let Some(s) = self.sessions.get_mut(sid) else {
            return Err(format!("unknown SDK session: {sid}"));
        };
        if s.busy() {
            s.waiters.push(id.clone());
            return Ok(None);
        }
        Ok(Some(json!({})))
    }

    fn working_directory(
        &mut self,
        p: &Map<String, Value>,
        set: bool,
        now: u64,
        out: &mut Vec<u8>,
    ) -> Answer {
        let sid = match p.get("sessionId") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err("working-directory requests require a non-empty sessionId".into()),
        };
        let path = match (set, p.get("path")) {
            (false, _) => None,
            (true, Some(Value::String(s))) => Some(s.clone()),
            (true, _) => return Err("working-directory set requires a path string".into()),
        };
        if !self.initialized {
            return Err(NOT_INITIALIZED.into());
        }
        self.open_session(&sid, now, out)?;
        let Some(s) = self.sessions.get_mut(sid.as_str()) else {
            return Err(format!("unknown SDK session: {sid}"));
        };
        let Some(path) = path else {
            // The origin itself may not exist (initialize accepts any cwd): upstream says so.
            super::cd::must_exist(&s.cwd)?;
            return Ok(Some(json!({"cwd": &*s.cwd})));
        };
        if path.is_empty() {
            return Err("working-directory: cd must not be empty".into());
        }
        let target = super::cd::cd(&s.cwd, &path)?;
        if *target != *s.cwd {
            let mut ev = Events::new(out, &sid, now);
            super::sessions::change_directory(s, &mut ev, &target);
        }
        Ok(Some(json!({"cwd": &*s.cwd})))
    }
}

/// A prompt's `sessionId`, as far as it decides the answer.
enum SessionArg {
    Missing,
    Str(String),
    /// An object or an array: `String(id)`.
    Composite(String),
    /// Any other value.
    Other,
}

/// `Number.isSafeInteger(v) && v > 0`.
fn positive_safe_integer(v: &Value) -> bool {
    v.as_f64()
        .is_some_and(|f| f > 0.0 && f.fract() == 0.0 && f <= 9_007_199_254_740_991.0)
}

/// `String(v)` for a JSON value (`undefined` when absent).
fn js_string(v: Option<&Value>) -> String {
    v.map_or_else(|| "undefined".into(), super::script::js_string)
}

/// Node's `path.resolve(base, cwd)`, with its type error for a non-string.
fn resolve_cwd(base: &str, cwd: Option<&Value>) -> Result<String, String> {
    let prefix = "The \"paths[0]\" argument must be of type string. Received ";
    match cwd {
        Some(Value::String(s)) => Ok(super::cd::resolve(base, s)),
        None => Err(format!("{prefix}undefined")),
        Some(Value::Null) => Err(format!("{prefix}null")),
        Some(Value::Bool(b)) => Err(format!("{prefix}type boolean ({b})")),
        Some(Value::Number(n)) => Err(format!(
            "{prefix}type number ({})",
            js_number(n.as_f64().unwrap_or(f64::NAN))
        )),
        Some(Value::Array(_)) => Err(format!("{prefix}an instance of Array")),
        Some(Value::Object(_)) => Err(format!("{prefix}an instance of Object")),
    }
}
