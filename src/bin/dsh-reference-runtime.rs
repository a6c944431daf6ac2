fn main() {
    // args_os: a non-UTF-8 argument is a usage error with a message, not a panic (exit 101).
    let args: Result<Vec<String>, _> = std::env::args_os()
        .skip(1)
        .map(std::ffi::OsString::into_string)
        .collect();
    let code = match args {
        Ok(args) => dsh_conformance::runtime::serve_stdio(&args),
        Err(bad) => {
            eprintln!("dsh-reference-runtime: argument {bad:?} is not UTF-8");
            eprint!("{}", dsh_conformance::runtime::USAGE);
            2
        }
    };
    std::process::exit(code);
}
