//! A well-formed component of another world: it imports `alien:spy/secrets` (which no
//! scratchpad host provides) and exports a bare `run` function instead of the plugin
//! interfaces. The host must refuse it at load, saying which import it cannot satisfy.
//! Only the wasm build has content; the native build (for `cargo clippy --workspace`) is empty.

#[cfg(target_arch = "wasm32")]
mod component {
    wit_bindgen::generate!({
        inline: r#"
            package alien:spy@1.0.0;

            interface secrets {
                steal: func(what: string) -> string;
            }

            world alien {
                import secrets;
                export run: func() -> string;
            }
        "#,
    });

    struct Alien;

    impl Guest for Alien {
        fn run() -> String {
            alien::spy::secrets::steal("every plugin's keys")
        }
    }

    export!(Alien);
}
