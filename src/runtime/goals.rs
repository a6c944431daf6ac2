//! A session's goal and the `sdk` profile's goal tools, as the release's `@deepseek-ai/dsh-goal`
//! (`GoalService`) and `@deepseek-ai/dsh-tool-goal` keep and answer them (read in the 0.2.1rc2
//! executable; recorded: `sdk_tool_goals`, `sdk_tool_goal_updates`). Sans-IO: a tool call is the
//! goal before, the arguments (checked against the schema already), whether the turn holds a
//! direct human prompt, and the clock; the answer is the result and the `goal/change` to stream.
//! The rounds a goal runs on its own are [`super::goal_rounds`]'.

use crate::wire::json::to_string as js;
use serde_json::{json, Value};

/// The tools this module answers.
pub const TOOLS: &[&str] = &["get_goal", "create_goal", "update_goal"];

/// `maxGoalRounds` when `create_goal` names none (`defaultMaxGoalRounds`).
const DEFAULT_MAX_ROUNDS: u64 = 256;

/// A session's current goal: its durable snapshot and its process-local activation.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    pub id: String,
    pub revision: u64,
    pub objective: String,
    pub phase: &'static str,
    pub max_rounds: u64,
    /// `blockedReason` (code, message), present exactly while blocked.
    pub blocked: Option<(String, String)>,
    pub rounds_started: u64,
    created_at: u64,
    updated_at: u64,
    /// `armed`: automatic rounds may run.
    pub armed: bool,
}

/// A goal tool's answer: its text, its error class and code when it failed, and the
/// `goal/change` data it committed.
#[derive(Debug, Default)]
pub struct Answer {
    pub text: String,
    pub error: Option<(&'static str, &'static str)>,
    pub change: Option<Value>,
}

/// A failed goal tool call: its error class, code and message.
#[derive(Debug)]
struct Failure(&'static str, &'static str, String);

impl From<Failure> for Answer {
    fn from(Failure(name, code, message): Failure) -> Answer {
        Answer {
            text: format!("Error: {message}"),
            error: Some((name, code)),
            change: None,
        }
    }
}

fn goal_error(code: &'static str, message: &str) -> Failure {
    Failure("GoalError", code, message.to_owned())
}

fn harness_error(code: &'static str, message: &str) -> Failure {
    Failure("HarnessError", code, message.to_owned())
}

const NOT_HUMAN: &str = "this goal operation requires a direct human turn on a top-level agent";

impl Goal {
    /// The durable snapshot (`goal/change.goal`).
    fn snapshot(&self) -> Value {
        let mut g = json!({"id": self.id,"revision": self.revision,"objective": self.objective,
            "phase": self.phase,"maxGoalRounds": self.max_rounds});
        if let Some((code, message)) = &self.blocked {
            g["blockedReason"] = json!({"code": code,"message": message});
        }
        g
    }

    /// What the tools answer (`goalValue`), as `JSON.stringify` writes it.
    fn value(&self) -> String {
        let mut g = json!({"id": self.id,"revision": self.revision,"objective": self.objective,
            "phase": self.phase,"roundsStarted": self.rounds_started,"maxGoalRounds": self.max_rounds});
        if let Some((code, message)) = &self.blocked {
            g["blockedReason"] = json!({"code": code,"message": message});
        }
        let armed = if self.armed { "armed" } else { "disarmed" };
        js(&json!({"goal": g,"activation": armed}))
    }

    /// What is persisted with the session: the release keeps the goal in the session's store
    /// and reads it back on `session/resume` (recorded: `goal_persists_with_its_session`).
    pub fn durable(&self) -> Value {
        json!({"goal": self.snapshot(),"roundsStarted": self.rounds_started,
            "createdAt": self.created_at,"updatedAt": self.updated_at})
    }

    /// The goal [`Goal::durable`] wrote, disarmed: activation is process-local (a resumed
    /// session's goal answers `"activation":"disarmed"` until a `resume` arms it). `None` when
    /// `v` is not such a record.
    pub fn restore(v: &Value) -> Option<Goal> {
        let g = &v["goal"];
        let phase = ["active", "paused", "blocked", "complete"]
            .into_iter()
            .find(|p| g["phase"] == *p)?;
        let text = |k: &str| Some(g[k].as_str()?.to_owned());
        let blocked = match &g["blockedReason"] {
            Value::Null => None,
            r => Some((
                r["code"].as_str()?.to_owned(),
                r["message"].as_str()?.to_owned(),
            )),
        };
        Some(Goal {
            id: text("id")?,
            revision: g["revision"].as_u64()?,
            objective: text("objective")?,
            phase,
            max_rounds: g["maxGoalRounds"].as_u64()?,
            blocked,
            rounds_started: v["roundsStarted"].as_u64()?,
            created_at: v["createdAt"].as_u64()?,
            updated_at: v["updatedAt"].as_u64()?,
            armed: false,
        })
    }

