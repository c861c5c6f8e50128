//! The `observation` import: a tool result held by the host (its facts: `resources.rs`), read
//! by the guest in slices.

use wasmtime::component::Resource;

use crate::bindings::scratchpad::plugin::observation::{ContentKind, Host, HostObservation};
use crate::capabilities::call::CallState;
use crate::resources::MAX_READ_BYTES;
use crate::resources::ObservationData;
use crate::types;

pub(crate) fn to_wit_kind(kind: types::ContentKind) -> ContentKind {
    match kind {
        types::ContentKind::Text => ContentKind::Text,
        types::ContentKind::Binary => ContentKind::Binary,
    }
}

impl Host for CallState {}

impl HostObservation for CallState {
    fn size(&mut self, this: Resource<ObservationData>) -> wasmtime::Result<u64> {
        Ok(self.table.get(&this)?.0.bytes.len() as u64)
    }

    fn kind(&mut self, this: Resource<ObservationData>) -> wasmtime::Result<ContentKind> {
        Ok(to_wit_kind(self.table.get(&this)?.0.kind))
    }

    fn size_chars(&mut self, this: Resource<ObservationData>) -> wasmtime::Result<u64> {
        Ok(self.table.get(&this)?.0.size_chars)
    }

    fn read(&mut self, this: Resource<ObservationData>, offset: u64, len: u32) -> wasmtime::Result<Vec<u8>> {
        Ok(self.table.get(&this)?.0.slice(offset, len).to_vec())
    }

    /// Hashing runs at about 1 ms per MB: a large observation is hashed on the blocking pool,
    /// once, so the executor's threads never wait for it.
    async fn sha256(&mut self, this: Resource<ObservationData>) -> wasmtime::Result<String> {
        let facts = self.table.get(&this)?.0.clone();
        if facts.bytes.len() <= MAX_READ_BYTES as usize {
            return Ok(facts.sha256().to_owned());
        }
        Ok(tokio::task::spawn_blocking(move || facts.sha256().to_owned()).await?)
    }

    fn metadata(&mut self, this: Resource<ObservationData>) -> wasmtime::Result<String> {
        Ok(self.table.get(&this)?.0.metadata.clone())
    }

    fn drop(&mut self, this: Resource<ObservationData>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}
