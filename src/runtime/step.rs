//! A step's opening: the checks that fail a turn before its first step, `step/start`, and the
//! events the real runtime emits while it builds the model request (claimed working-directory
//! notes, system prompt, prompt, runtime context, request header and context, title). The
//! model's answer is [`super::model`]'s.

use super::events::{self, new_id, Events};
use super::script::Script;
use super::{profile, Config, Phase, Profile, Runtime, Session, Turn};
use crate::wire::json::held;
use serde_json::{json, Value};

impl Runtime {
    /// `step/start` and the events the real runtime emits while building the model request.
    /// Returns the reason when the turn fails before its step starts (the caller ends it).
    pub(super) fn pre_step(&mut self, sid: &str, now: u64, out: &mut Vec<u8>) -> Option<Value> {
        if let Some(reason) = self.fails_before_step(sid) {
            return Some(reason);
        }
        let cfg = &self.cfg;
        // No session or no turn: nothing to open (and no failure to report).
        let s = self.sessions.get_mut(sid)?;
        let mut t = s.turn.take()?;
        let mut ev = Events::new(out, sid, now);
        let claimed = claim_notices(s, &mut t, &mut ev);
        ev.event(s, "step/start", &json!({"turn": t.n, "step": t.step}));
        // A new session's conversation opens with its system prompt, ahead of any notice
        // (recorded: `sandbox_workspace_is_the_origin`, a directory change before the first turn).
        if t.step == 1 {
            system_prompt(cfg, s, &t, &mut ev);
        }
        for notice in &claimed {
            ev.appended(s, "user/message", notice);
        }
        if t.step > 1 && s.context_cwd.as_ref() != Some(&s.cwd) {
            runtime_context(cfg, s, &mut ev);
        }
        if t.step == 1 {
            first_step(cfg, s, &t, &mut ev);
        }
        let delay = if t.step == 1 { t.delay_ms } else { 0 };
        t.through = s.seq.saturating_sub(1);
        t.phase = if t.script == Script::Hang {
            // The stand-in never answers a hanging request, not even its headers: no delivery.
            Phase::Hung
        } else {
            Phase::Model
        };
        let hung = t.phase == Phase::Hung;
        s.turn = Some(t);
        if !hung {
            self.schedule(sid, now.saturating_add(delay));
        }
        None
    }

    /// The reason a turn fails before its step starts: a session id the store cannot encode,
    /// and, before the first step, a prompt text that is not a string or a working directory
    /// that is gone (the runtime reads and checks them there).
    pub(super) fn fails_before_step(&self, sid: &str) -> Option<Value> {
        if sid.is_empty() {
            // The real runtime cannot encode "" as a path segment: the turn fails at once. We
            // copy that, but (unlike it) shutdown still works afterwards.
            return Some(
                json!({"kind":"error","error":{"message":"cannot encode an empty path segment","code":"UNKNOWN"}}),
            );
        }
        let check_cwd = self.cfg.cwd_must_exist;
        let message = self.sessions.get(sid).and_then(|s| {
            let t = s.turn.as_ref().filter(|t| t.step == 1)?;
            if let Script::TextNotString(m) = &t.script {
                return Some(m.clone());
            }
            check_cwd
                .then(|| super::cd::must_exist(&s.cwd).err())
                .flatten()
        })?;
        Some(json!({"kind":"error","error":{"message": message,"code":"UNKNOWN"}}))
    }
}

/// The notices the step reads (claimed before it starts, with the runtime context they
/// changed): a first step reads those its turn claimed when it started (a change during it
/// waits for the next step); a later one claims those a tool spliced for it.
fn claim_notices(s: &mut Session, t: &mut Turn, ev: &mut Events<'_>) -> Vec<Value> {
    if t.step == 1 {
        return std::mem::take(&mut t.claimed);
    }
    let claimed = std::mem::take(&mut s.next_step);
    if !claimed.is_empty() {
        let claim =
            json!({"target":"next-step","start":0,"removedCount": claimed.len(),"inserted":[]});
        ev.event(s, "agent/inbox/spliced", &claim);
    }
    claimed
}

/// The runtime context, sent again whenever the working directory differs from the one the
/// model was last told about.
fn runtime_context(cfg: &Config, s: &mut Session, ev: &mut Events<'_>) {
    let ctx = if cfg.profile == Profile::SdkMinimal {
        profile::minimal_runtime_context(&s.cwd)
    } else {
        let workspace = s.route.cwd.clone();
        events::runtime_context(&s.cwd, &workspace, s.parent.as_ref().map(|_| ()))
    };
    ev.appended(s, "user/message", &ctx);
    s.context_cwd = Some(s.cwd.clone());
}