    /// The `goal/change` data of `operation` leaving the goal as it is now.
    pub fn change(&self, operation: &str) -> Value {
        json!({"kind":"goal/change","version":1,"operation": operation,"goal": self.snapshot(),
            "roundsStarted": self.rounds_started,"createdAt": self.created_at,"updatedAt": self.updated_at})
    }

    /// The next revision in `phase` (`withPhase`: no blocked reason), committed at `now`.
    fn next(&self, phase: &'static str, armed: bool, now: u64) -> Goal {
        Goal {
            revision: self.revision + 1,
            phase,
            blocked: None,
            updated_at: now.max(self.updated_at),
            armed,
            ..self.clone()
        }
    }

    /// Blocked at `now` for `(code, message)`, disarmed.
    pub fn blocked(&self, reason: (String, String), now: u64) -> Goal {
        Goal {
            blocked: Some(reason),
            ..self.next("blocked", false, now)
        }
    }
}

/// `Number.isSafeInteger(v) && v >= 1`.
fn positive_safe(v: &Value) -> Option<u64> {
    let n = v.as_f64()?;
    (n.fract() == 0.0 && (1.0..=9_007_199_254_740_991.0).contains(&n)).then_some(n as u64)
}

/// Runs goal tool `tool` on the session's `goal` at `now`; `human`: the turn holds a prompt
/// of the user's and the session is a root (`requireDirectHuman`).
pub fn run(goal: &mut Option<Goal>, tool: &str, args: &Value, human: bool, now: u64) -> Answer {
    let next = match tool {
        "get_goal" => {
            let text = goal.as_ref().map_or(r#"{"goal":null}"#.into(), Goal::value);
            return Answer {
                text,
                ..Answer::default()
            };
        }
        "create_goal" => create(goal.as_ref(), args, human, now),
        _ => update(goal.as_ref(), args, human, now),
    };
    match next {
        Ok((g, operation)) => {
            let a = Answer {
                text: g.value(),
                error: None,
                change: Some(g.change(operation)),
            };
            *goal = Some(g);
            a
        }
        Err(f) => f.into(),
    }
}

type Committed = Result<(Goal, &'static str), Failure>;

fn create(current: Option<&Goal>, args: &Value, human: bool, now: u64) -> Committed {
    if !human {
        return Err(harness_error("GOAL_TOOL_AUTHORITY_REQUIRED", NOT_HUMAN));
    }
    let objective = objective(&args["objective"])?;
    let max_rounds = match args.get("max_goal_rounds") {
        None => DEFAULT_MAX_ROUNDS,
        Some(v) => max_rounds(v)?,
    };
    if let Some(c) = current.filter(|c| c.phase != "complete") {
        let m = format!(
            "goal \"{}\" already exists with phase \"{}\"",
            c.id, c.phase
        );
        return Err(goal_error("GOAL_ALREADY_EXISTS", &m));
    }
    let id = format!("goal-{}", super::events::new_id());
    let g = Goal {
        id,
        revision: 1,
        objective,
        phase: "active",
        max_rounds,
        blocked: None,
        rounds_started: 0,
        created_at: now,
        updated_at: now,
        armed: true,
    };
    Ok((g, "create"))
}

fn objective(v: &Value) -> Result<String, Failure> {
    match v.as_str().map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => Ok(s.to_owned()),
        None => Err(goal_error(
            "GOAL_INVALID_OBJECTIVE",
            "goal objective must be a non-empty string",
        )),
    }
}

fn max_rounds(v: &Value) -> Result<u64, Failure> {
    positive_safe(v).ok_or_else(|| {
        goal_error(
            "GOAL_INVALID_MAX_ROUNDS",
            "maxGoalRounds must be a positive safe integer",
        )
    })
}

/// `update_goal`: the argument checks of the tool, then the service's transition.
fn update(current: Option<&Goal>, args: &Value, human: bool, now: u64) -> Committed {
    let id = args["goal_id"].as_str().unwrap_or_default();
    let revision = positive_safe(&args["revision"]);
    let Some(revision) = revision.filter(|_| !id.is_empty() && id == id.trim()) else {
        return Err(harness_error(
            "GOAL_TOOL_INVALID_UPDATE",
            "goal_id must be non-empty and revision must be a positive safe integer",
        ));
    };
    let text = |k: &str| args[k].as_str().is_some_and(|s| !s.is_empty());
    let cap = args
        .get("max_goal_rounds")
        .is_some_and(|v| v.as_f64() != Some(0.0));
    let invalid = |m: &str| Err(harness_error("GOAL_TOOL_INVALID_UPDATE", m));
    let action = args["action"].as_str().unwrap_or_default();
    match action {
        "edit" | "pause" | "resume" if !human => {
            Err(harness_error("GOAL_TOOL_AUTHORITY_REQUIRED", NOT_HUMAN))
        }
        "edit" if text("blocked_reason") => invalid("blocked_reason is valid only with action blocked"),
        "edit" => edit(expect(current, id, revision)?, args, text("objective"), cap, now),
        "pause" | "resume" if text("objective") || cap || text("blocked_reason") => invalid(
            "objective and max_goal_rounds are valid only with action edit; blocked_reason is valid only with action blocked",
        ),
        "resume" if current.is_some_and(|c| c.id == id && c.revision == revision && c.phase == "paused") => {
            Err(harness_error(
                "GOAL_TOOL_RESUME_PAUSED",
                "the model cannot resume a paused goal; the user must resume it",
            ))
        }
        "pause" => transition(expect(current, id, revision)?, "pause", &["active"], now),
        "resume" => resume(expect(current, id, revision)?, now),
        // `complete` and `blocked` also allow the goal's own round; the scripted model never
        // calls a tool there (it echoes the round's prompt).
        _ if !human => Err(harness_error(
            "GOAL_TOOL_AUTHORITY_REQUIRED",
            "complete and blocked require a direct human turn or the current goal round",
        )),
        _ if text("objective") || cap => {
            invalid("objective and max_goal_rounds are valid only with action edit")
        }
        "complete" if text("blocked_reason") => invalid("blocked_reason is valid only with action blocked"),
        "complete" => transition(
            expect(current, id, revision)?,
            "complete",
            &["active", "paused", "blocked"],
            now,
        ),
        _ => {
            let why = args["blocked_reason"].as_str().map(str::trim).unwrap_or("");
            if why.is_empty() {
                return invalid("blocked_reason is required with action blocked");
            }
            let c = expect(current, id, revision)?;
            if c.phase != "active" {
                return Err(transition_error(c, "block", &["active"]));
            }
            Ok((c.blocked(("model-reported".into(), why.into()), now), "block"))
        }
    }
}

/// The current goal when `id` and `revision` name it (`expectCurrent`).
fn expect<'g>(current: Option<&'g Goal>, id: &str, revision: u64) -> Result<&'g Goal, Failure> {
    let Some(c) = current else {
        return Err(goal_error("GOAL_NOT_FOUND", "no current goal"));
    };
    if c.id != id || c.revision != revision {
        let m = format!(
            "stale goal ref \"{id}\" revision {revision}; current is \"{}\" revision {}",
            c.id, c.revision
        );
        return Err(goal_error("GOAL_STALE_REVISION", &m));
    }
    Ok(c)
}

