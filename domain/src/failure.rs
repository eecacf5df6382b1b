//! Why an order failed, and what its failure gives back to the sale.
//!
//! The policy lives on the variant: the worker asks a reason how to settle, the store keeps its
//! text, the pages ask it for a sentence. Nothing compares strings to decide.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

/// Why an order reached `failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum FailureReason {
    /// PostgreSQL has no such voucher.
    UnknownVoucher,
    /// PostgreSQL's stock was spent (Redis admitted more than it should have, after a state loss).
    SoldOut,
    /// The shopper already holds a written order for this voucher.
    AlreadyBought,
    /// The worker gave up after this many failed deliveries.
    DeadLetter { deliveries: u32 },
    /// Another shopper's order was already written under the same ID: the day's counter went
    /// back (a failover to a lagging replica, an AOF loss) and handed the ID out twice.
    DuplicateId,
}

/// How the worker settles an order in Redis once PostgreSQL has decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settlement {
    /// The row is written: forget the queued entry.
    Written,
    /// Rejected; give back the buyer slot and the unit.
    GiveBack,
    /// Rejected because PostgreSQL had no stock left: release the buyer, but do not return a
    /// unit that PostgreSQL would refuse again.
    ReleaseBuyerOnly,
    /// Rejected because the shopper already holds a written order: return the unit, keep the
    /// buyer recorded.
    ReturnStockOnly,
    /// Given up after too many deliveries: give back, and copy to the dead-letter stream.
    DeadLetter,
}

impl Settlement {
    /// Whether settling gives the unit back to the sale's stock.
    pub fn returns_unit(self) -> bool {
        match self {
            Self::GiveBack | Self::ReturnStockOnly | Self::DeadLetter => true,
            Self::Written | Self::ReleaseBuyerOnly => false,
        }
    }
}

/// Stored text that names no known reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown failure reason {0:?}")]
pub struct FailureReasonError(pub String);

impl FailureReason {
    /// The code every dead-letter reason's stored text starts with (`dead_letter: …`).
    pub const DEAD_LETTER_CODE: &'static str = "dead_letter";

    /// What settling an order that failed for this reason gives back.
    pub fn settlement(self) -> Settlement {
        match self {
            Self::UnknownVoucher => Settlement::GiveBack,
            Self::SoldOut => Settlement::ReleaseBuyerOnly,
            Self::AlreadyBought => Settlement::ReturnStockOnly,
            Self::DeadLetter { .. } | Self::DuplicateId => Settlement::DeadLetter,
        }
    }

    /// The stable machine code (`sold_out`, `dead_letter`, …).
    pub fn code(self) -> &'static str {
        match self {
            Self::UnknownVoucher => "unknown_voucher",
            Self::SoldOut => "sold_out",
            Self::AlreadyBought => "already_bought",
            Self::DeadLetter { .. } => Self::DEAD_LETTER_CODE,
            Self::DuplicateId => "duplicate_id",
        }
    }
}

/// The stored text: the code, and for a dead letter how many deliveries it took.
impl fmt::Display for FailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DeadLetter { deliveries } => write!(
                f,
                "{}: gave up after {deliveries} deliveries",
                Self::DEAD_LETTER_CODE
            ),
            other => f.write_str(other.code()),
        }
    }
}

impl FromStr for FailureReason {
    type Err = FailureReasonError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let unknown = || FailureReasonError(s.to_owned());
        Ok(match s {
            "unknown_voucher" => Self::UnknownVoucher,
            "sold_out" => Self::SoldOut,
            "already_bought" => Self::AlreadyBought,
            "duplicate_id" => Self::DuplicateId,
            _ => {
                let deliveries = s
                    .strip_prefix(Self::DEAD_LETTER_CODE)
                    .and_then(|rest| rest.strip_prefix(": gave up after "))
                    .and_then(|rest| rest.strip_suffix(" deliveries"))
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(unknown)?;
                Self::DeadLetter { deliveries }
            }
        })
    }
}

impl TryFrom<String> for FailureReason {
    type Error = FailureReasonError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<FailureReason> for String {
    fn from(r: FailureReason) -> Self {
        r.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [FailureReason; 5] = [
        FailureReason::UnknownVoucher,
        FailureReason::SoldOut,
        FailureReason::AlreadyBought,
        FailureReason::DeadLetter { deliveries: 5 },
        FailureReason::DuplicateId,
    ];

    #[test]
    fn stored_text_round_trips() {
        for r in ALL {
            assert_eq!(r.to_string().parse::<FailureReason>(), Ok(r));
        }
        assert_eq!(
            FailureReason::DeadLetter { deliveries: 3 }.to_string(),
            "dead_letter: gave up after 3 deliveries"
        );
    }

    #[test]
    fn unknown_text_is_an_error_not_a_default() {
        for bad in [
            "",
            "sold out",
            "dead_letter",
            "dead_letter: gave up after x deliveries",
        ] {
            assert!(bad.parse::<FailureReason>().is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn each_reason_gives_back_what_its_admission_took() {
        assert_eq!(
            FailureReason::SoldOut.settlement(),
            Settlement::ReleaseBuyerOnly
        );
        assert_eq!(
            FailureReason::AlreadyBought.settlement(),
            Settlement::ReturnStockOnly
        );
        assert_eq!(
            FailureReason::UnknownVoucher.settlement(),
            Settlement::GiveBack
        );
        assert_eq!(
            FailureReason::DeadLetter { deliveries: 9 }.settlement(),
            Settlement::DeadLetter
        );
        assert_eq!(
            FailureReason::DuplicateId.settlement(),
            Settlement::DeadLetter
        );
    }
}
