//! What an instance keeps of a drawn sale (`Core`'s draw caches): types only, so the
//! composition root depends on them and not on the draw's workings.

use std::sync::OnceLock;

use crate::domain::fair::{Hash, Transcript};

/// A drawn transcript as this instance keeps it: without its moves (they still grow), and as
/// JSON, so the 100,000 leaves and ranks of a large draw are read and serialized once, not once
/// per request (anyone may ask, as often as they like).
pub struct Revealed {
    pub(super) transcript: Transcript,
    /// `transcript` as JSON without its closing brace: the moves are written after it.
    pub(super) head: bytes::Bytes,
}

/// A closed draw's entrant list as this instance keeps it (it never changes once closed):
/// sorted, for proofs and counts, and, once a transcript is asked for, as the transcript's JSON
/// array of hex leaves, so the close's crowd of checkers is not served one serialization each.
pub struct ClosedLeaves {
    pub(super) sorted: Vec<Hash>,
    json: OnceLock<bytes::Bytes>,
}

impl ClosedLeaves {
    pub(super) fn new(sorted: Vec<Hash>) -> Self {
        Self {
            sorted,
            json: OnceLock::new(),
        }
    }

    /// `["<hex leaf>", …]`, made on the first call.
    pub(super) fn json(&self) -> bytes::Bytes {
        self.json
            .get_or_init(|| {
                let mut out = Vec::with_capacity(self.sorted.len() * 67 + 2);
                out.push(b'[');
                for (i, leaf) in self.sorted.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.push(b'"');
                    out.extend(hex::encode(leaf).as_bytes());
                    out.push(b'"');
                }
                out.push(b']');
                out.into()
            })
            .clone()
    }
}
