//! A draw's transcript (`GET /api/vouchers/{id}/draw`): each part published as soon as it is
//! fixed. Fields not known yet are absent from the JSON.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{MoveReason, ReceiptKeyView};

/// The beacon round a draw takes its randomness from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BeaconView {
    pub url: String,
    pub chain_hash: String,
    pub round: u64,
    /// The round named at creation, when the close came after it was emitted.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub planned_round: Option<u64>,
}

/// The outside witness of the committed list: an RFC 3161 timestamp token over
/// `witness_imprint(voucher, entries_root, round)`, from the authority `tsa`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WitnessView {
    /// The authority's URL, as the shop asked it.
    pub tsa: String,
    /// The authority's time in the token (`genTime`).
    pub at: DateTime<Utc>,
    /// The `TimeStampToken` (a CMS ContentInfo), DER in hex: `openssl ts -verify -token_in`.
    pub token: String,
}

/// One entrant of the ranking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankedLeaf {
    /// 1 first.
    pub rank: i64,
    pub leaf: String,
    pub key: String,
}

/// A unit given to the next entrant by rank after the draw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    pub leaf: String,
    pub reason: MoveReason,
    /// When the unit was admitted (the order ID's second).
    pub at: DateTime<Utc>,
    /// When the shop recorded the move (appended, never rewritten).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub recorded_at: Option<DateTime<Utc>>,
    /// `SHA-256("{previous hash}:{leaf}:{reason}")`, the seed as the first previous hash.
    pub hash: String,
}

/// A draw's transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transcript {
    pub voucher_id: i64,
    /// SHA-256 of the committed secret, hex.
    pub commitment: String,
    pub entries_open_at: DateTime<Utc>,
    /// Entries close at the sale's start.
    pub closes_at: DateTime<Utc>,
    pub beacon: Option<BeaconView>,
    /// The key this sale's receipts are signed with, fixed at its creation.
    pub receipt_key: ReceiptKeyView,
    pub entrants: i64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub closed_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub entries_root: Option<String>,
    /// The leaves sorted ascending, as the root hashes them.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub leaves: Option<Vec<String>>,
    /// The committed list's timestamp by an authority outside the shop, once had.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub witness: Option<WitnessView>,
    /// The secret committed at creation: after the draw, or once a sale ended before its start.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub committed_seed: Option<String>,
    /// The beacon round's randomness (empty without a beacon).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub randomness: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub seed: Option<String>,
    /// Units at the draw.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stock: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ranking: Option<Vec<RankedLeaf>>,
    /// The leaves the draw itself admitted, before any unit came back.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub winners: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub moves: Option<Vec<Move>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub drawn_at: Option<DateTime<Utc>>,
}
