"use strict";
// Runs one of the kit's binaries from the platform package npm installed with this one (esbuild's
// and biome's model: each platform package is an optional dependency with `os`/`cpu` fields, so
// npm installs only the one for this machine). Standard library only.
const { spawn } = require("child_process");
const tty = require("tty");
// "<process.platform>-<process.arch>" → platform package, written by packaging/npm/build.js from
// packaging/targets.json.
const platforms = require("./platforms.json");

module.exports = function launch(name) {
  const key = `${process.platform}-${process.arch}`;
  const pkg = platforms[key];
  if (!pkg) {
    console.error(`${name}: no binary for ${key}; built for: ${Object.keys(platforms).join(", ")}`);
    process.exit(1);
  }
  const exe = process.platform === "win32" ? `${name}.exe` : name;
  let bin;
  try {
    bin = require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    console.error(
      `${name}: ${pkg} is not installed (npm installs it as an optional dependency: ` +
        `reinstall without --omit=optional / --no-optional)`
    );
    process.exit(1);
  }
  const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
  // A signal sent to this launcher's pid alone (a runner stopping its runtime, `kill`, a check
  // that sends SIGINT) would otherwise leave the binary running: pass it on, and let the binary
  // decide its exit code. Not SIGINT from a terminal: Ctrl-C reaches the whole foreground process
  // group, the binary included, and `check` takes a second SIGINT as "quit at once, skip the
  // cleanup". With a terminal on stdio the launcher only outlives SIGINT, waiting for the binary.
  const onTerminal = [0, 1, 2].some((fd) => tty.isatty(fd));
  const forward = (sig) => {
    if (!(sig === "SIGINT" && onTerminal)) child.kill(sig);
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const sig of signals) process.on(sig, forward);
  child.on("error", (err) => {
    console.error(`${name}: cannot run ${bin}: ${err.message}`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      // Die of the same signal, so that the caller sees what the binary's caller would have.
      for (const sig of signals) process.removeListener(sig, forward);
      process.kill(process.pid, signal);
    } else {
      process.exit(code);
    }
  });
};
