//! [`AppError`]: the one error type of the UI's server functions and of the REST API.
//!
//! Policy: every refusal a user can cause has its own variant, a stable `code` (the REST
//! `error` field), an HTTP status and a sentence for people. Anything else is `Internal`: the
//! cause is logged on the server with its chain and a reference, and the user sees only the
//! reference.

use leptos::server_fn::{
    codec::JsonEncoding,
    error::{FromServerFnError, ServerFnErrorErr},
};
use serde::{Deserialize, Serialize};

use domain::FieldErrors;

/// A refusal, or an opaque failure, as users and clients see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum AppError {
    Unauthenticated,
    Forbidden,
    /// A request that changes something, sent from another site's page (a forged form or
    /// script): refused whoever the visitor is.
    CrossSite,
    NotFound,
    SoldOut,
    /// Carries the shopper's order on this sale, which the page links to.
    AlreadyBought(domain::OrderId),
    NotStarted,
    Ended,
    RateLimited,
    /// A draw sale before its draw, or while its units go to the entrants by rank.
    DrawPending,
    EntriesNotOpen,
    EntriesClosed,
    NotADraw,
    /// Ending a draw sale whose entry list is committed, before its ranking is published.
    DrawCommitted,
    /// An admin's edit of a sale that has opened to shoppers (started, or its draw's entries
    /// open).
    SaleStarted,
    /// A reminder asked for or taken back once the sale has opened.
    SaleOpen,
    /// A reminder taken back while it is being sent.
    ReminderSending,
    /// A sign-in code was sent moments ago: another may be asked for in this many seconds.
    CodeResendWait(u64),
    /// Too many sign-in attempts or code requests (from this address, or wrong codes for this
    /// phone): allowed again in this many seconds.
    TryAgainIn(u64),
    /// This client holds as many sale streams open as it may.
    TooManyStreams,
    OrderQueued,
    OrderFailed,
    OrderCancelled,
    PaymentExpired,
    AlreadyPaid,
    OrderConfirmed,
    /// An admin's refund of an order nothing was paid for.
    NotPaid,
    /// The payment provider did not answer: the order keeps its time to pay.
    PaymentUnavailable,
    /// A payment provider's notification whose signature does not hold: nothing was read.
    BadSignature(String),
    InvalidPhone,
    InvalidCode,
    /// The SMS gateway did not take the code: asking again is allowed at once.
    CodeNotSent,
    Invalid(FieldErrors),
    BadRequest(String),
    MethodNotAllowed,
    TooLarge,
    Timeout,
    Unavailable,
    Internal(String),
    Transport(String),
}

/// The English sentence (logs; people read [`AppError::message`] in their language). One copy
/// of each sentence: the catalogue's.
impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message(i18n::Lang::En))
    }
}

impl std::error::Error for AppError {}

impl AppError {
    /// The refusal an admin's action recorded by its code (`admin_actions.code`), said again in
    /// the reader's language; `None` for a code that names no refusal (unknown, a failure, or
    /// one whose sentence needs data the record does not keep).
    pub fn of_recorded_refusal(code: &str) -> Option<Self> {
        match Self::from_wire(code, "", FieldErrors::default()) {
            Self::Transport(_)
            | Self::Internal(_)
            | Self::Unavailable
            | Self::BadRequest(_)
            | Self::BadSignature(_)
            | Self::CodeResendWait(_)
            | Self::TryAgainIn(_) => None,
            refusal => Some(refusal),
        }
    }

