//! Who a message comes from or goes to.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// The host module on Linux.
    Host,
    /// The LWK of the enclave with this id.
    Enclave(u32),
}
