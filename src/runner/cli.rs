//! The `replay`, `record` and `import` subcommands as library functions: each takes the
//! arguments after the subcommand name and returns the process exit code (0 pass, 1 findings,
//! 2 usage or harness error). The `dsh-conformance` binary only dispatches to them.

use super::record::{diff_lines, header_of, record as record_run, RecordOptions};
use super::{CommandSpec, Options, Outcome};
use crate::trace::Trace;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Usage text of the three subcommands.
pub const USAGE: &str = "\
dsh-conformance replay [options] <trace-or-dir>... -- <cmd> [args...]
    Replays golden traces against a runtime; one PASS/FAIL line per case, a summary, exit 0/1/2.
    --edition E        only cases for edition E (current | 2026-08 | legacy); default current
    --frame-timeout D  default deadline of each expectation (e.g. 10s); a trace's # timeout: wins
    --case-timeout D   bound on one case (default 120s)
    --max-line BYTES   longest stdout line accepted (default 64 MiB)
    --env NAME=VALUE   extra environment for the runtime (repeatable)
    --provides CAP     a capability the runtime has (e.g. model); cases requiring others are SKIPped
    --model-stub       start the scripted model stub on 127.0.0.1, pass its DEEPSEEK_* environment,
                       and provide `model` (for real runtimes)
    --keep-dirs        keep each case's temporary cwd and DSH_HOME
    --bless            rewrite each trace's expectations from the runtime's output, showing the diff
dsh-conformance record --script <file> [-o <out.trace>] [--settle D] -- <cmd> [args...]
    Runs the sends of a script and writes the trace of what the runtime answered.
dsh-conformance import <raw.jsonl>... [-o <dir>]
    Converts raw transcripts (the layouts of fixtures/real-0.2.1rc2/raw/) into traces (stdout, or <dir>/<stem>.trace).
";

fn split_cmd(args: &[String]) -> (Vec<String>, Option<CommandSpec>) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (args[..i].to_vec(), CommandSpec::from_argv(&args[i + 1..])),
        None => (args.to_vec(), None),
    }
}

fn duration(s: &str) -> Result<Duration, String> {
    let t = Trace::parse(&format!("# timeout: {s}"), "argument").map_err(|e| e.msg)?;
    t.meta.timeout.ok_or_else(|| format!("bad duration `{s}`"))
}

fn usage_error(msg: &str) -> i32 {
    eprintln!("dsh-conformance: {msg}\n\n{USAGE}");
    2
}

/// Collects `.trace` files from files and directories (sorted within each directory).
pub fn collect_traces(paths: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        let p = Path::new(p);
        if p.is_dir() {
            let mut stack = vec![p.to_path_buf()];
            let mut found = Vec::new();
            while let Some(d) = stack.pop() {
                let rd = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
                for e in rd.flatten() {
                    let q = e.path();
                    if q.is_dir() {
                        stack.push(q);
                    } else if q.extension().is_some_and(|x| x == "trace") {
                        found.push(q);
                    }
                }
            }
            found.sort();
            out.extend(found);
        } else if p.is_file() {
            out.push(p.to_path_buf());
        } else {
            return Err(format!("{}: no such file or directory", p.display()));
        }
    }
    Ok(out)
}

/// `dsh-conformance replay …`.
pub fn replay(args: &[String]) -> i32 {
    let (args, cmd) = split_cmd(args);
    let Some(cmd) = cmd else {
        return usage_error("replay needs `-- <cmd> [args...]`");
    };
    let mut opts = Options::default();
    let mut edition = crate::edition::Edition::Current;
    let mut provides: Vec<String> = Vec::new();
    let mut bless = false;
    let mut model_stub = false;
    let mut paths = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value"));
        let r: Result<(), String> = (|| {
            match a.as_str() {
                "--edition" => {
                    edition = val("--edition")?
                        .parse()
                        .map_err(|e| format!("--edition: {e}"))?
                }
                "--frame-timeout" => opts.frame_timeout = duration(&val("--frame-timeout")?)?,
                "--case-timeout" => opts.case_timeout = duration(&val("--case-timeout")?)?,
                "--max-line" => {
                    opts.max_line = val("--max-line")?
                        .parse()
                        .map_err(|_| "--max-line needs a byte count")?
                }
                "--env" => {
                    let v = val("--env")?;
                    let (k, v) = v.split_once('=').ok_or("--env needs NAME=VALUE")?;
                    opts.env.push((k.to_owned(), v.to_owned()));
                }
                "--provides" => provides.push(val("--provides")?),
                "--keep-dirs" => opts.keep_dirs = true,
                "--model-stub" => model_stub = true,
                "--bless" => bless = true,
                s if s.starts_with("--") => return Err(format!("unknown option {s}")),
                s => paths.push(s.to_owned()),
            }
            Ok(())
        })();
        if let Err(e) = r {
            return usage_error(&e);
        }
    }
    if paths.is_empty() {
        return usage_error("replay needs at least one trace file or directory");
    }
    let files = match collect_traces(&paths) {
        Ok(f) => f,
        Err(e) => return usage_error(&e),
    };
    // Kept alive for the whole run; dropping it stops the server.
    let _stub = if model_stub {
        match crate::model_stub::ModelStub::start() {
            Ok(s) => {
                opts.env.extend(s.env());
                provides.push("model".into());
                Some(s)
            }
            Err(e) => {
                eprintln!("dsh-conformance: cannot start the model stub: {e}");
                return 2;
            }
        }
    } else {
        None
    };
    let (mut pass, mut fail, mut skip, mut broken) = (0, 0, 0, 0);
    let mut runnable = Vec::new();
    for f in &files {
        let trace = match Trace::load(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("ERROR {e}");
                broken += 1;
                continue;
            }
        };
        if !trace.applies_to(edition) {
            continue;
        }
        if let Some(r) = trace.meta.requires.iter().find(|r| !provides.contains(r)) {
            println!(
                "SKIP {} ({}): requires {r} (pass --provides {r})",
                trace.meta.case,
                f.display()
            );
            skip += 1;
            continue;
        }
        if bless {
            match bless_one(f, &trace, &cmd, &opts) {
                Ok(()) => pass += 1,
                Err(e) => {
                    eprintln!("ERROR blessing {}: {e}", f.display());
                    broken += 1;
                }
            }
            continue;
        }
        runnable.push(trace);
    }
    for r in super::replay_all(&runnable, &cmd, &opts) {
        print!("{r}");
        match r.outcome {
            Outcome::Pass => pass += 1,
            Outcome::Fail(_) => fail += 1,
            Outcome::Broken(_) | Outcome::Halted(_) => broken += 1,
        }
    }
    println!("{pass} passed, {fail} failed, {skip} skipped, {broken} errors");
    if broken > 0 {
        2
    } else if fail > 0 {
        1
    } else {
        0
    }
}

