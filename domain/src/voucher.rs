//! Vouchers: what an admin submits ([`VoucherDraft`]), what survives validation
//! ([`NewVoucher`]) and what is stored ([`Voucher`]).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::{
    opening::DEFAULT_ENTRY_LEAD, FieldErrors, Opening, OpeningKind, SaleWindow, Stock, VoucherId,
    VoucherStatus,
};

/// The highest price, in cents (¥1,000,000.00).
pub const MAX_PRICE_CENTS: i64 = 100_000_000;
/// The longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 100;
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 2_000;

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
    /// `first_come` (or empty) or `draw`.
    #[serde(default)]
    pub opening: String,
    /// RFC 3339 with offset; empty for a draw is 10 minutes before `begins_at`.
    #[serde(default)]
    pub entries_open_at: String,
}

/// A validated voucher, ready to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewVoucher {
    pub title: String,
    pub description: String,
    pub price_cents: i64,
    pub stock: Stock,
    pub window: SaleWindow,
    pub opening: Opening,
}

impl NewVoucher {
    /// Applies the rules to a draft; `now` is when the admin submits (a sale must end in the
    /// future). Returns every field's problem at once.
    pub fn parse(draft: &VoucherDraft, now: DateTime<Utc>) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::default();
        let title = title(&draft.title, &mut errors);
        let description = description(&draft.description, &mut errors);
        let price = price(&draft.price_cents, &mut errors);
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
        let window = window(begins, &draft.ends_at, now, &mut errors);
        let opening = opening(draft, begins, now, &mut errors);
        match (price, stock, window, opening) {
            (Some(price_cents), Some(stock), Some(window), Some(opening)) if errors.is_empty() => {
                Ok(Self {
                    title: title.to_owned(),
                    description: description.to_owned(),
                    price_cents,
                    stock,
                    window,
                    opening,
                })
            }
            _ => Err(errors),
        }
    }
}

/// The title, trimmed: required, at most `MAX_TITLE_CHARS`, no control characters.
fn title<'a>(raw: &'a str, errors: &mut FieldErrors) -> &'a str {
    let title = raw.trim();
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
    title
}

/// The description, trimmed: at most `MAX_DESCRIPTION_CHARS`; line breaks and tabs are how
/// people write one, NUL and the other control characters are not text (PostgreSQL refuses NUL
/// outright).
fn description<'a>(raw: &'a str, errors: &mut FieldErrors) -> &'a str {
    let description = raw.trim();
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        errors.push(
            "description",
            format!("must be at most {MAX_DESCRIPTION_CHARS} characters"),
        );
    } else if description
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        errors.push("description", "must not contain control characters");
    }
    description
}

/// The price in cents: a whole number from 0 to `MAX_PRICE_CENTS`.
fn price(raw: &str, errors: &mut FieldErrors) -> Option<i64> {
    match whole_number(raw) {
        Some(p) if (0..=MAX_PRICE_CENTS).contains(&p) => Some(p),
        Some(_) => {
            errors.push(
                "price_cents",
                format!(
                    "must be between 0 and {} cents",
                    crate::grouped(MAX_PRICE_CENTS)
                ),
            );
            None
        }
        None => {
            errors.push("price_cents", "must be a whole number of cents");
            None
        }
    }
}

/// The sale's window: its end an instant in the future, after `begins` when that parsed.
fn window(
    begins: Option<DateTime<Utc>>,
    ends_raw: &str,
    now: DateTime<Utc>,
    errors: &mut FieldErrors,
) -> Option<SaleWindow> {
    match (begins, instant(ends_raw)) {
        (_, None) => {
            errors.push("ends_at", instant_message(ends_raw));
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
    }
}

/// The draft's opening: a draw's entries open before the sale begins and after `now` would be
/// pointless to require (an admin may create a draw whose entries are already open), so only
/// the order against `begins_at` is a rule.
fn opening(
    draft: &VoucherDraft,
    begins: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    errors: &mut FieldErrors,
) -> Option<Opening> {
    let Some(kind) = OpeningKind::parse(&draft.opening) else {
        errors.push("opening", "must be first_come or draw");
        return None;
    };
    let entries = draft.entries_open_at.trim();
    match kind {
        OpeningKind::FirstCome if entries.is_empty() => Some(Opening::FirstCome),
        OpeningKind::FirstCome => {
            errors.push("entries_open_at", "is only for a draw");
            None
        }
        OpeningKind::Draw => {
            let begins = begins?;
            let at = if entries.is_empty() {
                (begins - DEFAULT_ENTRY_LEAD).max(now.min(begins - chrono::Duration::seconds(1)))
            } else if let Some(at) = instant(entries) {
                at
            } else {
                errors.push("entries_open_at", instant_message(entries));
                return None;
            };
            if at >= begins {
                errors.push("entries_open_at", "must be before the start");
                return None;
            }
            if begins <= now {
                errors.push("begins_at", "must be in the future for a draw");
                return None;
            }
            Some(Opening::Draw {
                entries_open_at: at,
            })
        }
    }
}

fn whole_number(raw: &str) -> Option<i64> {
    raw.trim().parse().ok()
}

fn instant(raw: &str) -> Option<DateTime<Utc>> {
    if raw.chars().any(char::is_control) {
        return None;
    }
    DateTime::parse_from_rfc3339(raw.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
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
    /// Units an admin added since.
    pub added_stock: i64,
    /// Units PostgreSQL has not yet sold (initial + added − live orders written).
    pub db_stock: i64,
    pub window: SaleWindow,
    pub opening: Opening,
    pub created_at: DateTime<Utc>,
}

impl Voucher {
    /// Every unit the sale has offered: the initial stock and what was added.
    pub fn total_stock(&self) -> i64 {
        self.initial_stock + self.added_stock
    }

    /// Where the sale stands at `now` with `remaining` units left.
    pub fn status(&self, remaining: i64, now: DateTime<Utc>) -> VoucherStatus {
        VoucherStatus::at(&self.window, remaining, now)
    }
}

/// Why a date-time field did not parse.
fn instant_message(raw: &str) -> &'static str {
    if raw.trim().is_empty() {
        "is required"
    } else {
        "must be a date and time with a UTC offset"
    }
}

mod edit;

pub use edit::{check_edit, editable, EditProblem, EditRefusal, VoucherPatch};

#[cfg(test)]
mod tests;
