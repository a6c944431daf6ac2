//! Generated directives: an `arbitrary` [`Directive`] of the one directive language
//! ([`crate::directive`]), nested at most [`MAX_NEST`] deep, with every variant reachable —
//! `call:` included, aimed at the tools runtimes offer and at ones they do not.

use super::{Small, MAX_NEST};
use crate::directive::Directive;
use arbitrary::{Arbitrary, Result, Unstructured};

/// Tools a `call:` directive names: the ones runtimes offer, and one nobody does.
const CALLED_TOOLS: [&str; 4] = ["bash", "subagent", "read_image", "no_such_tool"];

impl<'a> Arbitrary<'a> for Directive {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        directive(u, 0)
    }
}

fn directive(u: &mut Unstructured<'_>, depth: usize) -> Result<Directive> {
    let nested = depth < MAX_NEST;
    Ok(match u.int_in_range(0u8..=13)? {
        0 => Directive::Reply(Small::arbitrary(u)?.0.trim_start().to_owned()),
        1 => Directive::MaxTokens,
        2 => Directive::Thinking,
        3 => Directive::Empty,
        4 if nested => Directive::Slow {
            secs: f64::from(u.int_in_range(0u8..=30)?) / 10.0,
            // `slow` followed by no directive replies with the text: an echo is never its tail.
            then: Box::new(match directive(u, depth + 1)? {
                Directive::Echo(t) => Directive::Reply(t.trim_start().to_owned()),
                d => d,
            }),
        },
        5 => Directive::Tool {
            command: match Option::<Small>::arbitrary(u)? {
                Some(c) if !c.0.trim().is_empty() => c.0.trim().to_owned(),
                _ => crate::directive::DEFAULT_TOOL_COMMAND.to_owned(),
            },
        },
        6 => Directive::Call {
            tool: match u.int_in_range(0..=CALLED_TOOLS.len())? {
                i if i < CALLED_TOOLS.len() => CALLED_TOOLS[i].to_owned(),
                _ => "t".to_owned() + &u.int_in_range(0u8..=9)?.to_string(),
            },
            input: match u.int_in_range(0u8..=3)? {
                0 => "{}".to_owned(),
                1 => serde_json::json!({"command": crate::directive::DEFAULT_TOOL_COMMAND})
                    .to_string(),
                2 => serde_json::json!({"prompt": Small::arbitrary(u)?.0}).to_string(),
                _ => serde_json::json!({"path": Small::arbitrary(u)?.0}).to_string(),
            },
        },
        7 if nested => Directive::Subagent {
            prompt: directive(u, depth + 1)?.to_string(),
        },
        8 => Directive::Error500,
        9 => Directive::Error400,
        10 => Directive::SseError,
        11 => Directive::Truncate,
        12 => Directive::Hang,
        _ => Directive::Echo(Small::arbitrary(u)?.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directive::parse_directive;

    #[test]
    fn generated_directives_mean_what_they_say() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0u32..4000 {
            let bytes: Vec<u8> = (0..64u32)
                .map(|i| (seed.wrapping_mul(2_654_435_761).wrapping_add(i * 40_503) >> 7) as u8)
                .collect();
            let Ok(d) = Directive::arbitrary(&mut Unstructured::new(&bytes)) else {
                continue;
            };
            seen.insert(d.label().split(['+', ':']).next().unwrap_or("").to_owned());
            if let Directive::Echo(t) = &d {
                // An echo may spell a directive by chance: its text is written as it is.
                assert_eq!(&d.to_string(), t);
            } else {
                assert_eq!(parse_directive(&d.to_string()), d, "{d}");
            }
        }
        assert!(seen.len() >= 13, "variants reached: {seen:?}");
    }
}
