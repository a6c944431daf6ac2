#!/usr/bin/env node
// Stages the npm packages from packaging/targets.json and the templates next to this script:
// the main package `dsh-conformance` (the launcher; each platform package an optional
// dependency) and one package per target carrying its two binaries. .ci/dist packs them.
//
// Usage: node packaging/npm/build.js <version> <binaries dir> <out dir>
//   <binaries dir>/<rust target triple>/ holds each target's dsh-conformance and
//   dsh-reference-runtime (.exe on win32); <out dir>/<package dir>/ is written for each package.
"use strict";
const fs = require("fs");
const path = require("path");

const [version, binaries, out] = process.argv.slice(2);
if (!out) {
  console.error("usage: build.js <version> <binaries dir> <out dir>");
  process.exit(2);
}
const here = __dirname;
const repo = path.join(here, "..", "..");
const { targets } = JSON.parse(fs.readFileSync(path.join(here, "..", "targets.json"), "utf8"));
const readJson = (p) => JSON.parse(fs.readFileSync(p, "utf8"));
const writeJson = (p, v) => fs.writeFileSync(p, JSON.stringify(v, null, 2) + "\n");
const licences = ["LICENSE-MIT", "LICENSE-APACHE"];

fs.rmSync(out, { recursive: true, force: true });
const main = path.join(out, "dsh-conformance");
fs.cpSync(path.join(here, "dsh-conformance"), main, { recursive: true });
for (const f of ["README.md", ...licences]) fs.copyFileSync(path.join(repo, f), path.join(main, f));
const pkg = readJson(path.join(main, "package.json"));
pkg.version = version;
// Pinned to the same version: the launcher and the binaries are released together.
pkg.optionalDependencies = Object.fromEntries(targets.map((t) => [t.npm, version]));
writeJson(path.join(main, "package.json"), pkg);
// The launcher's lookup: "<process.platform>-<process.arch>" → package.
writeJson(
  path.join(main, "platforms.json"),
  Object.fromEntries(targets.map((t) => [`${t.os}-${t.cpu}`, t.npm]))
);

for (const t of targets) {
  // "@dsh-conformance/cli-linux-x64" → "dsh-conformance-cli-linux-x64"
  const dir = path.join(out, t.npm.replace(/^@/, "").replace("/", "-"));
  fs.mkdirSync(path.join(dir, "bin"), { recursive: true });
  const tpl = path.join(here, "platform");
  fs.copyFileSync(path.join(tpl, "README.md"), path.join(dir, "README.md"));
  for (const f of licences) fs.copyFileSync(path.join(repo, f), path.join(dir, f));
  const p = readJson(path.join(tpl, "package.json"));
  Object.assign(p, { name: t.npm, version, os: [t.os], cpu: [t.cpu] });
  writeJson(path.join(dir, "package.json"), p);
  const exe = t.os === "win32" ? ".exe" : "";
  for (const name of ["dsh-conformance", "dsh-reference-runtime"]) {
    const to = path.join(dir, "bin", name + exe);
    fs.copyFileSync(path.join(binaries, t.rust, name + exe), to);
    fs.chmodSync(to, 0o755);
  }
}
console.log(fs.readdirSync(out).map((d) => path.join(out, d)).join("\n"));