fn transition_error(c: &Goal, operation: &str, allowed: &[&str]) -> Failure {
    let m = format!(
        "cannot {operation} goal \"{}\" from phase \"{}\"; expected {}",
        c.id,
        c.phase,
        allowed.join(" or ")
    );
    goal_error("GOAL_INVALID_TRANSITION", &m)
}

/// `pause` (to `paused`) or `complete` (to `complete`), both disarming.
fn transition(c: &Goal, operation: &'static str, allowed: &[&str], now: u64) -> Committed {
    if !allowed.contains(&c.phase) {
        return Err(transition_error(c, operation, allowed));
    }
    let phase = if operation == "pause" {
        "paused"
    } else {
        "complete"
    };
    Ok((c.next(phase, false, now), operation))
}

fn resume(c: &Goal, now: u64) -> Committed {
    let allowed = ["active", "paused", "blocked"];
    if !allowed.contains(&c.phase) {
        return Err(transition_error(c, "resume", &allowed));
    }
    if c.phase == "active" && c.armed {
        let m = format!("goal \"{}\" is already active and armed", c.id);
        return Err(goal_error("GOAL_INVALID_TRANSITION", &m));
    }
    if c.rounds_started >= c.max_rounds {
        let m = format!(
            "goal \"{}\" exhausted {} goal rounds; increase maxGoalRounds before resuming",
            c.id, c.max_rounds
        );
        return Err(goal_error("GOAL_INVALID_TRANSITION", &m));
    }
    Ok((c.next("active", true, now), "resume"))
}

fn edit(c: &Goal, args: &Value, objective_given: bool, cap: bool, now: u64) -> Committed {
    if !objective_given && !cap {
        return Err(goal_error(
            "GOAL_INVALID_EDIT",
            "goal edit requires objective and/or maxGoalRounds",
        ));
    }
    let mut g = Goal {
        revision: c.revision + 1,
        updated_at: now.max(c.updated_at),
        ..c.clone()
    };
    if objective_given {
        g.objective = objective(&args["objective"])?;
    }
    if cap {
        g.max_rounds = max_rounds(&args["max_goal_rounds"])?;
    }
    Ok((g, "edit"))
}

/// The prompt of the goal's automatic round `round` (`renderGoalRoundPrompt`).
pub fn round_prompt(g: &Goal, round: u64) -> String {
    format!(
        "<goal_round>\nObjective: {}\nRound: {round}/{}\n\nContinue working toward the objective in this same session. Treat the current workspace, tool results, and durable session state as authoritative; inspect them instead of assuming earlier narration is still current. Make concrete progress and verify the result. Before claiming completion, gather evidence that the whole objective is achieved, read the current goal, and mark it complete. If work remains, leave the goal active for the next round. Follow the configured goal-tool policy before reporting a blocker.\n</goal_round>",
        js(&Value::String(g.objective.clone())),
        g.max_rounds
    )
}

#[cfg(test)]
#[path = "goals_tests.rs"]
mod tests;
