//! A draw's secret: the 32 bytes drawn when the sale is created, whose SHA-256 is public from
//! then on (the commitment). It is revealed with the draw as `committed_seed`; the draw's seed
//! mixes it with the entrant list's root and the beacon's round (`domain::fair::draw_seed`), so
//! neither the shop (who knows it) nor anyone else can know a rank before the round exists.

use rand::Rng;

use crate::domain::fair;

/// A draw's committed secret. Its `Debug` prints nothing of it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Seed([u8; 32]);

impl std::fmt::Debug for Seed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Seed(..)")
    }
}

impl Seed {
    /// A new secret from the thread's CSPRNG (ChaCha, seeded by the operating system).
    pub fn generate() -> Self {
        Self(rand::rng().random())
    }

    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The secret itself: stored, and revealed with the draw.
    pub fn expose(&self) -> &[u8; 32] {
        &self.0
    }

    /// SHA-256 of the secret, public from the sale's creation.
    pub fn commitment(&self) -> [u8; 32] {
        fair::commitment(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commitment_is_the_secrets_sha256() {
        // SHA-256 of 32 zero bytes.
        assert_eq!(
            hex::encode(Seed::from_bytes([0; 32]).commitment()),
            "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
        );
    }

    #[test]
    fn a_seed_never_prints() {
        assert_eq!(format!("{:?}", Seed::from_bytes([9; 32])), "Seed(..)");
    }
}
