//! A period of the books: from one instant (included) to another (excluded), as an accountant
//! asks for it (`?from=2026-11-01T00:00:00+08:00&to=2026-12-01T00:00:00+08:00`), or by days as
//! a date field sends them (`?from=2026-11-01&to=2026-11-30`: the first day's start to the last
//! day's end, in the shop's zone).

use chrono::{DateTime, Datelike, Days, NaiveDate, Utc};

use crate::{rfc3339, FieldErrors};

/// `[from, to)`, `from` before `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    from: DateTime<Utc>,
    to: DateTime<Utc>,
}

impl Period {
    /// Both bounds as RFC 3339 with their offset, or as dates (`YYYY-MM-DD`): `from` a day's
    /// start, `to` a day's end (the day included), `midnight` telling when a day starts in the
    /// shop's zone. Every problem at once, by field.
    pub fn parse(
        from: Option<&str>,
        to: Option<&str>,
        midnight: impl Fn(NaiveDate) -> Option<DateTime<Utc>>,
    ) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::default();
        let from = bound(&mut errors, "from", from, 0, &midnight);
        let to = bound(&mut errors, "to", to, 1, &midnight);
        match (from, to) {
            (Some(from), Some(to)) if from < to => Ok(Self { from, to }),
            (Some(_), Some(_)) => {
                errors.push("to", "must be after from");
                Err(errors)
            }
            _ => Err(errors),
        }
    }

    /// The first instant in the period.
    pub fn from(self) -> DateTime<Utc> {
        self.from
    }

    /// The first instant after the period.
    pub fn to(self) -> DateTime<Utc> {
        self.to
    }
}

impl std::fmt::Display for Period {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} to {}", self.from.to_rfc3339(), self.to.to_rfc3339())
    }
}

/// Whether `at` is an instant the shop can look for: years 0 to 10,000. chrono reads dates
/// hundreds of thousands of years out (`+200000-01-01`) that PostgreSQL refuses to compare
/// with, which would make a visitor's typo a store error.
pub fn searchable(at: &DateTime<Utc>) -> bool {
    (0..=10_000).contains(&at.year())
}

/// What a bound may be.
const BOUND_RULE: &str = "must be a date (2026-11-01) or an RFC 3339 date and time with its offset (2026-11-01T00:00:00+08:00)";

/// One bound: an instant, or the start of the day `days_after` the date given.
fn bound(
    errors: &mut FieldErrors,
    field: &str,
    text: Option<&str>,
    days_after: u64,
    midnight: &impl Fn(NaiveDate) -> Option<DateTime<Utc>>,
) -> Option<DateTime<Utc>> {
    let text = text.map(str::trim).unwrap_or_default();
    if text.is_empty() {
        errors.push(field, "is required");
        return None;
    }
    let at = rfc3339::parse(text)
        .or_else(|| {
            let day = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
            midnight(day.checked_add_days(Days::new(days_after))?)
        })
        .filter(searchable);
    if at.is_none() {
        errors.push(field, BOUND_RULE);
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Days start at midnight UTC+8.
    fn beijing(day: NaiveDate) -> Option<DateTime<Utc>> {
        Some(day.and_hms_opt(0, 0, 0)?.and_utc() - chrono::Duration::hours(8))
    }

    fn parse(from: Option<&str>, to: Option<&str>) -> Result<Period, FieldErrors> {
        Period::parse(from, to, beijing)
    }

    #[test]
    fn a_date_the_store_cannot_compare_with_is_a_field_error() {
        for far in ["+200000-01-01", "-5000-01-01"] {
            let e = parse(Some(far), None).expect_err(far);
            assert!(e.0.iter().any(|f| f.field == "from"), "{far}: {e:?}");
            let e = parse(None, Some(far)).expect_err(far);
            assert!(e.0.iter().any(|f| f.field == "to"), "{far}: {e:?}");
        }
        // The widest a form can ask for still reads.
        assert!(parse(Some("0001-01-01"), Some("9999-12-31")).is_ok());
    }

    #[test]
    fn a_period_reads_both_bounds_with_their_offsets() {
        let p = parse(
            Some("2026-11-01T00:00:00+08:00"),
            Some("2026-12-01T00:00:00Z"),
        )
        .expect("a period");
        assert_eq!(p.from().to_rfc3339(), "2026-10-31T16:00:00+00:00");
        assert_eq!(p.to().to_rfc3339(), "2026-12-01T00:00:00+00:00");
    }

    #[test]
    fn days_run_from_the_first_ones_start_to_the_last_ones_end_in_the_shops_zone() {
        let p = parse(Some("2026-11-01"), Some("2026-11-30")).expect("a period");
        assert_eq!(p.from().to_rfc3339(), "2026-10-31T16:00:00+00:00");
        assert_eq!(p.to().to_rfc3339(), "2026-11-30T16:00:00+00:00");
        // One day is a period.
        let day = parse(Some("2026-11-28"), Some("2026-11-28")).expect("a day");
        assert_eq!(day.to() - day.from(), chrono::Duration::days(1));
    }

    #[test]
    fn a_period_refuses_missing_malformed_and_backward_bounds_by_field() {
        let fields = |from, to| {
            parse(from, to)
                .expect_err("refused")
                .0
                .into_iter()
                .map(|e| e.field)
                .collect::<Vec<_>>()
        };
        assert_eq!(fields(None, None), ["from", "to"]);
        assert_eq!(fields(Some("2026-11-31"), Some("")), ["from", "to"]);
        assert_eq!(fields(Some("2026-11-02"), Some("2026-11-01")), ["to"]);
        assert_eq!(
            fields(Some("2026-11-02T00:00:00Z"), Some("2026-11-01T00:00:00Z")),
            ["to"]
        );
        assert_eq!(
            fields(Some("2026-11-01T00:00:00Z"), Some("2026-11-01T00:00:00Z")),
            ["to"]
        );
    }
}
