//! What a message is to its handler: who sent it, its type and bytes, and
//! the way an answer goes back.

use lwk_logic::kmsg::SendError;

use super::outbox::Outbox;
use super::peer::Peer;
use super::words;

/// A received message; `data` is valid only during the handler.
pub struct Message<'a> {
    pub from: Peer,
    pub kind: u16,
    pub data: &'a [u8],
    /// The ring to its sender, where answers go (None: none is attached).
    pub(super) link: Option<&'a Outbox>,
}

impl Message<'_> {
    /// Sends an answer to whoever sent this, as `send` does.
    pub fn reply(&self, kind: u16, payload: &[u8]) -> Result<(), SendError> {
        self.link.ok_or(SendError::Invalid)?.send(kind, payload)
    }

    /// `reply` of little-endian u64s, as `send_words` does.
    pub fn reply_words(&self, kind: u16, words: &[u64]) -> Result<(), SendError> {
        let (bytes, len) = words::to_bytes(words);
        self.reply(kind, &bytes[..len])
    }

    /// The payload's `i`-th little-endian u64, 0 past its end.
    pub fn word(&self, i: usize) -> u64 {
        let bytes = self.data.get(i * 8..i * 8 + 8).unwrap_or(&[0; 8]);
        u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]))
    }
}
