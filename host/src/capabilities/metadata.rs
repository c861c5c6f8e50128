//! The `metadata` import: what a plugin publishes about the session for the runtime (the
//! context-pressure policy's session metadata). It lives in the call's
//! [`Scope`](crate::capabilities::scope::Scope) beside the plugin's storage, shares its quota,
//! and commits with the call's other writes.

use crate::bindings::scratchpad::plugin::metadata::{Host, MetadataError};
use crate::capabilities::call::CallState;

impl Host for CallState {
    fn set(&mut self, key: String, value: String) -> wasmtime::Result<Result<(), MetadataError>> {
        self.require(crate::grants::Power::Metadata)?;
        Ok(self.scope.set_metadata(key, value))
    }

    fn get(&mut self, key: String) -> wasmtime::Result<Option<String>> {
        self.require(crate::grants::Power::Metadata)?;
        Ok(self.scope.metadata(&key).map(|v| String::from_utf8_lossy(v).into_owned()))
    }

    fn remove(&mut self, key: String) -> wasmtime::Result<bool> {
        self.require(crate::grants::Power::Metadata)?;
        Ok(self.scope.remove_metadata(&key))
    }
}
