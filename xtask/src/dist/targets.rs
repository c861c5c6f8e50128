//! The platforms `cargo xtask dist` builds for, and what each is called by every packaging
//! system: one table, so the binary, the npm packages and the wheels agree.
//!
//! Linux binaries link glibc 2.17 (through zig, as `maturin --zig` links them): a dynamic
//! glibc binary that runs on every glibc distribution since 2014 (CentOS 7, Debian 8, Ubuntu
//! 14.04 and later), links the same libc as the Python that loads the host wheel (one build
//! target for the CLI and the wheel, so they share their dependencies' build), and keeps
//! glibc's allocator, which wasmtime's many small allocations across threads prefer to musl's.
//! What it gives up is musl distributions (Alpine): npm refuses the packages there (`libc`), and
//! the launcher says why.

/// A platform to build for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// Rust's target triple.
    pub triple: &'static str,
    /// `process.platform` and `process.arch` in Node (npm's `os` and `cpu`).
    pub npm_os: &'static str,
    /// See [`Target::npm_os`].
    pub npm_cpu: &'static str,
    /// npm's `libc` field, where the binary needs one.
    pub npm_libc: Option<&'static str>,
    /// The executable's file name.
    pub exe: &'static str,
    /// How it is linked.
    pub linker: Linker,
}

/// How a target's binary is linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linker {
    /// zig as the C compiler and linker, against glibc 2.17 (`maturin --zig`).
    ZigGlibc217,
    /// Debian's `mingw-w64` (rustc's default linker for `*-windows-gnu`).
    Mingw,
}

/// Every platform, in the order they are built.
pub const ALL: &[Target] = &[
    Target {
        triple: "x86_64-unknown-linux-gnu",
        npm_os: "linux",
        npm_cpu: "x64",
        npm_libc: Some("glibc"),
        exe: "scratchpad",
        linker: Linker::ZigGlibc217,
    },
    Target {
        triple: "aarch64-unknown-linux-gnu",
        npm_os: "linux",
        npm_cpu: "arm64",
        npm_libc: Some("glibc"),
        exe: "scratchpad",
        linker: Linker::ZigGlibc217,
    },
    Target {
        triple: "x86_64-pc-windows-gnu",
        npm_os: "win32",
        npm_cpu: "x64",
        npm_libc: None,
        exe: "scratchpad.exe",
        linker: Linker::Mingw,
    },
];

impl Target {
    /// The target named `triple`, or the list of those that exist.
    pub fn named(triple: &str) -> Result<Target, String> {
        ALL.iter().copied().find(|t| t.triple == triple).ok_or_else(|| {
            let known: Vec<&str> = ALL.iter().map(|t| t.triple).collect();
            format!("no such target `{triple}`; the targets are: {}", known.join(", "))
        })
    }

    /// The npm package carrying this platform's binary: `@scratchpad-dev/cli-<os>-<cpu>`.
    pub fn npm_package(&self) -> String {
        format!("{}-{}-{}", super::npm::CLI, self.npm_os, self.npm_cpu)
    }

    /// Whether this target's binaries run on the machine building them (same CPU and OS).
    pub fn runs_here(&self) -> bool {
        self.arch() == std::env::consts::ARCH && self.triple.split('-').any(|part| part == std::env::consts::OS)
    }

    /// The architecture, as `std::env::consts::ARCH` names it (`x86_64`, `aarch64`).
    pub fn arch(&self) -> &'static str {
        self.triple.split('-').next().expect("a triple starts with its architecture")
    }

    /// Whether the Python host wheel (a CPython extension) is built for this platform.
    pub fn has_host_wheel(&self) -> bool {
        self.linker == Linker::ZigGlibc217
    }

    /// The file name cargo gives the `cdylib` of crate `name` (its `lib_name`) on this platform.
    pub fn cdylib(&self, name: &str) -> String {
        match self.linker {
            Linker::ZigGlibc217 => format!("lib{name}.so"),
            Linker::Mingw => format!("{name}.dll"),
        }
    }

    /// The platform's name in Node addons (`linux-x64-gnu`): the addon's file is
    /// `scratchpad.<name>.node`, its package `@scratchpad-dev/host-<name>`.
    pub fn node_platform(&self) -> String {
        let libc = match self.npm_libc {
            Some("glibc") => "-gnu",
            Some(_) => "-musl",
            None => "",
        };
        format!("{}-{}{libc}", self.npm_os, self.npm_cpu)
    }

    /// The platform's compatibility tag for maturin (`--compatibility`).
    pub fn python_compatibility(&self) -> Option<&'static str> {
        match self.linker {
            Linker::ZigGlibc217 => Some("manylinux2014"),
            Linker::Mingw => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launchers_table_names_exactly_the_platform_packages() {
        // packaging/npm/cli/bin/scratchpad.js maps `platform-arch` to the package by hand.
        let launcher = include_str!("../../../packaging/npm/cli/bin/scratchpad.js");
        for target in ALL {
            let line = format!("\"{}-{}\": \"{}\",", target.npm_os, target.npm_cpu, target.npm_package());
            assert!(launcher.contains(&line), "the launcher lacks {line}");
        }
        assert_eq!(launcher.matches("\"@scratchpad-dev/cli-").count(), ALL.len(), "the launcher names another package");
    }

    #[test]
    fn the_addon_loaders_table_names_exactly_the_addon_packages() {
        // bindings/node/native.js maps `platform-arch-libc` to the package by hand.
        let loader = include_str!("../../../bindings/node/native.js");
        for target in ALL {
            let line = format!("\"{0}\": \"{1}-{0}\",", target.node_platform(), super::super::node::HOST);
            assert!(loader.contains(&line), "the loader lacks {line}");
        }
        assert_eq!(loader.matches("\"@scratchpad-dev/host-").count(), ALL.len(), "the loader names another package");
    }

    #[test]
    fn an_unknown_target_is_refused_with_the_list() {
        let error = Target::named("riscv64gc-unknown-linux-gnu").unwrap_err();
        assert!(
            error.contains("x86_64-unknown-linux-gnu, aarch64-unknown-linux-gnu, x86_64-pc-windows-gnu"),
            "{error}"
        );
    }
}
