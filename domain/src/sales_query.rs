//! Finding sales in the whole history (issue #55): by a part of the title, by where the sale
//! stands, by when it starts; newest first (by start, then ID), a page at a time after a cursor
//! (keyset paging: no offset, so the thousandth page costs what the first does).

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::{FieldErrors, Period, MAX_TITLE_CHARS};

/// Where a sale stands by its window alone (`upcoming`, `on_sale`, `ended`). Sold out is
/// Redis's to say: here a sold-out sale is on sale until its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SaleStage {
    Upcoming,
    OnSale,
    Ended,
}

impl SaleStage {
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "upcoming" => Some(Self::Upcoming),
            "on_sale" => Some(Self::OnSale),
            "ended" => Some(Self::Ended),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Upcoming => "upcoming",
            Self::OnSale => "on_sale",
            Self::Ended => "ended",
        }
    }
}

/// A place in the newest-first order: the last sale of a page, by its start and ID. The next
/// page holds the sales that start earlier, or at the same instant with a smaller ID. On the
/// wire `<start in ms since the epoch>_<id>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaleCursor {
    pub begins_at: DateTime<Utc>,
    pub id: i64,
}

impl SaleCursor {
    pub fn parse(raw: &str) -> Option<Self> {
        let (ms, id) = raw.split_once('_')?;
        let ms: i64 = ms.parse().ok()?;
        let id: i64 = id.parse().ok()?;
        Some(Self {
            begins_at: DateTime::from_timestamp_millis(ms).filter(crate::period::searchable)?,
            id,
        })
    }
}

impl std::fmt::Display for SaleCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}_{}", self.begins_at.timestamp_millis(), self.id)
    }
}

/// What an admin looks for: every filter optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SaleQuery {
    /// A part of the title (trimmed, matched without regard to case).
    pub title: Option<String>,
    pub stage: Option<SaleStage>,
    /// Sales that start in this period.
    pub starts: Option<Period>,
    /// The page after this place.
    pub after: Option<SaleCursor>,
    /// Sales on a page.
    pub limit: i64,
}

impl SaleQuery {
    /// Sales on a page unless asked for otherwise.
    pub const PAGE: i64 = 25;
    /// The most sales on a page.
    pub const MAX_PAGE: i64 = 100;

    /// Reads `q`, `status`, `from`, `to`, `cursor` and `limit` through `get` (empty values are
    /// absent); `midnight` is a day's first instant in the shop's zone, for date bounds. Every
    /// problem is named at once.
    pub fn parse<'a>(
        get: impl Fn(&str) -> Option<&'a str>,
        midnight: impl Fn(NaiveDate) -> Option<DateTime<Utc>>,
    ) -> Result<Self, FieldErrors> {
        let given = |k: &str| get(k).map(str::trim).filter(|v| !v.is_empty());
        let mut errors = FieldErrors::default();
        let title = given("q").map(str::to_owned);
        if let Some(t) = &title {
            if t.chars().count() > MAX_TITLE_CHARS {
                errors.push("q", format!("must be at most {MAX_TITLE_CHARS} characters"));
            } else if t.chars().any(char::is_control) {
                errors.push("q", "must not contain control characters");
            }
        }
        let stage = given("status").and_then(|s| {
            let stage = SaleStage::parse(s);
            if stage.is_none() {
                errors.push("status", "must be upcoming, on_sale or ended");
            }
            stage
        });
        // One bound alone leaves the other side open.
        let starts = match (given("from"), given("to")) {
            (None, None) => None,
            (from, to) => {
                match Period::parse(
                    from.or(Some("1970-01-01")),
                    to.or(Some("9999-12-31")),
                    midnight,
                ) {
                    Ok(p) => Some(p),
                    Err(e) => {
                        errors.0.extend(e.0);
                        None
                    }
                }
            }
        };
        let after = given("cursor").and_then(|c| {
            let cursor = SaleCursor::parse(c);
            if cursor.is_none() {
                errors.push("cursor", "must be a cursor this API returned as next");
            }
            cursor
        });
        let limit = match given("limit").map(str::parse::<i64>) {
            None => Self::PAGE,
            Some(Ok(n)) if (1..=Self::MAX_PAGE).contains(&n) => n,
            Some(_) => {
                errors.push(
                    "limit",
                    format!("must be a whole number from 1 to {}", Self::MAX_PAGE),
                );
                Self::PAGE
            }
        };
        match errors.is_empty() {
            true => Ok(Self {
                title,
                stage,
                starts,
                after,
                limit,
            }),
            false => Err(errors),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<SaleQuery, FieldErrors> {
        SaleQuery::parse(
            |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| *v),
            |d| d.and_hms_opt(0, 0, 0).map(|t| t.and_utc()),
        )
    }

    #[test]
    fn nothing_asked_is_every_sale_a_page_at_a_time() {
        let q = parse(&[]).expect("valid");
        assert_eq!(
            q,
            SaleQuery {
                limit: SaleQuery::PAGE,
                ..SaleQuery::default()
            }
        );
    }

    #[test]
    fn each_filter_reads_and_a_cursor_goes_round_trip() {
        let cursor = SaleCursor {
            begins_at: DateTime::from_timestamp_millis(1_790_000_000_123).expect("time"),
            id: 42,
        };
        let text = cursor.to_string();
        let q = parse(&[
            ("q", " 茶 "),
            ("status", "ended"),
            ("from", "2026-11-01"),
            ("cursor", &text),
            ("limit", "100"),
        ])
        .expect("valid");
        assert_eq!(
            (q.title.as_deref(), q.stage, q.after, q.limit),
            (Some("茶"), Some(SaleStage::Ended), Some(cursor), 100)
        );
        let starts = q.starts.expect("a period");
        assert_eq!(starts.from().to_rfc3339(), "2026-11-01T00:00:00+00:00");
    }

    #[test]
    fn a_cursor_out_of_the_stores_range_is_a_field_error() {
        for far in ["-300000000000000_1", "8000000000000000_1"] {
            let e = parse(&[("cursor", far)]).expect_err(far);
            assert_eq!(e.0[0].field, "cursor", "{far}");
        }
    }

    #[test]
    fn every_bad_value_is_named() {
        let e = parse(&[
            ("status", "sold"),
            ("cursor", "12"),
            ("limit", "0"),
            ("from", "soon"),
            ("q", "a\u{0}"),
        ])
        .expect_err("invalid");
        let fields: Vec<&str> = e.0.iter().map(|f| f.field.as_str()).collect();
        for f in ["q", "status", "from", "cursor", "limit"] {
            assert!(fields.contains(&f), "{f}: {e}");
        }
    }
}
