//! Rolling checkpoints for a runtime that is not written in Rust: a Python client (stdlib)
//! of `scratchpad serve --summarize` answers the server's `summarize` requests with a scripted
//! model, and declines one.

use crate::support;

#[test]
fn a_python_client_writes_checkpoints_by_answering_summarize() {
    support::python_client("rpc_checkpoints.py");
}
