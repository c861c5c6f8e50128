//! Builds the test components (see `build-support` for how and why) and writes their
//! paths to `$OUT_DIR/test_components.rs`.

use scratchpad_build_support::{Component, build, path_constants};

const COMPONENTS: &[Component] = &[
    Component { constant: "PROBE", package: "probe-component" },
    Component { constant: "REMINDER", package: "reminder-plugin" },
    // Components that do not implement the contract: another world, and a later version.
    Component { constant: "ALIEN", package: "alien-component" },
    Component { constant: "FUTURE", package: "future-component" },
    // A hostile plugin against the raw WIT (no SDK): host work on its behalf, terminal spoofing.
    Component { constant: "HOSTILE", package: "hostile-component" },
    // A plugin of the frozen 0.1.0 contract: no `permissions` export.
    Component { constant: "LEGACY", package: "legacy-component" },
    // A plugin of the frozen 0.1.1 contract: no `view` export.
    Component { constant: "FROZEN", package: "frozen-component" },
    // A plugin of the frozen 0.1.2 contract: a view, no `index` import.
    Component { constant: "VIEWED", package: "viewed-component" },
];

fn main() {
    let paths = build(COMPONENTS, &["tests/components", "plugins/reminder"]);
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("test_components.rs");
    std::fs::write(out, path_constants(COMPONENTS, &paths)).unwrap();
}
