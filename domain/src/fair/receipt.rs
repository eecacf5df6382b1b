//! A draw entry's receipt: what the shop's Ed25519 signature covers, and the key's name.
//!
//! The signature covers the entry's leaf and every rule the sale fixed at its creation: the
//! voucher, the commitment to the secret, the beacon round named and the time entries close
//! (`"seckill-receipt-v2:{voucher}:{leaf hex}:{commitment hex}:{round or -}:{closes_at ms}"`).
//! A receipt therefore proves both the entry and the terms it was accepted under: a transcript
//! that names another commitment, round or close than the receipts the shoppers hold is the
//! shop's own contradiction. The key is fixed at the sale's creation and named in its
//! transcript ([`ReceiptKeyView`]), so a key rotated later breaks no receipt of an older sale.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Hash, Transcript};

/// The rules a sale fixed at its creation, which every receipt of it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceiptTerms {
    pub voucher: i64,
    /// SHA-256 of the secret committed at creation.
    pub commitment: Hash,
    /// The beacon round named at creation (`None`: no beacon).
    pub round: Option<u64>,
    /// When entries close (the sale's start).
    pub closes_at: DateTime<Utc>,
}

impl ReceiptTerms {
    /// The terms a transcript states (the round named at creation, also when a late close moved
    /// the draw to a later one); `None` when its commitment is not 32 bytes of hex.
    pub fn of(t: &Transcript) -> Option<Self> {
        Some(Self {
            voucher: t.voucher_id,
            commitment: super::hash_from_hex(&t.commitment)?,
            round: t
                .beacon
                .as_ref()
                .map(|b| b.planned_round.unwrap_or(b.round)),
            closes_at: t.closes_at,
        })
    }

    /// The text a receipt's signature covers for `leaf`.
    pub fn message(&self, leaf: &Hash) -> String {
        let round = self.round.map_or_else(|| "-".to_owned(), |r| r.to_string());
        format!(
            "seckill-receipt-v2:{}:{}:{}:{round}:{}",
            self.voucher,
            hex::encode(leaf),
            hex::encode(self.commitment),
            self.closes_at.timestamp_millis()
        )
    }
}

/// The key a sale's receipts are signed with, as its transcript names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptKeyView {
    /// The Ed25519 public key, hex.
    pub ed25519: String,
    /// [`key_id`] of it.
    pub id: String,
}

impl ReceiptKeyView {
    pub fn of(public: &[u8; 32]) -> Self {
        Self {
            ed25519: hex::encode(public),
            id: key_id(public),
        }
    }
}

/// A receipt key's short name: the first 8 bytes of SHA-256 of the public key, hex.
pub fn key_id(public: &[u8; 32]) -> String {
    hex::encode(&Sha256::digest(public)[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(round: Option<u64>) -> ReceiptTerms {
        ReceiptTerms {
            voucher: 7,
            commitment: [0xab; 32],
            round,
            closes_at: DateTime::from_timestamp(1_700_000_000, 250_000_000).expect("a time"),
        }
    }

    #[test]
    fn the_message_names_every_term() {
        let leaf = [1u8; 32];
        assert_eq!(
            terms(Some(123)).message(&leaf),
            format!(
                "seckill-receipt-v2:7:{}:{}:123:1700000000250",
                "01".repeat(32),
                "ab".repeat(32)
            )
        );
        assert!(terms(None).message(&leaf).contains(":-:1700000000250"));
    }

    #[test]
    fn another_round_or_close_is_another_message() {
        let leaf = [1u8; 32];
        let base = terms(Some(123));
        let later = ReceiptTerms {
            closes_at: base.closes_at + chrono::Duration::milliseconds(1),
            ..base
        };
        assert_ne!(base.message(&leaf), terms(Some(124)).message(&leaf));
        assert_ne!(base.message(&leaf), later.message(&leaf));
    }

    #[test]
    fn a_key_id_is_sixteen_hex_of_its_hash() {
        let id = key_id(&[0; 32]);
        assert_eq!(id.len(), 16);
        assert_eq!(id, hex::encode(&Sha256::digest([0u8; 32])[..8]));
    }
}
