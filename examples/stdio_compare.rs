//! Side-by-side stdio figures for the built-in reference runtime and the real runtime, measured in
//! one run (issue 6; run it with `bash benches/stdio.sh`, which builds and installs what it needs).
//!
//! `stdio_compare --ours <dsh-conformance> [--real <runtime executable>] [--quick] [--cheap-only]
//! [--cheap-runs K] [--base <dsh-conformance>]`
//! (`--cheap-only`: cold start and cheap frames only; `--cheap-runs K`: the cheap frames workload K
//! times, ours and the real runtime (and `--base`, another build of ours) taking turns, medians
//! reported, so a load that changes during the run hits every runtime alike)
//!
//! Workloads (see `dsh_conformance::loadgen`): cold start to the initialize reply, cheap frames/s,
//! echo prompts/s with full event streams, RSS at 10k and 100k sessions; then the suite cost:
//! `check` in this process (so the kit's CPU and the runtimes' CPU can be told apart with
//! getrusage SELF vs CHILDREN) against each runtime with --jobs 1 and 2. The real runtime gets
//! the model stub (started here, so its CPU counts on the kit's side).

use dsh_conformance::loadgen::{self, Target};
use dsh_conformance::model_stub::ModelStub;
use dsh_conformance::runner::CommandSpec;
use dsh_conformance::suite;
use std::time::{Duration, Instant};

struct Args {
    ours: String,
    real: Option<String>,
    quick: bool,
    cheap_only: bool,
    cheap_runs: usize,
    base: Option<String>,
}

fn args() -> Args {
    let mut a = Args {
        ours: String::new(),
        real: None,
        quick: false,
        cheap_only: false,
        cheap_runs: 1,
        base: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--ours" => a.ours = it.next().expect("--ours PATH"),
            "--real" => a.real = it.next().filter(|s| !s.is_empty()),
            "--quick" => a.quick = true,
            "--cheap-only" => a.cheap_only = true,
            "--cheap-runs" => {
                a.cheap_runs = it
                    .next()
                    .and_then(|k| k.parse().ok())
                    .filter(|k| *k > 0)
                    .expect("--cheap-runs K (K ≥ 1)")
            }
            "--base" => a.base = Some(it.next().expect("--base PATH")),
            other => panic!("unknown argument {other:?}"),
        }
    }
    assert!(
        !a.ours.is_empty(),
        "--ours <dsh-conformance executable> is required"
    );
    a.ours = abs(&a.ours);
    a.real = a.real.as_deref().map(abs);
    a.base = a.base.as_deref().map(abs);
    a
}

/// CPU seconds (user + system) of this process and of its reaped children.
fn cpu() -> (f64, f64) {
    let get = |who| {
        // SAFETY: getrusage fills the zeroed struct we pass.
        let mut r: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut r) };
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        s(r.ru_utime) + s(r.ru_stime)
    };
    (get(libc::RUSAGE_SELF), get(libc::RUSAGE_CHILDREN))
}

/// One figure per runtime; `higher` says which direction is better (for the ratio's wording).
struct Row {
    name: String,
    ours: Result<f64, String>,
    real: Option<Result<f64, String>>,
    unit: &'static str,
}

fn fmt(v: &Result<f64, String>, unit: &str) -> String {
    match v {
        Ok(x) if unit == "ms" => format!("{x:.2} {unit}"),
        Ok(x) if unit == "MB" => format!("{x:.1} {unit}"),
        Ok(x) => format!("{x:.0} {unit}"),
        Err(e) => format!("n/a ({e})"),
    }
}

/// The canonical path (every runtime is started in its own fresh working directory).
fn abs(p: &str) -> String {
    std::fs::canonicalize(p)
        .unwrap_or_else(|e| panic!("{p}: {e}"))
        .display()
        .to_string()
}