    /// The stable machine code (REST `error` field).
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unauthenticated => "unauthenticated",
            Self::Forbidden => "forbidden",
            Self::CrossSite => "cross_site",
            Self::NotFound => "not_found",
            Self::SoldOut => "sold_out",
            Self::AlreadyBought(_) => "already_bought",
            Self::NotStarted => "not_started",
            Self::DrawPending => "draw_pending",
            Self::EntriesNotOpen => "entries_not_open",
            Self::EntriesClosed => "entries_closed",
            Self::NotADraw => "not_a_draw",
            Self::DrawCommitted => "draw_committed",
            Self::SaleStarted => "sale_started",
            Self::SaleOpen => "sale_open",
            Self::ReminderSending => "reminder_sending",
            Self::Ended => "ended",
            Self::RateLimited
            | Self::CodeResendWait(_)
            | Self::TryAgainIn(_)
            | Self::TooManyStreams => "rate_limited",
            Self::OrderQueued => "order_queued",
            Self::OrderFailed => "order_failed",
            Self::OrderCancelled => "order_cancelled",
            Self::PaymentExpired => "payment_expired",
            Self::AlreadyPaid => "already_paid",
            Self::OrderConfirmed => "order_confirmed",
            Self::NotPaid => "not_paid",
            Self::PaymentUnavailable => "payment_unavailable",
            Self::BadSignature(_) => "bad_signature",
            Self::InvalidPhone => "invalid_phone",
            Self::InvalidCode => "invalid_code",
            Self::CodeNotSent => "code_not_sent",
            Self::Invalid(_) => "invalid",
            Self::BadRequest(_) => "bad_request",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::TooLarge => "too_large",
            Self::Timeout => "timeout",
            Self::Unavailable => "unavailable",
            Self::Internal(_) => "internal",
            Self::Transport(_) => "transport",
        }
    }

    /// The sentence for people in `lang` (the REST `message`, the pages' notes). `Display`
    /// is the English one, for logs.
    pub fn message(&self, lang: i18n::Lang) -> String {
        let t = lang.texts();
        let fill = |template: &str, value: &dyn std::fmt::Display| i18n::fill(template, &[value]);
        match self {
            Self::Unauthenticated => t.err_unauthenticated().to_owned(),
            Self::Forbidden => t.err_forbidden().to_owned(),
            Self::CrossSite => t.err_cross_site().to_owned(),
            Self::NotFound => t.err_not_found().to_owned(),
            Self::SoldOut => t.err_sold_out().to_owned(),
            Self::AlreadyBought(_) => t.err_already_bought().to_owned(),
            Self::NotStarted => t.err_not_started().to_owned(),
            Self::Ended => t.err_ended().to_owned(),
            Self::RateLimited => t.err_rate_limited().to_owned(),
            Self::DrawPending => t.err_draw_pending().to_owned(),
            Self::EntriesNotOpen => t.err_entries_not_open().to_owned(),
            Self::EntriesClosed => t.err_entries_closed().to_owned(),
            Self::NotADraw => t.err_not_a_draw().to_owned(),
            Self::DrawCommitted => t.err_draw_committed().to_owned(),
            Self::SaleStarted => t.err_sale_started().to_owned(),
            Self::SaleOpen => t.err_sale_open().to_owned(),
            Self::ReminderSending => t.err_reminder_sending().to_owned(),
            Self::CodeResendWait(secs) => fill(t.err_code_resend_wait(), secs),
            Self::TryAgainIn(secs) => fill(t.err_try_again_in(), secs),
            Self::TooManyStreams => t.err_too_many_streams().to_owned(),
            Self::OrderQueued => t.err_order_queued().to_owned(),
            Self::OrderFailed => t.err_order_failed().to_owned(),
            Self::OrderCancelled => t.err_order_cancelled().to_owned(),
            Self::PaymentExpired => t.err_payment_expired().to_owned(),
            Self::AlreadyPaid => t.err_already_paid().to_owned(),
            Self::OrderConfirmed => t.err_order_confirmed().to_owned(),
            Self::NotPaid => t.err_not_paid().to_owned(),
            Self::PaymentUnavailable => t.err_payment_unavailable().to_owned(),
            Self::BadSignature(why) => fill(t.err_bad_signature(), why),
            Self::InvalidPhone => t.err_invalid_phone().to_owned(),
            Self::InvalidCode => t.err_invalid_code().to_owned(),
            Self::CodeNotSent => t.err_code_not_sent().to_owned(),
            Self::Invalid(_) => t.err_invalid().to_owned(),
            Self::BadRequest(why) => fill(t.err_bad_request(), why),
            Self::MethodNotAllowed => t.err_method_not_allowed().to_owned(),
            Self::TooLarge => t.err_too_large().to_owned(),
            Self::Timeout => t.err_timeout().to_owned(),
            Self::Unavailable => t.err_unavailable().to_owned(),
            Self::Internal(reference) => fill(t.err_internal(), reference),
            // The browser's own words (`TypeError: Failed to fetch`) are for its console
            // (`app::rest`), not for the page.
            Self::Transport(_) => t.err_transport().to_owned(),
        }
    }

    /// The HTTP status (design.md §5).
    pub fn status(&self) -> u16 {
        match self {
            Self::Unauthenticated => 401,
            Self::Forbidden | Self::CrossSite | Self::NotStarted | Self::Ended => 403,
            Self::NotFound => 404,
            Self::SoldOut
            | Self::AlreadyBought(_)
            | Self::DrawPending
            | Self::EntriesNotOpen
            | Self::EntriesClosed
            | Self::NotADraw
            | Self::DrawCommitted
            | Self::SaleStarted
            | Self::SaleOpen
            | Self::ReminderSending
            | Self::OrderQueued
            | Self::OrderFailed
            | Self::OrderCancelled
            | Self::PaymentExpired
            | Self::AlreadyPaid
            | Self::OrderConfirmed
            | Self::NotPaid => 409,
            Self::RateLimited
            | Self::CodeResendWait(_)
            | Self::TryAgainIn(_)
            | Self::TooManyStreams => 429,
            Self::InvalidPhone
            | Self::InvalidCode
            | Self::Invalid(_)
            | Self::BadRequest(_)
            | Self::BadSignature(_) => 400,
            Self::MethodNotAllowed => 405,
            Self::Timeout => 408,
            Self::TooLarge => 413,
            Self::Unavailable | Self::CodeNotSent | Self::PaymentUnavailable => 503,
            Self::Internal(_) | Self::Transport(_) => 500,
        }
    }

    /// The seconds after which the same request may succeed (`Retry-After`), where known.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            // A store out of reach, the SMS gateway or the payment provider: moments.
            Self::Unavailable | Self::CodeNotSent | Self::PaymentUnavailable => Some(2),
            Self::CodeResendWait(secs) | Self::TryAgainIn(secs) => Some(*secs),
            // The buy limit counts per second (`SECKILL_BUYS_PER_SECOND`).
            Self::RateLimited => Some(1),
            // A stream's place frees when another of the client's closes: no wait to name.
            _ => None,
        }
    }

    /// The message of one field, for forms.
    pub fn field(&self, name: &str) -> Option<String> {
        match self {
            Self::Invalid(fields) => fields.get(name).map(str::to_owned),
            _ => None,
        }
    }
}

