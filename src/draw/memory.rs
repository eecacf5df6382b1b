//! What an instance keeps of a drawn sale (`Core`'s draw caches): types only, so the
//! composition root depends on them and not on the draw's workings.

use crate::domain::fair::Transcript;

/// A drawn transcript as this instance keeps it: without its moves (they still grow), and as
/// JSON, so the 100,000 leaves and ranks of a large draw are read and serialized once, not once
/// per request (anyone may ask, as often as they like).
pub struct Revealed {
    pub(super) transcript: Transcript,
    /// `transcript` as JSON without its closing brace: the moves are written after it.
    pub(super) head: bytes::Bytes,
}
