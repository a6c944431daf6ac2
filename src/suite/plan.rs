//! The run's plan, made from the preflight's boot before any check runs (sans-IO): how many
//! runtime processes the selected checks start, the least time their boots take on this machine,
//! and the budget the run gets. A runtime that takes seconds to boot spends most of a run
//! booting; the default budget is for judging, so it grows by that floor, and a budget the boots
//! alone exceed is said at the start, not found at the end.

use super::preflight::Boot;
use std::time::Duration;

/// What the run expects of itself ([`plan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Runtime processes the selected checks start (one per case on a fresh process, one per
    /// shared process: [`super::share::processes_for`]).
    pub processes: usize,
    /// The least wall time their boots take on this machine (a lower bound, not a forecast).
    pub boots: Duration,
    /// The run's budget, from its start ([`Budget`]); `None`: no bound.
    pub budget: Option<Duration>,
}

/// The whole-run bound asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Budget {
    /// No bound.
    #[default]
    None,
    /// Exactly this long (`--budget D`).
    Fixed(Duration),
    /// This long for judging, plus the plan's boot floor (`check`'s default).
    PlusBoots(Duration),
}

impl Budget {
    /// The bound before the boot is known (the preflight's own).
    pub fn before_plan(self) -> Option<Duration> {
        match self {
            Budget::None => None,
            Budget::Fixed(d) | Budget::PlusBoots(d) => Some(d),
        }
    }
}

/// Where the machine's time goes: `jobs` workers, each with `spares` processes booting ahead of
/// its cases, on `cores` CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workers {
    /// Checks run at once.
    pub jobs: usize,
    /// Processes each job boots ahead.
    pub spares: usize,
    /// CPUs of the machine.
    pub cores: usize,
}

/// The plan for `processes` starts of a runtime that booted in `boot`. The floor is the larger
/// of two: the boots' CPU time spread over the cores, and their wall time spread over the jobs
/// and the spares each job boots at once.
pub fn plan(processes: usize, boot: Boot, w: Workers, budget: Budget) -> Plan {
    let n = processes as u32;
    let by_cpu = boot.cpu.unwrap_or_default() * n / w.cores.max(1) as u32;
    let lanes = (w.jobs.max(1) * (1 + w.spares)) as u32;
    let boots = by_cpu.max(boot.wall * n / lanes);
    let budget = match budget {
        Budget::None => None,
        Budget::Fixed(d) => Some(d),
        Budget::PlusBoots(d) => Some(d + boots),
    };
    Plan {
        processes,
        boots,
        budget,
    }
}

impl Plan {
    /// Why the run cannot finish in its budget, when its boots alone take longer.
    pub fn wont_fit(&self) -> Option<String> {
        let budget = self.budget?;
        (self.boots > budget).then(|| {
            format!(
                "this run cannot finish in its budget: its {} runtime processes take at least {:.0} s to boot here, and --budget is {} s; raise --budget (or leave it out: the default grows with the boot), or select fewer checks",
                self.processes,
                self.boots.as_secs_f64(),
                budget.as_secs_f64()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    fn boot(wall: u64, cpu: Option<u64>) -> Boot {
        Boot {
            wall: Duration::from_millis(wall),
            cpu: cpu.map(Duration::from_millis),
        }
    }

    const TWO: Workers = Workers {
        jobs: 2,
        spares: 0,
        cores: 2,
    };

    #[test]
    fn a_busy_boot_is_bounded_by_the_cores_an_idle_one_by_the_lanes() {
        // 1.4 s of CPU in a 1.7 s boot, 60 times on 2 cores: 42 s of CPU per core; the wall
        // spread over 2 jobs is 51 s, the larger.
        let p = plan(60, boot(1700, Some(1400)), TWO, Budget::None);
        assert_eq!(p.boots, 51 * S);
        // A sleeping wrapper: 5 s of wall, no CPU; 8 spares per job make 18 lanes.
        let w = Workers { spares: 8, ..TWO };
        let p = plan(72, boot(5000, Some(10)), w, Budget::None);
        assert_eq!(p.boots, 20 * S);
        // Four cores for a CPU-bound boot with one job: the wall bound (one lane) wins.
        let w = Workers {
            jobs: 1,
            cores: 4,
            spares: 0,
        };
        assert_eq!(
            plan(10, boot(1000, Some(1000)), w, Budget::None).boots,
            10 * S
        );
    }

    #[test]
    fn the_default_budget_grows_by_the_boots_a_given_one_does_not() {
        let b = boot(2000, Some(2000));
        let grown = plan(60, b, TWO, Budget::PlusBoots(300 * S));
        assert_eq!(grown.budget, Some(360 * S));
        assert_eq!(grown.wont_fit(), None);
        let fixed = plan(60, b, TWO, Budget::Fixed(30 * S));
        assert_eq!(fixed.budget, Some(30 * S));
        let why = fixed.wont_fit().unwrap();
        assert!(
            why.contains("60 runtime processes take at least 60 s"),
            "{why}"
        );
        assert_eq!(plan(60, b, TWO, Budget::Fixed(61 * S)).wont_fit(), None);
        assert_eq!(plan(60, b, TWO, Budget::None).budget, None);
    }
}
