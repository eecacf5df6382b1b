//! A period of the books: from one instant (included) to another (excluded), as an accountant
//! asks for it (`?from=2026-11-01T00:00:00+08:00&to=2026-12-01T00:00:00+08:00`).

use chrono::{DateTime, Utc};

use crate::{rfc3339, FieldErrors};

/// `[from, to)`, `from` before `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    from: DateTime<Utc>,
    to: DateTime<Utc>,
}

impl Period {
    /// Both bounds as RFC 3339 with their offset; every problem at once, by field.
    pub fn parse(from: Option<&str>, to: Option<&str>) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::default();
        let mut bound = |field: &str, text: Option<&str>| {
            match text.map(str::trim) {
            None | Some("") => {
                errors.push(field, "is required");
                None
            }
            Some(text) => rfc3339::parse(text).or_else(|| {
                errors.push(
                    field,
                    "must be an RFC 3339 date and time with its offset, such as 2026-11-01T00:00:00+08:00",
                );
                None
            }),
        }
        };
        let (from, to) = (bound("from", from), bound("to", to));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_period_reads_both_bounds_with_their_offsets() {
        let p = Period::parse(
            Some("2026-11-01T00:00:00+08:00"),
            Some("2026-12-01T00:00:00Z"),
        )
        .expect("a period");
        assert_eq!(p.from().to_rfc3339(), "2026-10-31T16:00:00+00:00");
        assert_eq!(p.to().to_rfc3339(), "2026-12-01T00:00:00+00:00");
    }

    #[test]
    fn a_period_refuses_missing_malformed_and_backward_bounds_by_field() {
        let fields = |from, to| {
            Period::parse(from, to)
                .expect_err("refused")
                .0
                .into_iter()
                .map(|e| e.field)
                .collect::<Vec<_>>()
        };
        assert_eq!(fields(None, None), ["from", "to"]);
        assert_eq!(fields(Some("2026-11-01"), Some("")), ["from", "to"]);
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
