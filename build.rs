//! Embeds the conformance checks' traces (`fixtures/checks/*.trace`) into the library, so the
//! `dsh-conformance` binary runs its suite from any directory.
//!
//! Also: `DSH_ALLOW_OFFLINE=1` sets `cfg(dsh_offline)`, under which the PyPI-backed interop tests
//! are compiled as ignored (tests/support/pypi.rs), so that an offline `cargo test` counts them as
//! ignored in its summary instead of failing them; a test refuses that mode under CI.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    println!("cargo::rerun-if-env-changed=DSH_ALLOW_OFFLINE");
    println!("cargo::rustc-check-cfg=cfg(dsh_offline)");
    if std::env::var("DSH_ALLOW_OFFLINE").is_ok_and(|v| v == "1") {
        println!("cargo::rustc-cfg=dsh_offline");
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("checks");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "trace"));
    files.sort();
    let mut out = String::from("/// `(file name, text)` of every check trace.\npub static CHECK_TRACES: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().unwrap().to_string_lossy();
        let _ = writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            f.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("check_traces.rs");
    std::fs::write(dest, out).unwrap();
}
