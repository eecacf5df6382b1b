//! Orders: the global 64-bit ID (design.md §3) and the lifecycle states a shopper can see.

use std::{fmt, str::FromStr};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::FailureReason;

mod refund;
pub use refund::Refund;

/// 2022-01-01T00:00:00Z as a Unix timestamp: second zero of the order ID's clock.
pub const ORDER_EPOCH_UNIX: i64 = 1_640_995_200;

/// Why a value is not an order ID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderIdError {
    #[error("not a decimal order ID")]
    NotDecimal,
    #[error("the seconds field must fit in 31 bits")]
    SecondsOutOfRange,
}

/// A global order ID: sign bit 0 | 31 bits of seconds since 2022-01-01 | 32 bits of the UTC
/// day's sequence, itself the shard (8 bits) and that shard's daily count (24 bits; see
/// [`crate::Shard`]). It travels as a decimal string in JSON because JavaScript numbers lose
/// precision above 2^53.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct OrderId(u64);

impl OrderId {
    /// Composes an ID from its two fields.
    pub fn from_parts(seconds: u32, sequence: u32) -> Result<Self, OrderIdError> {
        if seconds >> 31 != 0 {
            return Err(OrderIdError::SecondsOutOfRange);
        }
        Ok(Self((u64::from(seconds) << 32) | u64::from(sequence)))
    }

    /// Seconds since 2022-01-01T00:00:00Z at which the ID was drawn (Redis server clock).
    pub fn seconds(self) -> u32 {
        // The top bit is always zero, so the shift leaves at most 31 bits.
        (self.0 >> 32) as u32
    }

    /// The sequence number within the UTC day.
    pub fn sequence(self) -> u32 {
        (self.0 & 0xFFFF_FFFF) as u32
    }

    /// When the ID was drawn, to the second.
    pub fn issued_at(self) -> DateTime<Utc> {
        DateTime::from_timestamp(ORDER_EPOCH_UNIX + i64::from(self.seconds()), 0)
            .unwrap_or(DateTime::UNIX_EPOCH)
    }

    pub fn get(self) -> u64 {
        self.0
    }

    /// As stored in PostgreSQL (`BIGINT`): the sign bit is zero, so the cast is lossless.
    pub fn as_i64(self) -> i64 {
        self.0 as i64
    }

    /// Reads a `BIGINT` column back.
    pub fn from_db(value: i64) -> Result<Self, OrderIdError> {
        u64::try_from(value)
            .map(Self)
            .map_err(|_| OrderIdError::SecondsOutOfRange)
    }

    /// The 16-hex-digit form the Lua scripts write into Redis (`%08x%08x` of the two fields):
    /// Lua numbers are doubles and cannot hold a 64-bit ID.
    pub fn to_redis_hex(self) -> String {
        format!("{:016x}", self.0)
    }

    /// Parses [`Self::to_redis_hex`].
    pub fn from_redis_hex(hex: &str) -> Result<Self, OrderIdError> {
        if hex.len() != 16 {
            return Err(OrderIdError::NotDecimal);
        }
        let value = u64::from_str_radix(hex, 16).map_err(|_| OrderIdError::NotDecimal)?;
        if value >> 63 != 0 {
            return Err(OrderIdError::SecondsOutOfRange);
        }
        Ok(Self(value))
    }
}

impl FromStr for OrderId {
    type Err = OrderIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(OrderIdError::NotDecimal);
        }
        let value: u64 = s.parse().map_err(|_| OrderIdError::NotDecimal)?;
        if value >> 63 != 0 {
            return Err(OrderIdError::SecondsOutOfRange);
        }
        Ok(Self(value))
    }
}

