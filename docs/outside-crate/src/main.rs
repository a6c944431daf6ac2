//! The runtime this crate builds: your own code goes here. It serves the kit's reference runtime,
//! standing in for it.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(dsh_conformance::runtime::serve_stdio(&args));
}
