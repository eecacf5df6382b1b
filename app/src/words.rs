//! The page's language and its words (the `i18n` crate's catalogues, design.md decision 44).
//!
//! On the server the language is the request's: its `seckill_lang` cookie (the switch link's
//! choice), else its `Accept-Language`, else English. In the browser an island reads it from
//! `<html lang>`, which the server wrote, so both render the same words.

use domain::{Canceller, FailureReason, OrderStatus, Refund, VoucherStatus};
pub use i18n::{fill, Lang, Texts};

/// The language of the page being rendered.
pub fn lang() -> Lang {
    #[cfg(feature = "ssr")]
    {
        leptos::prelude::use_context::<http::request::Parts>()
            .map_or_else(Lang::default, |parts| of_request(&parts.headers))
    }
    #[cfg(not(feature = "ssr"))]
    {
        page_lang()
    }
}

/// The words of the page being rendered.
pub fn t() -> Texts {
    lang().texts()
}

/// The language a request asks for (its cookie, else its `Accept-Language`).
#[cfg(feature = "ssr")]
pub fn of_request(headers: &http::HeaderMap) -> Lang {
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let cookie = headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(Lang::cookie_in);
    Lang::negotiate(cookie, header(http::header::ACCEPT_LANGUAGE))
}

/// `<html lang>` as the server wrote it (browser; English elsewhere).
#[cfg(not(feature = "ssr"))]
fn page_lang() -> Lang {
    #[cfg(feature = "hydrate")]
    {
        thread_local! {
            static LANG: Lang = leptos::prelude::document()
                .document_element()
                .and_then(|html| html.get_attribute("lang"))
                .and_then(|tag| Lang::from_tag(&tag))
                .unwrap_or_default();
        }
        LANG.with(|l| *l)
    }
    #[cfg(not(feature = "hydrate"))]
    {
        Lang::default()
    }
}

/// The strip a development shop shows on every page, if it is one; a shop with no SMS relay
/// also says that nothing is texted (a reminder asked for there is never sent).
pub fn dev_warning(t: Texts, mode: webapi::wire::SiteMode) -> Option<String> {
    let words = match (mode.dev_login, mode.dev_payments) {
        (true, true) => t.dev_both(),
        (true, false) => t.dev_login_only(),
        (false, true) => t.dev_payments_only(),
        (false, false) => return None,
    };
    Some(match mode.no_texts {
        true => format!("{words} {}", t.dev_no_texts()),
        false => words.to_owned(),
    })
}

/// A sale's status in words.
pub fn voucher_status(t: Texts, s: VoucherStatus) -> &'static str {
    match s {
        VoucherStatus::Upcoming => t.voucher_upcoming(),
        VoucherStatus::OnSale => t.voucher_on_sale(),
        VoucherStatus::SoldOut => t.voucher_sold_out(),
        VoucherStatus::Ended => t.voucher_ended(),
    }
}

/// An order's status for a badge. Money words follow the money: "Refunded" only once the
/// provider confirmed the refund.
pub fn order_label(t: Texts, s: OrderStatus) -> &'static str {
    match s {
        OrderStatus::Queued => t.order_queued(),
        OrderStatus::Created { .. } => t.order_created(),
        OrderStatus::Paid => t.order_paid(),
        OrderStatus::Confirmed => t.order_confirmed(),
        OrderStatus::Cancelled { refund, .. } => match refund {
            Refund::None => t.order_cancelled(),
            Refund::Owed => t.order_refund_owed(),
            Refund::Refunded => t.order_refunded(),
            Refund::Refused => t.order_refund_refused(),
        },
        OrderStatus::Failed { .. } => t.order_failed(),
    }
}

/// What the shopper reads about an order's status.
pub fn order_sentence(t: Texts, s: OrderStatus) -> &'static str {
    match s {
        OrderStatus::Queued => t.order_queued_sentence(),
        OrderStatus::Created {
            payment_mismatch: true,
            ..
        } => t.order_payment_mismatch_sentence(),
        OrderStatus::Created { .. } => t.order_created_sentence(),
        OrderStatus::Paid => t.order_paid_sentence(),
        OrderStatus::Confirmed => t.order_confirmed_sentence(),
        OrderStatus::Cancelled {
            cancelled_by,
            refund,
        } => cancelled_sentence(t, cancelled_by, refund),
        OrderStatus::Failed { reason } => match reason {
            FailureReason::UnknownVoucher => t.order_failed_unknown_voucher(),
            FailureReason::SoldOut => t.order_failed_sold_out(),
            FailureReason::AlreadyBought => t.order_failed_already_bought(),
            FailureReason::DeadLetter { .. } => t.order_failed_dead_letter(),
            FailureReason::DuplicateId => t.order_failed_duplicate_id(),
        },
    }
}