impl TryFrom<String> for OrderId {
    type Error = OrderIdError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<OrderId> for String {
    fn from(id: OrderId) -> Self {
        id.0.to_string()
    }
}

impl fmt::Display for OrderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Where an order is in its life (design.md §2). On the wire: `{"status": "created",
/// "pay_by": "…"}` (with `"payment_mismatch": true` once money that does not match it arrived),
/// `{"status": "confirmed"}`, `{"status": "cancelled", "cancelled_by":
/// "deadline"}` (with `"refunded": true` when a payment that came too late went back),
/// `{"status": "failed", "reason": "sold_out"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum OrderStatus {
    /// Admitted in Redis and on the durable queue; not yet in PostgreSQL.
    Queued,
    /// The row is committed; it awaits payment until `pay_by`. `payment_mismatch`: a payment
    /// arrived that does not match it (another amount or currency): it did not pay the order;
    /// the shop holds it for its admins and gives it back once the order is paid another way or
    /// is cancelled.
    Created {
        pay_by: DateTime<Utc>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        payment_mismatch: bool,
    },
    /// Paid: final.
    Paid,
    /// A free voucher's order, complete once written: nothing to pay, no deadline; final.
    Confirmed,
    /// Cancelled, by the shopper, by the payment deadline or by the shop (an admin's refund);
    /// its unit went back on sale. `refund`: where the money taken for it stands, if any was.
    Cancelled {
        cancelled_by: Canceller,
        #[serde(default, skip_serializing_if = "Refund::is_none")]
        refund: Refund,
    },
    /// The worker rejected it or gave up on it; its stock went back.
    Failed { reason: FailureReason },
}

impl OrderStatus {
    /// The wire name (`queued`, `created`, `paid`, `cancelled`, `failed`), also the pages' CSS
    /// class suffix.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Created { .. } => "created",
            Self::Paid => "paid",
            Self::Confirmed => "confirmed",
            Self::Cancelled { .. } => "cancelled",
            Self::Failed { .. } => "failed",
        }
    }

    /// Whether the queue is done with it: written to PostgreSQL (awaiting payment or past it)
    /// or failed. I3 asks every returned order to get here.
    pub fn is_final(self) -> bool {
        !matches!(self, Self::Queued)
    }

    /// Whether nothing can change it any more (paid, confirmed, cancelled or failed).
    pub fn is_settled(self) -> bool {
        matches!(
            self,
            Self::Paid | Self::Confirmed | Self::Cancelled { .. } | Self::Failed { .. }
        )
    }

    /// The payment deadline, while the order awaits payment.
    pub fn pay_by(self) -> Option<DateTime<Utc>> {
        match self {
            Self::Created { pay_by, .. } => Some(pay_by),
            _ => None,
        }
    }

    /// Whether money that does not match the order arrived while it awaits payment.
    pub fn payment_mismatch(self) -> bool {
        matches!(
            self,
            Self::Created {
                payment_mismatch: true,
                ..
            }
        )
    }
}

/// Who cancelled an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Canceller {
    /// The shopper asked.
    Shopper,
    /// The payment deadline passed.
    Deadline,
    /// The shop refunded a paid order (an admin).
    Shop,
}

impl Canceller {
    /// The stored text (`orders.cancelled_by`), also the wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Shopper => "shopper",
            Self::Deadline => "deadline",
            Self::Shop => "shop",
        }
    }
}

/// Stored text that names no known canceller.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown canceller {0:?}")]
pub struct CancellerError(pub String);

impl FromStr for Canceller {
    type Err = CancellerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "shopper" => Ok(Self::Shopper),
            "deadline" => Ok(Self::Deadline),
            "shop" => Ok(Self::Shop),
            other => Err(CancellerError(other.to_owned())),
        }
    }
}

/// A client's key for one request that must take effect once (the `Idempotency-Key` header of
/// an admin's top-up): the same key again answers the same. 1 to 100 visible ASCII characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

/// Why a value is not an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an Idempotency-Key is 1 to 100 visible ASCII characters")]
pub struct IdempotencyKeyError;

impl IdempotencyKey {
    pub const MAX_LEN: usize = 100;

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<&str> for IdempotencyKey {
    type Error = IdempotencyKeyError;
    fn try_from(raw: &str) -> Result<Self, Self::Error> {
        let ok = !raw.is_empty()
            && raw.len() <= Self::MAX_LEN
            && raw.bytes().all(|b| b.is_ascii_graphic());
        ok.then(|| Self(raw.to_owned())).ok_or(IdempotencyKeyError)
    }
}

#[cfg(test)]
mod tests;
