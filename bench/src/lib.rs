//! What the benchmarks compare the component with, beside the host: the scratchpad logic
//! compiled natively over the host's storage layer ([`native`]). The Extism peer's module is
//! `extism-peer/`, built by this crate's build script; the drivers are `benches/host/`.

pub mod native;
