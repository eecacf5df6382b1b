//! A draw sale's terms, fixed at its creation and never changed: the secret, its commitment, the
//! beacon round named and the key its receipts are signed with. Read once per instance.

use chrono::{DateTime, Utc};

use crate::domain::{fair, VoucherId};

use super::{seed::Seed, settings::ReceiptKey, DrawError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terms {
    pub seed: Seed,
    pub commitment: fair::Hash,
    /// The round named at creation (`None`: no beacon).
    pub round: Option<u64>,
    /// The public half of the key the sale's receipts are signed with.
    pub receipt_key: [u8; 32],
}

impl Terms {
    /// What a receipt of this sale covers beside its leaf.
    pub fn receipt_terms(
        &self,
        voucher: VoucherId,
        closes_at: DateTime<Utc>,
    ) -> fair::ReceiptTerms {
        fair::ReceiptTerms {
            voucher: voucher.get(),
            commitment: self.commitment,
            round: self.round,
            closes_at,
        }
    }

    /// The key this sale's receipts are signed with, from the configured ones.
    pub fn signing_key<'a>(
        &self,
        settings: &'a super::DrawSettings,
    ) -> Result<&'a ReceiptKey, DrawError> {
        settings
            .signing_key(&self.receipt_key)
            .ok_or(DrawError::KeyNotHeld(fair::key_id(&self.receipt_key)))
    }
}