/// A cancelled order: who cancelled it, and where its money stands if any was taken (the
/// shop's refund of a paid order, or a payment that arrived after the cancellation).
fn cancelled_sentence(t: Texts, by: Canceller, refund: Refund) -> &'static str {
    match (by, refund) {
        (_, Refund::Refused) => t.order_refund_refused_sentence(),
        (Canceller::Shop, Refund::Refunded) => t.order_refunded_by_shop_sentence(),
        (Canceller::Shop, Refund::Owed) => t.order_refund_owed_by_shop_sentence(),
        (Canceller::Shop, Refund::None) => t.order_refund_none_by_shop_sentence(),
        (_, Refund::Refunded) => t.order_refunded_late_sentence(),
        (_, Refund::Owed) => t.order_refund_owed_late_sentence(),
        (Canceller::Shopper, Refund::None) => t.order_cancelled_by_shopper_sentence(),
        (Canceller::Deadline, Refund::None) => t.order_cancelled_by_deadline_sentence(),
    }
}

/// The words before a held order's number on its sale's page: "You secured one" only for a
/// live order (awaiting payment, paid or confirmed: not "bought" while it awaits payment);
/// one still queued, failed or cancelled says so.
pub fn held_order_prefix(t: Texts, s: OrderStatus) -> &'static str {
    match s {
        OrderStatus::Queued => t.buy_your_order_queued(),
        OrderStatus::Created { .. } | OrderStatus::Paid | OrderStatus::Confirmed => {
            t.buy_you_bought()
        }
        OrderStatus::Cancelled { .. } => t.buy_your_order_cancelled(),
        OrderStatus::Failed { .. } => t.buy_your_order_failed(),
    }
}

/// A field's message from the core (the REST API's English words, `domain::voucher`) in the
/// page's language; a message the catalogue does not know stays as the core wrote it.
pub fn field_message(t: Texts, message: &str) -> String {
    let number = |prefix: &str, suffix: &str| {
        message
            .strip_prefix(prefix)?
            .strip_suffix(suffix)?
            .replace(',', "")
            .parse::<i64>()
            .ok()
    };
    let fixed = match message {
        "is required" => Some(t.field_required()),
        "must be a whole number" => Some(t.field_whole_number()),
        "must not contain control characters" => Some(t.field_no_control()),
        "must be a whole number of cents" => Some(t.field_yuan()),
        "must be in the future" => Some(t.field_in_future()),
        "must be first_come or draw" => Some(t.field_opening()),
        "is only for a draw" => Some(t.field_only_for_draw()),
        "must be before the start" => Some(t.field_before_start()),
        "must be in the future for a draw" => Some(t.field_future_for_draw()),
        "must be a date and time with a UTC offset" => Some(t.field_date_time()),
        "must be after the start" => Some(t.field_after_start()),
        _ => None,
    };
    if let Some(words) = fixed {
        return words.to_owned();
    }
    if let Some(n) = number("must be at most ", " characters") {
        return fill(t.field_at_most_chars(), &[&domain::grouped(n)]);
    }
    if let Some(cents) = number("must be between 0 and ", " cents") {
        // In the shop's currency, with separators: the largest price is a long number.
        let symbol = crate::money::symbol();
        let most = format!(
            "{symbol}{}.{:02}",
            domain::grouped(cents / 100),
            cents % 100
        );
        return fill(t.field_price_range(), &[&format!("{symbol}0.00"), &most]);
    }
    if let Some(n) = number("must be between 1 and ", "") {
        return fill(t.field_between(), &[&domain::grouped(n)]);
    }
    message.to_owned()
}

