//! Client conformance (`dsh-conformance client`, docs/CONTRACT.md#s15): the kit plays the
//! runtime and judges a client.
//!
//! - [`run`] sets up each [`scenario`]: a temporary `DSH_HOME` and workspace, and a shim (a `dsh`
//!   script re-invoking the kit as `client-peer`, exposed as the `{runtime}` argv placeholder,
//!   `DSH_BIN` and on `PATH`) for the client to launch.
//! - Each launch is a peer process ([`relay`]) connected back to the kit over 127.0.0.1
//!   ([`link`]); the kit serves it with the reference runtime behind the scenario's [`layers`]
//!   (those on runs in [`turns`], on `shutdown` in [`closing`]) ([`peer`]), logging every byte
//!   ([`log`]).
//! - The client is driven through the driver protocol ([`driver`], docs/CLIENT-DRIVERS.md);
//!   [`reference`](mod@reference) is the kit's own client, with deliberate bugs; [`collect`] is
//!   how it collects a run.
//! - [`app`] is app mode: no driver; an app runs one prompt, and its output and exit are judged.
//! - [`robust`] is the robustness suite: what the contract forbids a runtime but clients meet.
//! - Every scenario, of both suites, is in one table ([`scenario::SCENARIOS`]) with its layers,
//!   operations, judge and whether app mode runs it (its judge, on the app's run). Each scenario's judge (in `judges.rs`, those of
//!   the run scenarios in [`runs`]) turns the logs and results into the `client.*` checks'
//!   verdicts, and [`run`] into the suite's [`crate::suite::Report`].

pub mod after;
pub mod app;
mod app_judge;
pub mod backlog;
pub mod closing;
pub mod collect;
pub mod driver;
pub mod grandchild;
pub mod growth;
mod judges;
pub mod layers;
pub mod line_memory;
pub mod link;
pub mod log;
pub mod memory;
pub mod peer;
pub mod reference;
pub mod relay;
pub mod robust;
pub mod run;
pub mod runs;
pub mod scenario;
mod table;
pub mod turns;
mod verdicts;
