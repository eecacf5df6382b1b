//! Every refusal's code, status and sentence, and the wire round trip.

use super::*;

/// Every error the REST API answers with, read back from its code, message and fields as a
/// client sees them, is the error the server sent, or for the variants with data its family
/// holding the server's sentence (a client shows that sentence). (`AlreadyBought` is never a
/// REST answer: a repeated buy answers 202 with the order; `Transport` is the client's own.)
#[test]
fn every_rest_error_reads_back_as_itself_or_its_family() {
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
        AppError::OrderQueued,
        AppError::OrderFailed,
        AppError::OrderCancelled,
        AppError::PaymentExpired,
        AppError::AlreadyPaid,
        AppError::OrderConfirmed,
        AppError::PaymentUnavailable,
        AppError::InvalidPhone,
        AppError::InvalidCode,
        AppError::CodeNotSent,
        AppError::Invalid(fields),
        AppError::MethodNotAllowed,
        AppError::TooLarge,
        AppError::Timeout,
        AppError::Unavailable,
    ];
    for e in sent {
        for lang in i18n::Lang::ALL {
            let said = e.message(lang);
            assert_eq!(
                AppError::from_wire(e.code(), &said, e.fields()),
                e,
                "{said}"
            );
        }
    }
    let families = [
        (AppError::CodeResendWait(42), AppError::RateLimited),
        (AppError::TryAgainIn(7), AppError::RateLimited),
        (AppError::TooManyStreams, AppError::RateLimited),
    ];
    for (e, family) in families {
        let said = e.message(i18n::Lang::ZhCn);
        assert_eq!(AppError::from_wire(e.code(), &said, e.fields()), family);
    }
    for e in [
        AppError::BadSignature("no v1 signature".into()),
        AppError::BadRequest("expected value at line 1 column 1".into()),
        AppError::Internal("5f0c2a".into()),
    ] {
        let said = e.message(i18n::Lang::En);
        let back = AppError::from_wire(e.code(), &said, e.fields());
        assert_eq!((back.code(), back.status()), (e.code(), e.status()));
        // The server's whole sentence, which names the reason or the reference.
        let (AppError::BadSignature(held) | AppError::BadRequest(held) | AppError::Internal(held)) =
            back
        else {
            panic!("{back:?} is not of its family");
        };
        assert_eq!(held, said);
    }
}

#[test]
fn an_unknown_code_keeps_the_servers_words() {
    let e = AppError::from_wire("brand_new", "Something new.", FieldErrors::default());
    assert_eq!(e, AppError::Transport("brand_new: Something new.".into()));
}