fn bless_one(path: &Path, trace: &Trace, cmd: &CommandSpec, opts: &Options) -> Result<(), String> {
    let old = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let ro = RecordOptions {
        env: opts.env.clone(),
        max_line: opts.max_line,
        ..RecordOptions::default()
    };
    let rec = record_run(trace, cmd, &ro)?;
    let new = rec.to_trace(&trace.meta.case, "", Some(header_of(&old)));
    let d = diff_lines(&old, &new);
    if d.is_empty() {
        println!("BLESS {}: unchanged", path.display());
        return Ok(());
    }
    println!("BLESS {}:\n{d}", path.display());
    std::fs::write(path, new).map_err(|e| e.to_string())
}

/// `dsh-conformance record --script <file> [-o out] -- <cmd>`.
pub fn record(args: &[String]) -> i32 {
    let (args, cmd) = split_cmd(args);
    let Some(cmd) = cmd else {
        return usage_error("record needs `-- <cmd> [args...]`");
    };
    let mut script = None;
    let mut out = None;
    let mut ro = RecordOptions::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match (a.as_str(), it.next()) {
            ("--script", Some(v)) => script = Some(v.clone()),
            ("-o" | "--output", Some(v)) => out = Some(v.clone()),
            ("--settle", Some(v)) => match duration(v) {
                Ok(d) => ro.settle = d,
                Err(e) => return usage_error(&e),
            },
            (a, _) => return usage_error(&format!("unexpected argument {a}")),
        }
    }
    let Some(script) = script else {
        return usage_error("record needs --script <file>");
    };
    let trace = match Trace::load(&script) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("dsh-conformance: {e}");
            return 2;
        }
    };
    let rec = match record_run(&trace, &cmd, &ro) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("dsh-conformance: {e}");
            return 2;
        }
    };
    let text = rec.to_trace(&trace.meta.case, &format!("recorded from `{cmd}`"), None);
    match out {
        Some(o) => {
            if let Err(e) = std::fs::write(&o, text) {
                eprintln!("dsh-conformance: {o}: {e}");
                return 2;
            }
        }
        None => print!("{text}"),
    }
    0
}

/// `dsh-conformance import <raw.jsonl>... [-o dir]`.
pub fn import(args: &[String]) -> i32 {
    let mut out_dir = None;
    let mut files = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" | "--output" => match it.next() {
                Some(d) => out_dir = Some(PathBuf::from(d)),
                None => return usage_error("-o needs a directory"),
            },
            s => files.push(PathBuf::from(s)),
        }
    }
    if files.is_empty() {
        return usage_error("import needs at least one transcript");
    }
    let mut code = 0;
    for f in files {
        let stem = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = match std::fs::read_to_string(&f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("dsh-conformance: {}: {e}", f.display());
                code = 2;
                continue;
            }
        };
        let source = format!(
            "{}/{}",
            f.parent()
                .and_then(|p| p.file_name())
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            f.file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
        match crate::trace::import::import(&text, &stem, &source) {
            Ok(t) => match &out_dir {
                Some(d) => {
                    let p = d.join(format!("{stem}.trace"));
                    if let Err(e) = std::fs::write(&p, t) {
                        eprintln!("dsh-conformance: {}: {e}", p.display());
                        code = 2;
                    }
                }
                None => print!("{t}"),
            },
            Err(e) => {
                eprintln!("dsh-conformance: {}: {e}", f.display());
                code = 2;
            }
        }
    }
    code
}