/// The median of K figures (the first error, if any failed).
fn median(v: Vec<Result<f64, String>>) -> Result<f64, String> {
    let mut ok = Vec::new();
    for x in v {
        ok.push(x?);
    }
    ok.sort_by(f64::total_cmp);
    ok.get(ok.len() / 2)
        .copied()
        .ok_or_else(|| "no runs".to_string())
}

/// A suite target: label, command, environment.
type SuiteTarget = (&'static str, CommandSpec, Vec<(String, String)>);

fn main() {
    let a = args();
    let stub = ModelStub::start().expect("start the model stub");
    let ours = Target {
        cmd: CommandSpec::new(&a.ours)
            .arg("runtime")
            .arg("--profile")
            .arg("sdk"),
        env: Vec::new(),
        timeout: Duration::from_secs(120),
    };
    let real = a.real.as_ref().map(|exe| Target {
        cmd: CommandSpec::new(exe).arg("--profile").arg("sdk"),
        env: stub.env(),
        timeout: Duration::from_secs(120),
    });
    let q = a.quick;
    let (frames, prompts, real_prompts) = if q {
        (20_000, 2_000, 100)
    } else {
        (200_000, 20_000, 400)
    };
    let (cold_ours, cold_real) = if q { (5, 2) } else { (21, 5) };
    let big = if q { 20_000 } else { 100_000 };
    let real_budget = Duration::from_secs(if q { 10 } else { 40 });
    println!(
        "stdio comparison ({}; load average at start: {})",
        if q { "quick" } else { "full" },
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    if real.is_none() {
        println!("real runtime: not available (see the message above); measuring ours only");
    }
    let mut rows: Vec<Row> = Vec::new();
    let both = |f: &dyn Fn(&Target, bool) -> Result<f64, String>| -> (Result<f64, String>, Option<Result<f64, String>>) {
        (f(&ours, false), real.as_ref().map(|t| f(t, true)))
    };
    let (o, r) = both(&|t, is_real| {
        loadgen::cold_start(t, if is_real { cold_real } else { cold_ours })
            .map(|d| d.as_secs_f64() * 1e3)
            .map_err(|e| e.to_string())
    });
    rows.push(Row {
        name: format!("cold start → initialize (median of {cold_ours}/{cold_real})"),
        ours: o,
        real: r,
        unit: "ms",
    });
    let base = a.base.as_ref().map(|exe| Target {
        cmd: CommandSpec::new(exe)
            .arg("runtime")
            .arg("--profile")
            .arg("sdk"),
        env: Vec::new(),
        timeout: Duration::from_secs(120),
    });
    let cheap = |t: &Target| loadgen::cheap_frames(t, frames).map_err(|e| e.to_string());
    let (mut os, mut rs, mut bs) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..a.cheap_runs {
        os.push(cheap(&ours));
        if let Some(t) = &real {
            rs.push(cheap(t));
        }
        if let Some(t) = &base {
            bs.push(cheap(t));
        }
    }
    let runs = match a.cheap_runs {
        1 => String::new(),
        k => format!(", median of {k}"),
    };
    let real_cheap = real.as_ref().map(|_| median(rs));
    rows.push(Row {
        name: format!("cheap frames/s ({frames} probe/x{runs})"),
        ours: median(os),
        real: real_cheap.clone(),
        unit: "/s",
    });
    if base.is_some() {
        rows.push(Row {
            name: format!("  the same, --base build{runs}"),
            ours: median(bs),
            real: real_cheap,
            unit: "/s",
        });
    }
    if !a.cheap_only {
        let (o, r) = both(&|t, is_real| {
            loadgen::echo_prompts(t, if is_real { real_prompts } else { prompts }, 100)
                .map(|(r, _)| r)
                .map_err(|e| e.to_string())
        });
        rows.push(Row {
            name: format!("echo prompts/s ({prompts}/{real_prompts} over 100 sessions)"),
            ours: o,
            real: r,
            unit: "/s",
        });
    }
    let sizes: &[usize] = if a.cheap_only {
        &[]
    } else {
        &[1_000, 10_000, big]
    };
    for &n in sizes {
        let (o, r) = both(&|t, is_real| {
            let budget = if is_real { real_budget } else { t.timeout };
            match loadgen::sessions_rss_bounded(t, n, budget) {
                Ok((kib, ended)) if ended == n => Ok(kib as f64 / 1024.0),
                Ok((kib, ended)) => Err(format!(
                    "{:.1} MB after {ended} of {n} turns in {}s",
                    kib as f64 / 1024.0,
                    budget.as_secs()
                )),
                Err(e) => Err(e.to_string()),
            }
        });
        rows.push(Row {
            name: format!("RSS with {n} sessions"),
            ours: o,
            real: r,
            unit: "MB",
        });
    }
    println!(
        "\n{:<46} {:>16} {:>16} {:>10}",
        "workload", "ours", "real", "ours/real"
    );
    for r in &rows {
        let ratio = match (&r.ours, &r.real) {
            (Ok(o), Some(Ok(x))) if *x > 0.0 && o / x >= 0.01 => format!("{:.2}×", o / x),
            (Ok(o), Some(Ok(x))) if *o > 0.0 => format!("1/{:.0}", x / o),
            _ => "-".into(),
        };
        let real = r
            .real
            .as_ref()
            .map(|v| fmt(v, r.unit))
            .unwrap_or_else(|| "-".into());
        println!(
            "{:<46} {:>16} {:>16} {:>10}",
            r.name,
            fmt(&r.ours, r.unit),
            real,
            ratio
        );
    }

    println!("(rates: higher is better; cold start and RSS: lower is better; 1/N = N times lower)");
    if a.cheap_only {
        return;
    }
    println!("\nsuite cost: `check` (all checks, edition current) run in this process");
    println!(
        "{:<34} {:>5} {:>9} {:>9} {:>9} {:>8} {:>8}  result",
        "runtime", "jobs", "wall s", "kit cpu", "rt cpu", "kit/wall", "kit/cpu"
    );
    let mut suites: Vec<SuiteTarget> = vec![(
        "built-in reference runtime",
        CommandSpec::from_argv(&[
            a.ours.clone(),
            "runtime".into(),
            "--edition".into(),
            "current".into(),
        ])
        .unwrap(),
        Vec::new(),
    )];
    if let Some(exe) = &a.real {
        suites.push((
            "real runtime (+ model stub)",
            CommandSpec::from_argv(&[exe.clone(), "--profile".into(), "sdk".into()]).unwrap(),
            stub.env(),
        ));
    }
    for (label, cmd, env) in &suites {
        for jobs in [1, 2] {
            let opts = suite::run::Options {
                jobs,
                env: env.clone(),
                ..Default::default()
            };
            let (s0, c0) = cpu();
            let t0 = Instant::now();
            let rep = suite::run::run(cmd, label, &opts);
            let wall = t0.elapsed().as_secs_f64();
            let (s1, c1) = cpu();
            let (kit, rt) = (s1 - s0, c1 - c0);
            let result = match rep {
                Ok(r) => {
                    let failed: Vec<&str> = r
                        .results
                        .iter()
                        .filter(|c| matches!(c.verdict, suite::Verdict::Fail(_)))
                        .map(|c| c.info.id.as_str())
                        .collect();
                    match failed.is_empty() {
                        true => r.summary_line(),
                        false => format!(
                            "{} [failed: {}]",
                            r.summary_line().trim(),
                            failed.join(", ")
                        ),
                    }
                }
                Err(e) => format!("error: {e}"),
            };
            println!(
                "{:<34} {:>5} {:>9.2} {:>9.2} {:>9.2} {:>7.0}% {:>7.0}%  {}",
                label,
                jobs,
                wall,
                kit,
                rt,
                100.0 * kit / wall,
                100.0 * kit / (kit + rt).max(1e-9),
                result.trim()
            );
        }
    }
}
