'use strict';
// Loads this platform's addon: the package npm installed for it (an optional dependency of
// @scratchpad-dev/host per platform, chosen by its `os`, `cpu` and `libc`), or a
// `scratchpad.<platform>.node` beside this file (a development build). Nothing is downloaded.

const { existsSync } = require('node:fs');
const { join } = require('node:path');

// `cargo xtask dist` builds these; xtask/src/dist/targets.rs checks this table against its own.
const PACKAGES = {
  "linux-x64-gnu": "@scratchpad-dev/host-linux-x64-gnu",
  "linux-arm64-gnu": "@scratchpad-dev/host-linux-arm64-gnu",
  "win32-x64": "@scratchpad-dev/host-win32-x64",
  "darwin-x64": "@scratchpad-dev/host-darwin-x64",
  "darwin-arm64": "@scratchpad-dev/host-darwin-arm64",
};

/** `linux-x64-gnu`, `darwin-arm64`, …: this process's platform as the packages name it. */
function platform() {
  let name = `${process.platform}-${process.arch}`;
  if (process.platform === 'linux') {
    const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
    name += report?.header?.glibcVersionRuntime ? '-gnu' : '-musl';
  }
  return name;
}

function load() {
  const name = platform();
  const local = join(__dirname, `scratchpad.${name}.node`);
  if (existsSync(local)) return require(local);
  const pkg = PACKAGES[name];
  if (!pkg) {
    throw new Error(
      `@scratchpad-dev/host has no binary for ${name}; the platforms with one: ${Object.keys(PACKAGES).join(', ')}`,
    );
  }
  try {
    return require(pkg);
  } catch (error) {
    if (error && error.code === 'MODULE_NOT_FOUND' && String(error.message).includes(pkg)) {
      throw new Error(
        `@scratchpad-dev/host needs ${pkg} for ${name}, which is not installed ` +
          '(installs that omit optional dependencies leave it out); reinstall @scratchpad-dev/host with them',
      );
    }
    throw error;
  }
}

module.exports = load();
