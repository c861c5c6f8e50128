//! Interop with other runtimes' session formats.

pub mod openclaw;
