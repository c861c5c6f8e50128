//! Node resolves the addon's `napi_*` symbols when it loads it; napi-build tells the linker so
//! (nothing on Linux, `-undefined dynamic_lookup` on macOS, the import library on Windows).
fn main() {
    napi_build::setup();
}
