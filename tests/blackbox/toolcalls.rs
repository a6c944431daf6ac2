//! `fuzz --profile P`: generated tool calls run on the reference runtime under both profiles.

use super::{classes, options, target, REFERENCE};
use dsh_conformance::blackbox::sequence::{initialize, End, Sequence};
use dsh_conformance::blackbox::toolcall::{self, Kind, Workspace};
use dsh_conformance::blackbox::{self, exec, gen::Rng};
use dsh_conformance::runner::CommandSpec;
use dsh_conformance::runtime::Profile;

fn under(p: &str) -> CommandSpec {
    CommandSpec::new(REFERENCE).arg("--profile").arg(p)
}

/// A sequence that calls `calls` (tool, kind) in the tool session, in order.
fn calling(calls: &[(&str, Kind)]) -> Sequence {
    let mut rng = Rng::new(1);
    let mut ws = Workspace::default();
    let mut ops = vec![initialize(), toolcall::enter_workspace()];
    for (n, (tool, kind)) in calls.iter().enumerate() {
        let c = toolcall::call(tool, *kind, &mut rng, &mut ws);
        ops.push(toolcall::prompt(c.directive, n));
    }
    Sequence {
        ops,
        end: End::Shutdown,
    }
}

#[test]
fn a_sequence_of_valid_and_invalid_tool_calls_runs_each_call_under_both_profiles() {
    for (p, tools) in [
        ("sdk-minimal", ["bash", "working_directory", "read_image"]),
        ("sdk", ["write", "read", "bash"]),
    ] {
        let mut calls: Vec<(&str, Kind)> = tools.iter().map(|t| (*t, Kind::Valid)).collect();
        calls.extend([
            (tools[0], Kind::Missing),
            (tools[1], Kind::WrongType),
            (tools[2], Kind::Outside),
            ("no_such_tool", Kind::Unoffered),
        ]);
        let seq = calling(&calls);
        let rules = dsh_conformance::rules::Profile::for_edition(Default::default(), false);
        let r = exec::run_sequence(&seq, &target(under(p)), &rules, Default::default());
        assert!(r.findings.is_empty(), "{p}: {:?}", r.findings);
        let events = &r.observed.events[toolcall::TOOL_SESSION];
        let count = |ty: &str| {
            events
                .iter()
                .filter(|e| blackbox::events::shown(e) == ty)
                .count()
        };
        let (results, turns) = (count("tool/result"), count("turn/end"));
        // Every call is a turn whose tool result the model sees (an unoffered tool too).
        assert_eq!(
            (results, turns),
            (calls.len(), calls.len()),
            "{p}: {events:?}"
        );
    }
}

#[test]
fn the_fuzzer_calls_the_tools_of_either_profile_and_the_reference_breaks_no_rule() {
    for (p, profile) in [("sdk-minimal", Profile::SdkMinimal), ("sdk", Profile::Sdk)] {
        let mut o = options(under(p), 21, 24);
        o.tools = Some(profile);
        o.jobs = 4;
        let s = blackbox::run(&o);
        assert_eq!(s.sequences, 24);
        assert!(
            s.findings.is_empty(),
            "{p}: {:?}\n{}",
            classes(&s),
            s.human()
        );
    }
}
