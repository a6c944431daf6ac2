//! How a client's time on one long line grows with the line's length (docs/CONTRACT.md#s15.2,
//! issue 37 item 7): when the `long-lines` run gets no result within its bound, the scenario runs
//! again with shorter lines, doubling from [`FIRST`] while a run takes under a quarter of the
//! bound, and the failure says how the time grew (linear, or not) instead of a bare timeout. The
//! fit is sans-IO ([`growth`]); the runs are the caller's ([`measure`]).

use super::after::After;
use super::driver::Outcome;
use super::layers::{LongLines, Stack};
use super::scenario::{Observation, Scenario};
use crate::suite::verdict::Verdict;
use std::time::Duration;

/// The first length measured.
pub const FIRST: usize = 256 << 10;

/// What the measurements say.
#[derive(Debug, Clone, PartialEq)]
pub struct Growth {
    /// (line length in bytes, the run's time), in order of length.
    pub samples: Vec<(usize, Duration)>,
    /// The power of the length the time grows with, from the two longest lines measured.
    pub exponent: Option<f64>,
}

/// The growth of `samples` (at least two with a time over 50 ms, below which the turn's own
/// cost hides the line's).
pub fn growth(samples: Vec<(usize, Duration)>) -> Growth {
    let timed: Vec<_> = samples
        .iter()
        .filter(|(_, t)| *t > Duration::from_millis(50))
        .collect();
    let exponent = match timed[..] {
        [.., (s1, t1), (s2, t2)] => {
            Some((t2.as_secs_f64() / t1.as_secs_f64()).ln() / (*s2 as f64 / *s1 as f64).ln())
        }
        _ => None,
    };
    Growth { samples, exponent }
}

impl Growth {
    /// One sentence: the times, and what kind of growth they show.
    pub fn describe(&self) -> String {
        if self.samples.is_empty() {
            return format!("even a line of {} got no result", size(FIRST));
        }
        let times: Vec<String> = (self.samples.iter())
            .map(|(s, t)| format!("{} {:.2} s", size(*s), t.as_secs_f64()))
            .collect();
        let kind = match self.exponent {
            None => "too quick to tell how it grows".to_owned(),
            Some(e) if e < 1.3 => format!("the time grows linearly with the length (power {e:.1})"),
            Some(e) if e < 1.7 => format!("the time grows faster than the length (power {e:.1})"),
            Some(e) if e < 2.5 => format!(
                "the time grows as the square of the length (power {e:.1}): the line is read in quadratic time"
            ),
            Some(e) => format!(
                "the time grows faster than the square of the length (power {e:.1}): each doubling of the line costs {:.0} times the time",
                2f64.powf(e)
            ),
        };
        format!("a line of {}: {kind}", times.join(", "))
    }
}

fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// The scenario that measures one length: the long-lines scenario's operations, a shorter line.
macro_rules! probe {
    ($bytes:expr) => {
        Scenario {
            name: "long-lines",
            checks: &[],
            layers: || Stack(vec![Box::new(LongLines { bytes: $bytes })]),
            ops: super::scenario::long_lines_ops,
            judge: |_| Vec::new(),
            after: After::Nothing,
            suite: super::run::Suite::Contract,
            app: super::scenario::App::LeftOut("a growth probe"),
        }
    };
}

/// The lengths measured, doubling from [`FIRST`].
const PROBES: [Scenario; 8] = [
    probe!(FIRST),
    probe!(FIRST << 1),
    probe!(FIRST << 2),
    probe!(FIRST << 3),
    probe!(FIRST << 4),
    probe!(FIRST << 5),
    probe!(FIRST << 6),
    probe!(FIRST << 7),
];

/// The failing `long-lines` verdict `v` with the growth measured.
pub fn explained(v: Verdict, g: &Growth) -> Verdict {
    match v {
        Verdict::Fail(mut f) => {
            f.reason = format!("{}; measured on shorter lines, {}", f.reason, g.describe());
            Verdict::Fail(f)
        }
        other => other,
    }
}

/// Runs the scenario at doubling lengths from [`FIRST`] while a run takes under a quarter of
/// `bound` and completes; `run` runs one scenario (`None`: the run was stopped).
pub fn measure(
    bound: Duration,
    mut run: impl FnMut(&Scenario) -> Result<Option<Observation>, String>,
) -> Result<Option<Growth>, String> {
    let mut samples = Vec::new();
    for (i, p) in PROBES.iter().enumerate() {
        let Some(o) = run(p)? else {
            return Ok(None);
        };
        let Some((_, Outcome::Ok(_), took)) = o.ops.get(1) else {
            break;
        };
        samples.push((FIRST << i, *took));
        if *took * 4 > bound {
            break;
        }
    }
    Ok(Some(growth(samples)))
}

#[cfg(test)]
mod tests {
    use super::super::driver::Op;
    use super::super::scenario::run;
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn a_quadratic_reader_shows_a_power_near_two_a_linear_one_near_one() {
        let quad = growth(vec![
            (1 << 20, ms(170)),
            (2 << 20, ms(500)),
            (4 << 20, ms(1800)),
        ]);
        let e = quad.exponent.unwrap();
        assert!((1.8..2.0).contains(&e), "{e}");
        let d = quad.describe();
        assert!(
            d.starts_with("a line of 1 MiB 0.17 s, 2 MiB 0.50 s, 4 MiB 1.80 s:"),
            "{d}"
        );
        assert!(d.contains("quadratic"), "{d}");
        let lin = growth(vec![(8 << 20, ms(100)), (16 << 20, ms(210))]);
        assert!(lin.describe().contains("linearly"), "{}", lin.describe());
        // Past the square (a buffer that outgrows the caches): said as such, not as quadratic.
        let steep = growth(vec![(2 << 20, ms(240)), (4 << 20, ms(9970))]);
        let d = steep.describe();
        assert!(
            d.contains("faster than the square") && d.contains("costs 42 times"),
            "{d}"
        );
    }

    #[test]
    fn runs_too_quick_to_time_tell_nothing() {
        let g = growth(vec![(FIRST, ms(5)), (2 * FIRST, ms(60))]);
        assert_eq!(g.exponent, None);
        assert!(g.describe().ends_with("too quick to tell how it grows"));
    }

    #[test]
    fn lengths_double_until_a_run_takes_a_quarter_of_the_bound() {
        let mut asked = 0;
        let g = measure(Duration::from_secs(4), |s| {
            let bytes = FIRST << asked;
            asked += 1;
            assert_eq!(s.name, "long-lines");
            let took = ms((bytes >> 10) as u64 * (bytes >> 18) as u64);
            let ops = vec![
                (Op::Start, Outcome::Ok(serde_json::json!({})), ms(1)),
                (run("s1", "x"), Outcome::Ok(serde_json::json!({})), took),
            ];
            Ok(Some(Observation {
                ops,
                ..Default::default()
            }))
        })
        .unwrap()
        .unwrap();
        // 256 KiB: 256 ms; 512 KiB: 1024 ms, over a quarter of 4 s: the last one.
        assert_eq!(asked, 2);
        assert_eq!(g.samples, [(FIRST, ms(256)), (2 * FIRST, ms(1024))]);
        assert!((g.exponent.unwrap() - 2.0).abs() < 0.01);
        let v = explained(crate::client::judges::fail("no result"), &g);
        assert!(v
            .summary()
            .starts_with("no result; measured on shorter lines, a line of 256 KiB"));
    }
}
