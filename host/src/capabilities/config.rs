//! The `config` import: the plugin's own configuration as JSON object text.

use crate::bindings::scratchpad::plugin::config::Host;
use crate::capabilities::call::CallState;

impl Host for CallState {
    fn get(&mut self) -> wasmtime::Result<String> {
        self.require(crate::grants::Power::Config)?;
        Ok(self.plugin.config_json.clone())
    }
}
