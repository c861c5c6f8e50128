//! The `observation` import: a tool result held by the host, read by the guest in slices.

use std::sync::{Arc, OnceLock};

use sha2::{Digest, Sha256};
use wasmtime::component::Resource;

use crate::bindings::scratchpad::plugin::observation::{ContentKind, Host, HostObservation};
use crate::capabilities::CallState;
use crate::types::{self, Observation};

/// Largest slice one `read` returns.
pub(crate) const MAX_READ_BYTES: u32 = 1 << 20;

/// A tool result as the host holds it during `after-tool-result`.
pub struct ObservationData {
    bytes: Arc<[u8]>,
    kind: types::ContentKind,
    metadata: String,
    sha256: OnceLock<String>,
}

impl ObservationData {
    pub(crate) fn new(observation: &Observation) -> Self {
        let kind = observation
            .kind
            .unwrap_or_else(|| sniff(&observation.bytes));
        ObservationData {
            bytes: observation.bytes.clone(),
            kind,
            metadata: observation.metadata.to_string(),
            sha256: OnceLock::new(),
        }
    }
}

/// Valid UTF-8 is text; anything else is binary.
pub(crate) fn sniff(bytes: &[u8]) -> types::ContentKind {
    match std::str::from_utf8(bytes) {
        Ok(_) => types::ContentKind::Text,
        Err(_) => types::ContentKind::Binary,
    }
}

impl Host for CallState {}

impl HostObservation for CallState {
    fn size(&mut self, this: Resource<ObservationData>) -> wasmtime::Result<u64> {
        Ok(self.table.get(&this)?.bytes.len() as u64)
    }

    fn kind(&mut self, this: Resource<ObservationData>) -> wasmtime::Result<ContentKind> {
        Ok(match self.table.get(&this)?.kind {
            types::ContentKind::Text => ContentKind::Text,
            types::ContentKind::Binary => ContentKind::Binary,
        })
    }

    fn read(
        &mut self,
        this: Resource<ObservationData>,
        offset: u64,
        len: u32,
    ) -> wasmtime::Result<Vec<u8>> {
        let data = self.table.get(&this)?;
        let size = data.bytes.len() as u64;
        let start = offset.min(size) as usize;
        let end = (offset.saturating_add(u64::from(len.min(MAX_READ_BYTES)))).min(size) as usize;
        Ok(data.bytes[start..end].to_vec())
    }

    fn sha256(&mut self, this: Resource<ObservationData>) -> wasmtime::Result<String> {
        let data = self.table.get(&this)?;
        Ok(data
            .sha256
            .get_or_init(|| hex::encode(Sha256::digest(&data.bytes)))
            .clone())
    }

    fn metadata(&mut self, this: Resource<ObservationData>) -> wasmtime::Result<String> {
        Ok(self.table.get(&this)?.metadata.clone())
    }

    fn drop(&mut self, this: Resource<ObservationData>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}
