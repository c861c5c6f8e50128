//! The `storage` import: a plugin's private keys in its session, read and written through the
//! call's [`Scope`](crate::capabilities::scope::Scope).

use crate::bindings::scratchpad::plugin::storage::{Host, StorageError};
use crate::capabilities::call::CallState;

impl Host for CallState {
    fn get(&mut self, key: String) -> wasmtime::Result<Option<Vec<u8>>> {
        self.require(crate::grants::Power::Storage)?;
        Ok(self.scope.get(&key).map(<[u8]>::to_vec))
    }

    fn set(&mut self, key: String, value: Vec<u8>) -> wasmtime::Result<Result<(), StorageError>> {
        self.require(crate::grants::Power::Storage)?;
        Ok(self.scope.set(key, value))
    }

    fn delete(&mut self, key: String) -> wasmtime::Result<bool> {
        self.require(crate::grants::Power::Storage)?;
        Ok(self.scope.delete(&key))
    }

    fn keys(&mut self, prefix: String) -> wasmtime::Result<Vec<String>> {
        self.require(crate::grants::Power::Storage)?;
        Ok(self.scope.keys(&prefix))
    }
}
