//! Vouchers: what an admin submits ([`VoucherDraft`]), what survives validation
//! ([`NewVoucher`]) and what is stored ([`Voucher`]).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::VoucherId;

/// The largest stock one voucher may have.
pub const MAX_STOCK: i64 = 10_000_000;
const MAX_PRICE_CENTS: i64 = 100_000_000;
const MAX_TITLE_CHARS: usize = 100;
const MAX_DESCRIPTION_CHARS: usize = 2_000;

/// One field's problem, in words for the person who typed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// Every problem of one submission, at most one per field, in form order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("invalid voucher: {}", self.0.iter().map(|e| format!("{}: {}", e.field, e.message)).collect::<Vec<_>>().join("; "))]
pub struct FieldErrors(pub Vec<FieldError>);

impl FieldErrors {
    fn push(&mut self, field: &str, message: impl Into<String>) {
        self.0.push(FieldError {
            field: field.to_owned(),
            message: message.into(),
        });
    }

    pub fn get(&self, field: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|e| e.field == field)
            .map(|e| e.message.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A voucher as submitted, every field still text: a form sends text, and the REST adapter
/// turns JSON values into text, so both paths meet the same rules and messages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoucherDraft {
    pub title: String,
    pub description: String,
    pub price_cents: String,
    pub stock: String,
    /// RFC 3339 with offset.
    pub begins_at: String,
    /// RFC 3339 with offset.
    pub ends_at: String,
}

/// A positive stock no larger than [`MAX_STOCK`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stock(i64);

impl Stock {
    pub fn get(self) -> i64 {
        self.0
    }
}

impl TryFrom<i64> for Stock {
    type Error = String;
    fn try_from(value: i64) -> Result<Self, Self::Error> {
        if (1..=MAX_STOCK).contains(&value) {
            Ok(Self(value))
        } else {
            Err(format!("must be between 1 and {MAX_STOCK}"))
        }
    }
}

/// When a sale is open: `[begins_at, ends_at)`, judged by the Redis server's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaleWindow {
    begins_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
}

impl SaleWindow {
    /// A window that ends after it begins.
    pub fn new(begins_at: DateTime<Utc>, ends_at: DateTime<Utc>) -> Result<Self, String> {
        if ends_at <= begins_at {
            return Err("must be after the start".to_owned());
        }
        Ok(Self { begins_at, ends_at })
    }

    pub fn begins_at(&self) -> DateTime<Utc> {
        self.begins_at
    }
    pub fn ends_at(&self) -> DateTime<Utc> {
        self.ends_at
    }
}

/// A validated voucher, ready to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewVoucher {
    pub title: String,
    pub description: String,
    pub price_cents: i64,
    pub stock: Stock,
    pub window: SaleWindow,
}

impl NewVoucher {
    /// Applies the rules to a draft; `now` is when the admin submits (a sale must end in the
    /// future). Returns every field's problem at once.
    pub fn parse(draft: &VoucherDraft, now: DateTime<Utc>) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::default();
        let title = draft.title.trim();
        if title.is_empty() {
            errors.push("title", "is required");
        } else if title.chars().count() > MAX_TITLE_CHARS {
            errors.push(
                "title",
                format!("must be at most {MAX_TITLE_CHARS} characters"),
            );
        } else if title.chars().any(char::is_control) {
            errors.push("title", "must not contain control characters");
        }
        let description = draft.description.trim();
        if description.chars().count() > MAX_DESCRIPTION_CHARS {
            errors.push(
                "description",
                format!("must be at most {MAX_DESCRIPTION_CHARS} characters"),
            );
        }
        let price = match whole_number(&draft.price_cents) {
            Some(p) if (0..=MAX_PRICE_CENTS).contains(&p) => Some(p),
            Some(_) => {
                errors.push(
                    "price_cents",
                    format!("must be between 0 and {MAX_PRICE_CENTS} cents"),
                );
                None
            }
            None => {
                errors.push("price_cents", "must be a whole number of cents");
                None
            }
        };
        let stock = match whole_number(&draft.stock).map(Stock::try_from) {
            Some(Ok(s)) => Some(s),
            Some(Err(message)) => {
                errors.push("stock", message);
                None
            }
            None => {
                errors.push("stock", "must be a whole number");
                None
            }
        };
        let begins = instant(&draft.begins_at);
        if begins.is_none() {
            errors.push("begins_at", instant_message(&draft.begins_at));
        }
        let ends = instant(&draft.ends_at);
        let window = match (begins, ends) {
            (_, None) => {
                errors.push("ends_at", instant_message(&draft.ends_at));
                None
            }
            (_, Some(e)) if e <= now => {
                errors.push("ends_at", "must be in the future");
                None
            }
            (Some(b), Some(e)) => match SaleWindow::new(b, e) {
                Ok(w) => Some(w),
                Err(message) => {
                    errors.push("ends_at", message);
                    None
                }
            },
            (None, Some(_)) => None,
        };
        match (price, stock, window) {
            (Some(price_cents), Some(stock), Some(window)) if errors.is_empty() => Ok(Self {
                title: title.to_owned(),
                description: description.to_owned(),
                price_cents,
                stock,
                window,
            }),
            _ => Err(errors),
        }
    }
}

