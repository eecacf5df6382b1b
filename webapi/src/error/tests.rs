//! Every refusal's code, status and sentence, and the wire round trip.

use super::*;

/// Every error the REST API answers with, read back from its code, message, fields and
/// `Retry-After` as a client sees them, is the error the server sent. (`AlreadyBought` is
/// never a REST answer: a repeated buy answers 202 with the order; `Transport` is the
/// client's own.)
#[test]
fn every_rest_error_reads_back_as_itself() {
    let mut fields = FieldErrors::default();
    fields.push("title", "is required");
    fields.push("stock", "must be at least 1");
    let sent = [
        AppError::Unauthenticated,
        AppError::Forbidden,
        AppError::CrossSite,
        AppError::NotFound,
        AppError::SoldOut,
        AppError::NotStarted,
        AppError::Ended,
        AppError::RateLimited,
        AppError::DrawPending,
        AppError::EntriesNotOpen,
        AppError::EntriesClosed,
        AppError::NotADraw,
        AppError::DrawCommitted,
        AppError::SaleStarted,
        AppError::SaleOpen,
        AppError::CodeResendWait(42),
        AppError::TryAgainIn(7),
        AppError::TooManyStreams,
        AppError::OrderQueued,
        AppError::OrderFailed,
        AppError::OrderCancelled,
        AppError::PaymentExpired,
        AppError::AlreadyPaid,
        AppError::OrderConfirmed,
        AppError::PaymentUnavailable,
        AppError::BadSignature("no v1 signature".into()),
        AppError::InvalidPhone,
        AppError::InvalidCode,
        AppError::CodeNotSent,
        AppError::Invalid(fields),
        AppError::BadRequest("expected value at line 1 column 1".into()),
        AppError::MethodNotAllowed,
        AppError::TooLarge,
        AppError::Timeout,
        AppError::Unavailable,
        AppError::Internal("5f0c2a".into()),
    ];
    for e in sent {
        for lang in i18n::Lang::ALL {
            let said = e.message(lang);
            let back = AppError::from_wire(e.code(), &said, e.fields(), e.retry_after());
            assert_eq!(back, e, "{} ({said})", e.code());
        }
    }
}

#[test]
fn an_unknown_code_keeps_the_servers_words() {
    let e = AppError::from_wire("brand_new", "Something new.", FieldErrors::default(), None);
    assert_eq!(e, AppError::Transport("brand_new: Something new.".into()));
}
