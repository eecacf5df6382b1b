//! A draw's wire types: a shopper's standing, their receipt, their move, their proof.

use chrono::{DateTime, Utc};
use domain::{EntryState, OrderId};
use serde::{Deserialize, Serialize};

/// A shopper's standing in a draw (`GET /api/vouchers/{id}/entries/me`, the sale page): the
/// receipt once entered, the inclusion proof once the entrant list is committed, the rank (1
/// first) once drawn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct EntryView {
    /// `none`, `entered`, `won` or `lost`.
    #[cfg_attr(feature = "ssr", schema(value_type = String))]
    pub state: EntryState,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub receipt: Option<ReceiptView>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub proof: Option<ProofView>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>))]
    pub order_id: Option<OrderId>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rank: Option<i64>,
    // Server-side only: no page shows it, so the browser's bundle carries no reader for it
    // (serde skips the field there).
    /// The move that gave this shopper a unit that came back, as the transcript records it.
    #[cfg(feature = "ssr")]
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub moved: Option<MoveView>,
    pub entrants: i64,
    #[serde(deserialize_with = "domain::rfc3339::deserialize")]
    pub draw_at: DateTime<Utc>,
}

/// A draw entry's receipt, signed by the shop (`domain::fair`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReceiptView {
    pub voucher_id: i64,
    pub leaf: String,
    pub salt: String,
    #[serde(deserialize_with = "domain::rfc3339::deserialize")]
    pub entered_at: DateTime<Utc>,
    /// The signing key's id: the transcript's `receipt_key.id`.
    pub key_id: String,
    /// Ed25519 over `"seckill-receipt-v2:{voucher}:{leaf}:{commitment}:{round or -}:{closes_at ms}"`.
    pub signature: String,
}

/// A unit given down a draw's ranking, as recorded: the transcript's `moves[seq - 1]`.
#[cfg(feature = "ssr")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct MoveView {
    /// 1 first: its place in the transcript's `moves`.
    pub seq: i64,
    /// `cancelled`, `unpaid`, `refunded` or `added`.
    pub reason: String,
    /// When the unit was admitted.
    #[serde(deserialize_with = "domain::rfc3339::deserialize")]
    pub at: DateTime<Utc>,
    /// When the shop recorded it.
    #[serde(deserialize_with = "domain::rfc3339::deserialize")]
    pub recorded_at: DateTime<Utc>,
    /// The chain's link at this move, hex.
    pub hash: String,
}

/// An RFC 9162 inclusion proof of a leaf in a draw's committed entrant list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ProofView {
    pub index: u64,
    pub tree_size: u64,
    pub path: Vec<String>,
}