/// A countdown (`05:07`, `01:05:07`, `2d 01:05:07` / `2天 01:05:07`).
pub fn countdown(t: Texts, secs: i64) -> String {
    let s = secs.max(0);
    let days = s / domain::SECS_PER_DAY;
    let clock = webapi::wire::format_countdown(s % domain::SECS_PER_DAY);
    if days == 0 {
        clock
    } else {
        let clock = if clock.len() == 5 {
            format!("00:{clock}")
        } else {
            clock
        };
        fill(t.countdown_days(), &[&days, &clock])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cores_field_messages_read_in_chinese() {
        let zh = Lang::ZhCn.texts();
        assert_eq!(field_message(zh, "is required"), "不能为空");
        assert_eq!(
            field_message(zh, "must be at most 120 characters"),
            "不能超过120个字符"
        );
        assert_eq!(
            field_message(zh, "must be between 0 and 100,000,000 cents"),
            "必须在¥0.00到¥1,000,000.00之间"
        );
        assert_eq!(
            field_message(zh, "must be between 1 and 10,000,000"),
            "必须在1到10,000,000之间"
        );
        assert_eq!(
            field_message(zh, "must be a whole number of cents"),
            zh.field_yuan()
        );
        assert_eq!(
            field_message(Lang::En.texts(), "is required"),
            "is required"
        );
    }

    #[test]
    fn a_shopper_reads_refunded_only_once_the_provider_confirmed_it() {
        for t in [Lang::En.texts(), Lang::ZhCn.texts()] {
            let cancelled = |cancelled_by, refund| OrderStatus::Cancelled {
                cancelled_by,
                refund,
            };
            for by in [Canceller::Shop, Canceller::Deadline, Canceller::Shopper] {
                let owed = cancelled(by, Refund::Owed);
                let refused = cancelled(by, Refund::Refused);
                let refunded = cancelled(by, Refund::Refunded);
                assert_eq!(order_label(t, refunded), t.order_refunded());
                for status in [owed, refused] {
                    assert_ne!(order_label(t, status), t.order_refunded(), "{status:?}");
                    let sentence = order_sentence(t, status);
                    assert_ne!(sentence, t.order_refunded_by_shop_sentence(), "{status:?}");
                    assert_ne!(sentence, t.order_refunded_late_sentence(), "{status:?}");
                }
                assert_eq!(order_label(t, owed), t.order_refund_owed());
                assert_eq!(order_label(t, refused), t.order_refund_refused());
                assert_eq!(
                    order_sentence(t, refused),
                    t.order_refund_refused_sentence()
                );
            }
            assert_eq!(
                order_sentence(t, cancelled(Canceller::Shop, Refund::Refunded)),
                t.order_refunded_by_shop_sentence()
            );
            assert_eq!(
                order_label(t, cancelled(Canceller::Shop, Refund::None)),
                t.order_cancelled()
            );
        }
    }

    #[test]
    fn only_a_live_order_reads_you_secured_one() {
        let t = Lang::En.texts();
        let pay_by = chrono::Utc::now();
        for live in [
            OrderStatus::Created {
                pay_by,
                payment_mismatch: false,
            },
            OrderStatus::Created {
                pay_by,
                payment_mismatch: true,
            },
            OrderStatus::Paid,
            OrderStatus::Confirmed,
        ] {
            assert_eq!(held_order_prefix(t, live), t.buy_you_bought());
        }
        for gone in [
            OrderStatus::Queued,
            OrderStatus::Failed {
                reason: FailureReason::SoldOut,
            },
            OrderStatus::Cancelled {
                cancelled_by: Canceller::Deadline,
                refund: Refund::None,
            },
        ] {
            assert_ne!(held_order_prefix(t, gone), t.buy_you_bought(), "{gone:?}");
        }
    }

    #[test]
    fn a_countdown_names_its_days_in_the_pages_language() {
        let (en, zh) = (Lang::En.texts(), Lang::ZhCn.texts());
        assert_eq!(countdown(en, 307), "05:07");
        assert_eq!(countdown(en, 3_907), "01:05:07");
        assert_eq!(countdown(en, 2 * 86_400 + 3_907), "2d 01:05:07");
        assert_eq!(countdown(zh, 2 * 86_400 + 3_907), "2天 01:05:07");
        assert_eq!(countdown(zh, 86_400 + 7), "1天 00:00:07");
    }
}
