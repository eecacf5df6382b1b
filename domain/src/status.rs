//! Where a voucher's sale stands: one rule, used by the server's listings and the browser's
//! countdown alike.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::SaleWindow;

/// The phase of a sale at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VoucherStatus {
    Upcoming,
    OnSale,
    SoldOut,
    Ended,
}

impl VoucherStatus {
    /// Every status, in the order a shopper filters by them.
    pub const ALL: [Self; 4] = [Self::OnSale, Self::Upcoming, Self::SoldOut, Self::Ended];

    /// Classifies a sale at `now` with `remaining` units left: ended, else sold out, else by
    /// the window's start.
    pub fn at(window: &SaleWindow, remaining: i64, now: DateTime<Utc>) -> Self {
        Self::between(window.begins_at(), window.ends_at(), remaining, now)
    }

    /// [`VoucherStatus::at`] for a window given by its two instants (a page's island gets them
    /// as props, already checked by the server).
    pub fn between(
        begins: DateTime<Utc>,
        ends: DateTime<Utc>,
        remaining: i64,
        now: DateTime<Utc>,
    ) -> Self {
        if now >= ends {
            Self::Ended
        } else if remaining <= 0 {
            Self::SoldOut
        } else if now < begins {
            Self::Upcoming
        } else {
            Self::OnSale
        }
    }

    /// The status of a wire name (`on_sale`, …), as a page's `?status=` names it.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The wire name (`on_sale`, …), also the pages' CSS class suffix.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Upcoming => "upcoming",
            Self::OnSale => "on_sale",
            Self::SoldOut => "sold_out",
            Self::Ended => "ended",
        }
    }

    /// Words for a badge.
    pub fn label(self) -> &'static str {
        match self {
            Self::Upcoming => "Upcoming",
            Self::OnSale => "On sale",
            Self::SoldOut => "Sold out",
            Self::Ended => "Ended",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phase_is_ended_then_sold_out_then_by_the_start() {
        let begins = DateTime::parse_from_rfc3339("2030-01-01T10:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .expect("time");
        let w = SaleWindow::new(begins, begins + chrono::Duration::hours(1)).expect("window");
        let at = |secs: i64| begins + chrono::Duration::seconds(secs);
        assert_eq!(VoucherStatus::at(&w, 3, at(-1)), VoucherStatus::Upcoming);
        assert_eq!(VoucherStatus::at(&w, 3, at(0)), VoucherStatus::OnSale);
        assert_eq!(VoucherStatus::at(&w, 3, at(3_599)), VoucherStatus::OnSale);
        assert_eq!(VoucherStatus::at(&w, 3, at(3_600)), VoucherStatus::Ended);
        assert_eq!(VoucherStatus::at(&w, 0, at(10)), VoucherStatus::SoldOut);
        assert_eq!(VoucherStatus::at(&w, 0, at(-10)), VoucherStatus::SoldOut);
        assert_eq!(VoucherStatus::at(&w, 0, at(4_000)), VoucherStatus::Ended);
    }

    #[test]
    fn a_status_is_parsed_from_its_wire_name_only() {
        for s in VoucherStatus::ALL {
            assert_eq!(VoucherStatus::parse(s.as_str()), Some(s));
        }
        for bad in ["", "On sale", "on-sale", "ON_SALE", "all", "on_sale "] {
            assert_eq!(VoucherStatus::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_wire_name_is_the_serde_name() {
        for s in VoucherStatus::ALL {
            let json = serde_json::to_string(&s).expect("serializes");
            assert_eq!(json, format!("\"{}\"", s.as_str()));
        }
    }
}
