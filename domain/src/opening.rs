//! How a sale opens: first come, first served, or a draw among the shoppers who entered before
//! it (design.md decision 34).

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

/// How long before the sale's start entries open when the admin does not say.
pub const DEFAULT_ENTRY_LEAD: Duration = Duration::minutes(10);

/// The opening's kind, as the wire names it (`"first_come"`, `"draw"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpeningKind {
    #[default]
    FirstCome,
    Draw,
}

impl OpeningKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FirstCome => "first_come",
            Self::Draw => "draw",
        }
    }

    /// Parses the wire name; an empty text is the default.
    pub fn parse(raw: &str) -> Option<Self> {
        match raw.trim() {
            "" | "first_come" => Some(Self::FirstCome),
            "draw" => Some(Self::Draw),
            _ => None,
        }
    }
}

/// A sale's opening. A draw's entries open strictly before the sale begins (checked where the
/// voucher is parsed, against its window).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "opening", rename_all = "snake_case")]
pub enum Opening {
    /// The first buys to reach Redis win.
    #[default]
    FirstCome,
    /// Shoppers enter from `entries_open_at` until the sale begins; at the start the draw
    /// admits the entrants in the order of their tags.
    Draw { entries_open_at: DateTime<Utc> },
}

impl Opening {
    pub fn kind(self) -> OpeningKind {
        match self {
            Self::FirstCome => OpeningKind::FirstCome,
            Self::Draw { .. } => OpeningKind::Draw,
        }
    }

    pub fn entries_open_at(self) -> Option<DateTime<Utc>> {
        match self {
            Self::FirstCome => None,
            Self::Draw { entries_open_at } => Some(entries_open_at),
        }
    }

    pub fn is_draw(self) -> bool {
        matches!(self, Self::Draw { .. })
    }
}

/// Where a shopper stands in a draw (`GET /api/vouchers/{id}/entries/me`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryState {
    /// Not entered.
    None,
    /// Entered; the draw has not run (or is being recorded).
    Entered,
    /// Drawn a unit: an order was admitted for the shopper.
    Won,
    /// Ranked after the units; a unit that comes back goes to the next in rank.
    Lost,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_parses_its_wire_names_and_defaults_to_first_come() {
        assert_eq!(OpeningKind::parse(""), Some(OpeningKind::FirstCome));
        assert_eq!(OpeningKind::parse(" draw "), Some(OpeningKind::Draw));
        assert_eq!(OpeningKind::parse("raffle"), None);
        for k in [OpeningKind::FirstCome, OpeningKind::Draw] {
            assert_eq!(OpeningKind::parse(k.as_str()), Some(k));
            assert_eq!(
                serde_json::to_string(&k).expect("json"),
                format!("\"{}\"", k.as_str())
            );
        }
    }

    #[test]
    fn an_opening_is_tagged_on_the_wire() {
        let at = DateTime::parse_from_rfc3339("2030-01-01T10:00:00Z")
            .expect("time")
            .with_timezone(&Utc);
        let json = serde_json::to_value(Opening::Draw {
            entries_open_at: at,
        })
        .expect("json");
        assert_eq!(json["opening"], "draw");
        assert_eq!(json["entries_open_at"], "2030-01-01T10:00:00Z");
        let first = serde_json::to_value(Opening::FirstCome).expect("json");
        assert_eq!(first, serde_json::json!({"opening": "first_come"}));
    }
}