impl AppError {
    /// The error a REST answer carries, read back by a client (the islands): its `error` code,
    /// its `message` and its `fields` (`invalid`), as `server/src/rest/error.rs` writes them. A code names its variant; the variants with
    /// data come back as their family with the server's sentence as their data (the waits
    /// `rate_limited` shares as `RateLimited`, `bad_request`, `bad_signature`, `internal`): a
    /// client shows the sentence the server sent (the app's `Refusal`), never one of its own,
    /// so reading an answer needs no catalogue. An unknown code (a newer server) is
    /// `Transport`, with the server's words.
    pub fn from_wire(code: &str, message: &str, fields: FieldErrors) -> Self {
        // A match on the code: a table of every variant to compare with costs the browser's
        // bundles twice the code.
        match code {
            "unauthenticated" => Self::Unauthenticated,
            "forbidden" => Self::Forbidden,
            "cross_site" => Self::CrossSite,
            "not_found" => Self::NotFound,
            "sold_out" => Self::SoldOut,
            "not_started" => Self::NotStarted,
            "ended" => Self::Ended,
            "rate_limited" => Self::RateLimited,
            "draw_pending" => Self::DrawPending,
            "entries_not_open" => Self::EntriesNotOpen,
            "entries_closed" => Self::EntriesClosed,
            "not_a_draw" => Self::NotADraw,
            "draw_committed" => Self::DrawCommitted,
            "sale_started" => Self::SaleStarted,
            "sale_open" => Self::SaleOpen,
            "reminder_sending" => Self::ReminderSending,
            "order_queued" => Self::OrderQueued,
            "order_failed" => Self::OrderFailed,
            "order_cancelled" => Self::OrderCancelled,
            "payment_expired" => Self::PaymentExpired,
            "already_paid" => Self::AlreadyPaid,
            "order_confirmed" => Self::OrderConfirmed,
            "not_paid" => Self::NotPaid,
            "payment_unavailable" => Self::PaymentUnavailable,
            "invalid_phone" => Self::InvalidPhone,
            "invalid_code" => Self::InvalidCode,
            "code_not_sent" => Self::CodeNotSent,
            "method_not_allowed" => Self::MethodNotAllowed,
            "too_large" => Self::TooLarge,
            "timeout" => Self::Timeout,
            "unavailable" => Self::Unavailable,
            "invalid" => Self::Invalid(fields),
            "bad_request" => Self::BadRequest(message.to_owned()),
            "bad_signature" => Self::BadSignature(message.to_owned()),
            "internal" => Self::Internal(message.to_owned()),
            _ => Self::Transport(format!("{code}: {message}")),
        }
    }

    /// The fields of an `Invalid`, empty for the others (the REST answer's `fields`).
    pub fn fields(&self) -> FieldErrors {
        match self {
            Self::Invalid(fields) => fields.clone(),
            _ => FieldErrors::default(),
        }
    }
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        match value {
            ServerFnErrorErr::Args(m) | ServerFnErrorErr::Deserialization(m) => Self::BadRequest(m),
            other => Self::Transport(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests;