/// A session's system prompt, at its first turn's first step (a session reopened from the store
/// had it already).
fn system_prompt(cfg: &Config, s: &mut Session, t: &Turn, ev: &mut Events<'_>) {
    if let Some(content) = profile::system_content(cfg).filter(|_| !s.primed) {
        let sys = json!({"turn": t.n, "step": t.step, "message": {"role":"system",
            "content": content, "source":{"kind":"system-prompt"},"id": new_id()}});
        ev.appended(s, "system/message", &sys);
    }
}

/// A turn's first step ([`system_prompt`] before it): the prompt, the runtime context, and what a
/// session sends once (request header and context, title).
fn first_step(cfg: &Config, s: &mut Session, t: &Turn, ev: &mut Events<'_>) {
    let primed = s.primed;
    let mut prompt_seq = s.seq;
    if let Some(m) = &t.msg {
        prompt_seq = ev.appended(s, "user/message", &m.value);
    }
    if !primed || s.context_cwd.as_ref() != Some(&s.cwd) {
        runtime_context(cfg, s, ev);
    }
    let round = t
        .msg
        .as_ref()
        .is_some_and(|m| super::goal_rounds::is_round(&m.value));
    if !s.header_sent || round {
        // `initial`, `resume` (a session reopened from the store), or `series` (a goal's round).
        let reason = match (s.header_sent, primed) {
            (true, _) => "series",
            (false, true) => "resume",
            (false, false) => "initial",
        };
        s.header_sent = true;
        let h = request_header(cfg, s, reason);
        ev.event(s, "request/header", &h);
    }
    if !primed {
        let rc =
            json!({"provider":"deepseek-official","model": s.route.model,"contextWindow":1000000});
        ev.event(s, "request/context", &rc);
        s.primed = true;
    }
    if !s.titled {
        // The session is named after the first message with words, in that turn's first
        // step (a message without words gets no title, and a later one may).
        let title = t
            .msg
            .as_ref()
            .map(|m| title_of(&m.value["content"]))
            .unwrap_or_default();
        if !title.is_empty() {
            let st =
                json!({"title": title,"messageSeqs":[prompt_seq],"source":{"kind":"fallback"}});
            ev.event(s, "session/title", &st);
            s.titled = true;
        }
    }
}

/// The `request/header` data of a session's first request here (`primed` before it: the
/// session was reopened from the store).
fn request_header(cfg: &Config, s: &Session, reason: &str) -> Value {
    let roster = profile::roster(cfg);
    let child = s.parent.is_some();
    let mut h = events::request_header(&s.route.model, s.route.max_tokens, reason, child);
    h["header"]["tools"] = if cfg.profile == Profile::SdkMinimal {
        profile::minimal_tool_schemas(&roster)
    } else {
        // The `sdk` profile's schemas are abbreviated to the tools' names.
        Value::Array(roster.iter().map(|t| json!({"name": t})).collect())
    };
    h
}

/// The fallback title: the first five words of the message's text (`sdk-minimal`'s title row
/// also caps it at 40 bytes).
fn title_of(content: &Value) -> String {
    let mut words = Vec::new();
    if let Value::Array(blocks) = content {
        // Text blocks only: a block with a `text` but no `type` is not one.
        for b in blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        {
            if let Some(t) = b.get("text").and_then(Value::as_str) {
                // Words split at Unicode whitespace (U+FEFF is none), with controls and format
                // characters (Unicode Cc, Cf) taken out; a word of nothing else is no word.
                let clean = t
                    .split_whitespace()
                    .map(|w| {
                        w.chars()
                            .filter(|c| !is_control_or_format(*c))
                            .collect::<String>()
                    })
                    .filter(|w| !w.is_empty());
                let room = 5 - words.len().min(5);
                words.extend(clean.take(room));
            }
            if words.len() >= 5 {
                break;
            }
        }
    }
    // Five words, cut at 40 UTF-16 units as JavaScript's `slice` cuts (recorded under both
    // profiles: `minimal_*`, `divergence_tool_arguments`).
    let title = words.join(" ");
    let mut units = held::to_utf16(&title);
    if units.len() > 40 {
        units.truncate(40);
        // The cut title loses its trailing whitespace (`trimEnd`, recorded: `sdk_tool_todo`).
        return held::from_utf16(&units).trim_end().to_owned();
    }
    title
}

/// Unicode general categories Cc (controls) and Cf (format characters), which a title leaves out
/// (recorded in `divergence_titles_and_images`: `x\u{1}y` → `xy`, `zw\u{feff}q` → `zwq`).
fn is_control_or_format(c: char) -> bool {
    matches!(c as u32,
        0x00..=0x1f | 0x7f..=0x9f | 0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x890..=0x891
        | 0x8e2 | 0x180e | 0x200b..=0x200f | 0x202a..=0x202e | 0x2060..=0x2064 | 0x2066..=0x206f
        | 0xfeff | 0xfff9..=0xfffb | 0x110bd | 0x110cd | 0x13430..=0x1343f | 0x1bca0..=0x1bca3
        | 0x1d173..=0x1d17a | 0xe0001 | 0xe0020..=0xe007f)
}
