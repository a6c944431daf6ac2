//! The `assistant/message` data of the scripted model's replies, written as raw JSON: the
//! message's content blocks, its replay state and the stream the recording stub sent.

use super::events::new_id;
use crate::wire::json::{held, write_str, write_value};
use serde_json::{json, Value};

/// Splits a text the way the recording stub streamed it: two halves (one chunk when short),
/// counting code points of held text (a lone surrogate is one).
fn halves(text: &str) -> (Value, Value) {
    let n = held::char_count(text);
    if n < 2 {
        return (json!([text]), json!([]));
    }
    let cut = held::nth_char(text, n / 2);
    (json!([&text[..cut], &text[cut..]]), json!([10]))
}

/// One streamed content block of an assistant message.
pub enum Block<'a> {
    /// `{type:"text"}`.
    Text(&'a str),
    /// `{type:"reasoning"}` with the stub's fake signature.
    Reasoning(&'a str),
    /// `{type:"tool-call"}`.
    ToolCall {
        /// Call id.
        id: &'a str,
        /// Tool name.
        name: &'a str,
        /// Arguments as JSON text.
        args: &'a str,
    },
}

/// The content array of an assistant message (kept for `subagent.finished`).
pub fn content(blocks: &[Block<'_>]) -> Value {
    Value::Array(
        blocks
            .iter()
            .map(|b| match b {
                Block::Text(t) => json!({"type":"text","text": t}),
                Block::Reasoning(t) => json!({"type":"reasoning","text": t}),
                Block::ToolCall { id, name, args } => {
                    json!({"type":"tool-call","id": id,"name": name,"arguments": args})
                }
            })
            .collect(),
    )
}

/// Appends `assistant/message` data (message, usage, the recorded stream) as raw JSON: it is
/// the biggest event of every turn, and building it as a `Value` dominated the echo workload.
pub fn write_message(
    out: &mut Vec<u8>,
    turn: u32,
    step: u32,
    model: &str,
    blocks: &[Block<'_>],
    finish: &str,
    now: u64,
) {
    use std::io::Write as _;
    let mut m = Message::new(now);
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            m.content.push(b',');
            m.replay.push(b',');
        }
        match b {
            Block::Text(t) => m.text(i, "text", t),
            Block::Reasoning(t) => m.text(i, "reasoning", t),
            Block::ToolCall { id, name, args } => m.tool_call(i, id, name, args),
        }
    }
    m.content.push(b']');
    m.replay.push(b']');
    m.finish(model, finish);
    let _ = write!(
        out,
        "{{\"turn\":{turn},\"step\":{step},\"message\":{{\"role\":\"assistant\",\"content\":"
    );
    out.extend_from_slice(&m.content);
    out.extend_from_slice(
        b",\"source\":{\"kind\":\"model\",\"provider\":\"deepseek-official\",\"model\":",
    );
    write_str(model, out);
    out.extend_from_slice(b",\"replayState\":");
    write_replay_state(out, model, &m.replay);
    out.extend_from_slice(b"},\"id\":");
    write_str(&new_id(), out);
    let _ = write!(out, "}},\"usage\":{USAGE_JSON},\"stream\":[");
    out.extend_from_slice(&m.stream);
    out.extend_from_slice(b"]}");
}

/// The usage every scripted reply reports.
const USAGE_JSON: &str = "{\"inputTokens\":10,\"outputTokens\":5,\"totalTokens\":15}";

/// The three arrays an assistant message's blocks are written into at once (raw JSON): the
/// message's content, its replay state's blocks, and the recorded stream (its items each
/// followed by a comma until [`Message::finish`]).
struct Message {
    content: Vec<u8>,
    replay: Vec<u8>,
    stream: Vec<u8>,
    now: u64,
}

impl Message {
    fn new(now: u64) -> Self {
        let mut content = Vec::with_capacity(128);
        let mut replay = Vec::with_capacity(64);
        content.push(b'[');
        replay.push(b'[');
        let stream = Vec::with_capacity(512);
        Message {
            content,
            replay,
            stream,
            now,
        }
    }

    /// A `chunk` item of the stream, its chunk written by `body`.
    fn chunk(&mut self, body: impl FnOnce(&mut Vec<u8>)) {
        use std::io::Write as _;
        let _ = write!(
            self.stream,
            "{{\"type\":\"chunk\",\"time\":{},\"chunk\":",
            self.now
        );
        body(&mut self.stream);
        self.stream.extend_from_slice(b"},");
    }

    /// Block `i`, a text or reasoning block (`kind`) of text `t`.
    fn text(&mut self, i: usize, kind: &str, t: &str) {
        use std::io::Write as _;
        self.content.extend_from_slice(b"{\"type\":");
        write_str(kind, &mut self.content);
        self.content.extend_from_slice(b",\"text\":");
        write_str(t, &mut self.content);
        self.content.push(b'}');
        if kind == "text" {
            self.replay.extend_from_slice(b"{\"type\":\"text\"}");
        } else {
            self.replay
                .extend_from_slice(b"{\"type\":\"reasoning\",\"signature\":\"fakesig\"}");
        }
        self.chunk(|s| {
            let _ = write!(
                s,
                "{{\"type\":\"block-start\",\"index\":{i},\"blockType\":\"{kind}\"}}"
            );
        });
        let now = self.now;
        let _ = write!(
            self.stream,
            "{{\"type\":\"{kind}-chunks\",\"time0\":{now},\"index\":{i},"
        );
        let (texts, dt) = if kind == "text" {
            halves(t)
        } else {
            (json!([t]), json!([]))
        };
        self.stream.extend_from_slice(b"\"dt\":");
        write_value(&dt, &mut self.stream);
        self.stream.extend_from_slice(b",\"texts\":");
        write_value(&texts, &mut self.stream);
        self.stream.extend_from_slice(b"},");
        self.chunk(|s| {
            let _ = write!(
                s,
                "{{\"type\":\"block-end\",\"index\":{i},\"block\":{{\"type\":\"{kind}\",\"text\":"
            );
            write_str(t, s);
            s.extend_from_slice(b"}}");
        });
    }

    /// Block `i`, a tool call.
    fn tool_call(&mut self, i: usize, id: &str, name: &str, args: &str) {
        use std::io::Write as _;
        write_tool_call(&mut self.content, id, name, args);
        self.replay.extend_from_slice(b"{\"type\":\"tool-call\"}");
        self.chunk(|s| {
            let _ = write!(
                s,
                "{{\"type\":\"block-start\",\"index\":{i},\"blockType\":\"tool-call\"}}"
            );
        });
        self.tool_call_chunks(i, id, |s| {
            s.extend_from_slice(b",\"name\":");
            write_str(name, s);
            s.extend_from_slice(b",\"args\":[\"\"]");
        });
        self.tool_call_chunks(i, id, |s| {
            s.extend_from_slice(b",\"args\":[");
            write_str(args, s);
            s.push(b']');
        });
        self.chunk(|s| {
            let _ = write!(s, "{{\"type\":\"block-end\",\"index\":{i},\"block\":");
            write_tool_call(s, id, name, args);
            s.push(b'}');
        });
    }

    /// A `tool-call-chunks` item of call `id` (block `i`), its other members written by `rest`.
    fn tool_call_chunks(&mut self, i: usize, id: &str, rest: impl FnOnce(&mut Vec<u8>)) {
        use std::io::Write as _;
        let s = &mut self.stream;
        let _ = write!(
            s,
            "{{\"type\":\"tool-call-chunks\",\"time0\":{},\"index\":{i},\"dt\":[],\"id\":",
            self.now
        );
        write_str(id, s);
        rest(s);
        s.extend_from_slice(b"},");
    }

    /// The stream's last items: the usage and the `finish` chunk with the replay state.
    fn finish(&mut self, model: &str, finish: &str) {
        use std::io::Write as _;
        let now = self.now;
        let s = &mut self.stream;
        let _ = write!(s, "{{\"type\":\"chunk\",\"time\":{now},\"chunk\":{{\"type\":\"usage\",\"usage\":{USAGE_JSON}}}}},");
        let _ = write!(s, "{{\"type\":\"chunk\",\"time\":{now},\"chunk\":{{\"type\":\"finish\",\"reason\":{{\"kind\":");
        write_str(finish, s);
        s.extend_from_slice(b"},\"replayState\":");
        write_replay_state(s, model, &self.replay);
        s.extend_from_slice(b"}}");
    }
}

/// A `{type:"tool-call"}` block.
fn write_tool_call(s: &mut Vec<u8>, id: &str, name: &str, args: &str) {
    s.extend_from_slice(b"{\"type\":\"tool-call\",\"id\":");
    write_str(id, s);
    s.extend_from_slice(b",\"name\":");
    write_str(name, s);
    s.extend_from_slice(b",\"arguments\":");
    write_str(args, s);
    s.push(b'}');
}

/// A message's `replayState`: the model's response and its `blocks` (raw JSON).
fn write_replay_state(s: &mut Vec<u8>, model: &str, blocks: &[u8]) {
    s.extend_from_slice(b"{\"response\":{\"kind\":\"deepseek-messages\",\"version\":1,\"model\":");
    write_str(model, s);
    s.extend_from_slice(b"},\"blocks\":");
    s.extend_from_slice(blocks);
    s.push(b'}');
}
