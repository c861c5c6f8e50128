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
//!
//! Each target is built where its toolchain is ([`Target::builds_here`]): the Linux and Windows
//! ones on Linux (zig, mingw-w64), the macOS ones on macOS with Apple's own toolchain (Xcode's
//! clang and linker, which only run there; the release builds each on a GitHub macOS runner of
//! its architecture). `dist assemble` then puts the targets' outputs together (`assemble.rs`).

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
    /// The platform's own toolchain, rustc's default: Apple's clang and linker, on macOS only.
    Native,
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
    Target {
        triple: "x86_64-apple-darwin",
        npm_os: "darwin",
        npm_cpu: "x64",
        npm_libc: None,
        exe: "scratchpad",
        linker: Linker::Native,
    },
    Target {
        triple: "aarch64-apple-darwin",
        npm_os: "darwin",
        npm_cpu: "arm64",
        npm_libc: None,
        exe: "scratchpad",
        linker: Linker::Native,
    },
];

/// The targets whose toolchain this machine has ([`Target::builds_here`]), in [`ALL`]'s order:
/// what `dist` builds when no `--target` is named (on Linux the Linux and Windows ones, as
/// before the macOS targets existed; on macOS the two macOS ones).
pub fn buildable_here() -> Vec<Target> {
    ALL.iter().copied().filter(Target::builds_here).collect()
}

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
        self.arch() == std::env::consts::ARCH && self.os() == std::env::consts::OS
    }

    /// Whether this machine has the toolchain that links this target: zig and mingw-w64 on
    /// Linux (`dist` installs zig; Windows needs Debian's `mingw-w64`), Apple's on macOS.
    pub fn builds_here(&self) -> bool {
        self.build_os() == std::env::consts::OS
    }

    /// The operating system whose machines build this target, as `std::env::consts::OS`
    /// names it.
    pub fn build_os(&self) -> &'static str {
        match self.linker {
            Linker::ZigGlibc217 | Linker::Mingw => "linux",
            Linker::Native => self.os(),
        }
    }

    /// The operating system, as `std::env::consts::OS` names it (`linux`, `windows`, `macos`).
    pub fn os(&self) -> &'static str {
        match self.npm_os {
            "win32" => "windows",
            "darwin" => "macos",
            other => other,
        }
    }

    /// The architecture, as `std::env::consts::ARCH` names it (`x86_64`, `aarch64`).
    pub fn arch(&self) -> &'static str {
        self.triple.split('-').next().expect("a triple starts with its architecture")
    }

    /// Whether the Python host wheel (a CPython extension) is built for this platform: on
    /// Linux and macOS, where maturin builds it natively (Windows' would be a cross-build of a
    /// CPython extension with mingw-w64, not done).
    pub fn has_host_wheel(&self) -> bool {
        matches!(self.linker, Linker::ZigGlibc217 | Linker::Native)
    }

    /// The file name cargo gives the `cdylib` of crate `name` (its `lib_name`) on this platform.
    pub fn cdylib(&self, name: &str) -> String {
        match self.linker {
            Linker::ZigGlibc217 => format!("lib{name}.so"),
            Linker::Mingw => format!("{name}.dll"),
            Linker::Native => format!("lib{name}.dylib"),
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
            // maturin tags a macOS wheel with the deployment target rustc links for (11.0 on
            // arm64, 10.12 on x86_64, unless `MACOSX_DEPLOYMENT_TARGET` says otherwise).
            Linker::Mingw | Linker::Native => None,
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
            error.contains(
                "x86_64-unknown-linux-gnu, aarch64-unknown-linux-gnu, x86_64-pc-windows-gnu, x86_64-apple-darwin, \
                 aarch64-apple-darwin"
            ),
            "{error}"
        );
    }

    #[test]
    fn the_linux_and_windows_targets_build_on_linux_and_the_macos_ones_on_macos() {
        let built_on = |triple: &str| Target::named(triple).unwrap().build_os();
        assert_eq!(built_on("x86_64-unknown-linux-gnu"), "linux");
        assert_eq!(built_on("aarch64-unknown-linux-gnu"), "linux");
        assert_eq!(built_on("x86_64-pc-windows-gnu"), "linux");
        assert_eq!(built_on("x86_64-apple-darwin"), "macos");
        assert_eq!(built_on("aarch64-apple-darwin"), "macos");
        // What `dist` builds with no `--target`: on Linux the three it built before macOS was a
        // target, in the same order.
        let default: Vec<&str> = buildable_here().iter().map(|t| t.triple).collect();
        match std::env::consts::OS {
            "linux" => {
                assert_eq!(default, ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu", "x86_64-pc-windows-gnu"])
            }
            "macos" => assert_eq!(default, ["x86_64-apple-darwin", "aarch64-apple-darwin"]),
            _ => assert!(default.is_empty(), "{default:?}"),
        }
    }

    #[test]
    fn a_target_runs_here_only_on_its_own_os_and_cpu() {
        let macos_arm = Target::named("aarch64-apple-darwin").unwrap();
        assert_eq!((macos_arm.os(), macos_arm.arch()), ("macos", "aarch64"));
        assert_eq!(Target::named("x86_64-pc-windows-gnu").unwrap().os(), "windows");
        let here: Vec<&str> = ALL.iter().filter(|t| t.runs_here()).map(|t| t.triple).collect();
        match (std::env::consts::OS, std::env::consts::ARCH) {
            ("linux", "x86_64") => assert_eq!(here, ["x86_64-unknown-linux-gnu"]),
            ("macos", "aarch64") => assert_eq!(here, ["aarch64-apple-darwin"]),
            ("macos", "x86_64") => assert_eq!(here, ["x86_64-apple-darwin"]),
            _ => {}
        }
    }

    #[test]
    fn the_macos_targets_are_named_as_node_and_cargo_name_them() {
        let target = Target::named("aarch64-apple-darwin").unwrap();
        assert_eq!(target.npm_package(), "@scratchpad-dev/cli-darwin-arm64");
        assert_eq!(target.node_platform(), "darwin-arm64");
        assert_eq!(target.cdylib("scratchpad_node"), "libscratchpad_node.dylib");
        assert!(target.has_host_wheel() && target.python_compatibility().is_none());
        assert!(!Target::named("x86_64-pc-windows-gnu").unwrap().has_host_wheel());
    }
}