fn whole_number(raw: &str) -> Option<i64> {
    raw.trim().parse().ok()
}

fn instant(raw: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(raw.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Where a voucher's sale stands, for listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VoucherStatus {
    Upcoming,
    OnSale,
    SoldOut,
    Ended,
}

impl VoucherStatus {
    /// Classifies a sale at `now` with `remaining` units left.
    pub fn at(window: &SaleWindow, remaining: i64, now: DateTime<Utc>) -> Self {
        if now >= window.ends_at() {
            Self::Ended
        } else if remaining <= 0 {
            Self::SoldOut
        } else if now < window.begins_at() {
            Self::Upcoming
        } else {
            Self::OnSale
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Upcoming => "upcoming",
            Self::OnSale => "on_sale",
            Self::SoldOut => "sold_out",
            Self::Ended => "ended",
        }
    }
}

/// A stored voucher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voucher {
    pub id: VoucherId,
    pub title: String,
    pub description: String,
    pub price_cents: i64,
    /// The stock the sale started with.
    pub initial_stock: i64,
    /// Units PostgreSQL has not yet sold (initial minus orders written).
    pub db_stock: i64,
    pub window: SaleWindow,
    pub created_at: DateTime<Utc>,
}

/// Why a date-time field did not parse.
fn instant_message(raw: &str) -> &'static str {
    if raw.trim().is_empty() {
        "is required"
    } else {
        "must be a date and time with a UTC offset"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-22T12:00:00Z")
            .expect("literal")
            .with_timezone(&Utc)
    }

    fn draft() -> VoucherDraft {
        VoucherDraft {
            title: "  ¥50 off  ".into(),
            description: "Any order over ¥200".into(),
            price_cents: "990".into(),
            stock: "100".into(),
            begins_at: "2026-11-22T21:00:00+08:00".into(),
            ends_at: "2026-11-23T12:00:00Z".into(),
        }
    }

    #[test]
    fn a_good_draft_parses_and_times_become_utc() {
        let v = NewVoucher::parse(&draft(), now()).expect("valid");
        assert_eq!(v.title, "¥50 off");
        assert_eq!(v.stock.get(), 100);
        assert_eq!(
            v.window.begins_at().to_rfc3339(),
            "2026-11-22T13:00:00+00:00"
        );
    }

    #[test]
    fn every_bad_field_gets_its_own_message() {
        let bad = VoucherDraft {
            title: " ".into(),
            description: "x".repeat(2_001),
            price_cents: "9.90".into(),
            stock: "0".into(),
            begins_at: "tomorrow".into(),
            ends_at: "2026-11-22T11:00:00Z".into(),
        };
        let errors = NewVoucher::parse(&bad, now()).expect_err("invalid");
        assert_eq!(errors.get("title"), Some("is required"));
        assert!(errors.get("description").is_some());
        assert_eq!(
            errors.get("price_cents"),
            Some("must be a whole number of cents")
        );
        assert_eq!(errors.get("stock"), Some("must be between 1 and 10000000"));
        assert_eq!(
            errors.get("begins_at"),
            Some("must be a date and time with a UTC offset")
        );
        assert_eq!(errors.get("ends_at"), Some("must be in the future"));
    }

    #[test]
    fn empty_times_are_required_not_malformed() {
        let mut d = draft();
        d.begins_at = " ".into();
        d.ends_at = String::new();
        let errors = NewVoucher::parse(&d, now()).expect_err("invalid");
        assert_eq!(errors.get("begins_at"), Some("is required"));
        assert_eq!(errors.get("ends_at"), Some("is required"));
    }

    #[test]
    fn the_window_must_end_after_it_begins() {
        let mut d = draft();
        d.ends_at = "2026-11-22T20:30:00+08:00".into();
        let errors = NewVoucher::parse(&d, now()).expect_err("invalid");
        assert_eq!(errors.get("ends_at"), Some("must be after the start"));
        assert_eq!(errors.0.len(), 1);
    }

    #[test]
    fn status_follows_the_clock_and_the_stock() {
        let w = NewVoucher::parse(&draft(), now()).expect("valid").window;
        assert_eq!(VoucherStatus::at(&w, 5, now()), VoucherStatus::Upcoming);
        let open = w.begins_at();
        assert_eq!(VoucherStatus::at(&w, 5, open), VoucherStatus::OnSale);
        assert_eq!(VoucherStatus::at(&w, 0, open), VoucherStatus::SoldOut);
        assert_eq!(VoucherStatus::at(&w, 5, w.ends_at()), VoucherStatus::Ended);
    }
}
