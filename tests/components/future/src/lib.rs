//! A plugin built against a later version of the contract: it imports
//! `scratchpad:plugin/config@0.2.0` and exports `scratchpad:plugin/lifecycle@0.2.0`, so a
//! 0.1.x host must refuse it at load, saying which version it was built for.
//! Only the wasm build has content; the native build (for `cargo clippy --workspace`) is empty.

#[cfg(target_arch = "wasm32")]
mod component {
    wit_bindgen::generate!({
        inline: r#"
            package scratchpad:plugin@0.2.0;

            interface config {
                get: func() -> string;
            }

            interface lifecycle {
                record manifest {
                    tools: list<string>,
                }
                load: func() -> result<manifest, string>;
            }

            world plugin {
                import config;
                export lifecycle;
            }
        "#,
    });

    use exports::scratchpad::plugin::lifecycle::{Guest, Manifest};

    struct Future;

    impl Guest for Future {
        fn load() -> Result<Manifest, String> {
            Ok(Manifest { tools: vec![scratchpad::plugin::config::get()] })
        }
    }

    export!(Future);
}
