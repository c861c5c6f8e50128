//! Builds the first-party plugin components and embeds them in the host, so the `scratchpad`
//! binary works with no files around it. The how and why of the nested build is documented
//! in `build-support`.

use scratchpad_build_support::{Component, build, path_constants};

const COMPONENTS: &[Component] = &[
    Component { constant: "SCRATCHPAD", package: "scratchpad-guest" },
    Component { constant: "OBSERVATIONS", package: "observations-plugin" },
    Component { constant: "CONTEXT_GUARD", package: "context-guard-plugin" },
];

fn main() {
    let paths = build(COMPONENTS, &["guest", "plugins/observations", "plugins/context-guard"]);
    let mut generated = path_constants(COMPONENTS, &paths);
    for (component, path) in COMPONENTS.iter().zip(&paths) {
        generated.push_str(&format!(
            "/// Bytes of the `{}` component, embedded at build time.\npub static {}_WASM: &[u8] = include_bytes!({:?});\n",
            component.package,
            component.constant,
            path.display().to_string()
        ));
    }
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("components.rs");
    std::fs::write(out, generated).unwrap();
}
