//! `scratchpad serve` driven from outside by a real client of another ecosystem: a Python
//! (stdlib) script that spawns the sidecar and runs a whole session over JSON-RPC.

use crate::support;

#[test]
fn a_python_client_drives_a_whole_session_over_json_rpc() {
    support::python_client("rpc_session.py");
}
