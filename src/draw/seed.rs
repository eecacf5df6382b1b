//! A draw's secret and what it commits to: the 32-byte seed drawn when the sale is created, its
//! public commitment SHA-256(seed), and each entrant's tag HMAC-SHA256(seed, user ID as decimal
//! ASCII). Ranks are the tags in ascending byte order, so once the seed is revealed anyone can
//! recompute every tag, check the commitment and the order.

use rand::Rng;
use sha2::{Digest, Sha256};

use crate::domain::UserId;

/// A draw's seed. Its `Debug` prints nothing of it: a seed in a log line before the draw
/// would let its reader know the ranking.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Seed([u8; 32]);

impl std::fmt::Debug for Seed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Seed(..)")
    }
}

impl Seed {
    /// A new seed from the thread's CSPRNG (ChaCha, seeded by the operating system).
    pub fn generate() -> Self {
        Self(rand::rng().random())
    }

    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The seed itself: stored, and revealed once the draw ran.
    pub fn expose(&self) -> &[u8; 32] {
        &self.0
    }

    /// SHA-256 of the seed, public from the sale's creation.
    pub fn commitment(&self) -> [u8; 32] {
        Sha256::digest(self.0).into()
    }

    /// `user`'s tag in this draw.
    pub fn tag(&self, user: UserId) -> [u8; 32] {
        crate::signing::sign(&self.0, &[user.get().to_string().as_bytes()])
    }

    /// The entrants `users` in rank order, each with their tag (ties cannot happen between
    /// distinct users short of a SHA-256 collision; the user ID breaks one anyway).
    pub fn rank(&self, users: impl IntoIterator<Item = UserId>) -> Vec<(UserId, [u8; 32])> {
        let mut ranked: Vec<(UserId, [u8; 32])> =
            users.into_iter().map(|u| (u, self.tag(u))).collect();
        ranked.sort_unstable_by(|a, b| a.1.cmp(&b.1).then(a.0.get().cmp(&b.0.get())));
        ranked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(n: i64) -> UserId {
        UserId::try_from(n).expect("positive")
    }

    #[test]
    fn the_tag_is_hmac_sha256_of_the_decimal_id_under_the_seed() {
        let seed = Seed::from_bytes([7; 32]);
        assert_eq!(
            seed.tag(user(42)),
            crate::signing::sign(&[7; 32], &[b"42"]),
            "what a verifier recomputes from the revealed seed"
        );
        assert_ne!(seed.tag(user(42)), seed.tag(user(43)));
        assert_ne!(seed.tag(user(42)), Seed::from_bytes([8; 32]).tag(user(42)));
    }

    #[test]
    fn the_commitment_is_the_seeds_sha256() {
        // SHA-256 of 32 zero bytes.
        assert_eq!(
            hex::encode(Seed::from_bytes([0; 32]).commitment()),
            "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
        );
    }

    #[test]
    fn ranks_are_the_tags_ascending_whatever_the_arrival_order() {
        let seed = Seed::generate();
        let forward = seed.rank((1..=500).map(user));
        let backward = seed.rank((1..=500).rev().map(user));
        assert_eq!(forward, backward);
        assert!(forward.windows(2).all(|w| w[0].1 < w[1].1));
        assert_ne!(
            forward.iter().map(|(u, _)| u.get()).collect::<Vec<_>>(),
            (1..=500).collect::<Vec<_>>(),
            "not the arrival order"
        );
    }

    #[test]
    fn a_seed_never_prints() {
        assert_eq!(format!("{:?}", Seed::from_bytes([9; 32])), "Seed(..)");
    }
}
