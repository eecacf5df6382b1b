//! The catalogue's keys: one field of [`Catalogue`] per sentence, and one method of
//! [`Texts`] reading it in the page's language. A template's `{0}`, `{1}`… are filled by
//! [`crate::fill`].
//!
//! The catalogues are `const`s, read a field at a time: a browser bundle carries only the
//! sentences its islands say, in both languages, not the whole catalogue.

use crate::Lang;

macro_rules! catalogue {
    (site { $($key:ident,)* } admin { $($akey:ident,)* }) => {
        /// Every sentence the shop shows shoppers, in one language (`en.rs`, `zh.rs`).
        pub struct Catalogue {
            $(pub $key: &'static str,)*
        }

        /// Every sentence the admins' pages show, in one language (`en_admin.rs`,
        /// `zh_admin.rs`).
        pub struct AdminCatalogue {
            $(pub $akey: &'static str,)*
        }

        impl Lang {
            /// Every key with its sentence in this language, in the catalogue's order (the
            /// checks; pages read a sentence at a time).
            pub fn entries(self) -> Vec<(&'static str, &'static str)> {
                let (site, admin) = match self {
                    Lang::En => (&crate::en::EN, &crate::en_admin::EN_ADMIN),
                    Lang::ZhCn => (&crate::zh::ZH, &crate::zh_admin::ZH_ADMIN),
                };
                vec![$((stringify!($key), site.$key),)* $((stringify!($akey), admin.$akey),)*]
            }
        }

        impl Texts {
            $(
                #[inline]
                pub fn $key(self) -> &'static str {
                    match self.0 {
                        Lang::En => crate::en::EN.$key,
                        Lang::ZhCn => crate::zh::ZH.$key,
                    }
                }
            )*
            $(
                #[inline]
                pub fn $akey(self) -> &'static str {
                    match self.0 {
                        Lang::En => crate::en_admin::EN_ADMIN.$akey,
                        Lang::ZhCn => crate::zh_admin::ZH_ADMIN.$akey,
                    }
                }
            )*
        }
    };
}

/// The sentences of one language: `t.buy_now()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Texts(pub(crate) Lang);

catalogue! {
site {
    // The site: header, navigation, titles, the language switch, times.
    brand,
    shop_name,
    title_suffix,
    nav_label,
    nav_vouchers,
    nav_sign_in,
    nav_my_orders,
    nav_console,
    nav_sign_out,
    lang_switch_label,
    lang_switch_label_en,
    times_in_zone,
    zone_beijing,
    zone_offset,
    zone_beijing_short,
    month_day_time,
    year_month_day_time,
    months,
    countdown_days,
    currency_sign,
    not_found_title,
    back_to_vouchers,
    forbidden_title,
    forbidden_heading,
    forbidden_text,
    checking_account,
    sign_in_link,
    see_your_order,
    page_of,
    colon,
    bracketed,
    // Errors (AppError): the `message` of the REST API and the pages' notes.
    err_unauthenticated,
    err_forbidden,
    err_cross_site,
    err_not_found,
    err_sold_out,
    err_already_bought,
    err_not_started,
    err_ended,
    err_rate_limited,
    err_draw_pending,
    err_entries_not_open,
    err_entries_closed,
    err_not_a_draw,
    err_code_resend_wait,
    err_try_again_in,
    err_too_many_streams,
    err_order_queued,
    err_order_failed,
    err_order_cancelled,
    err_payment_expired,
    err_already_paid,
    err_order_confirmed,
    err_not_paid,
    err_payment_unavailable,
    err_bad_signature,
    err_invalid_phone,
    err_invalid_code,
    err_code_not_sent,
    err_invalid,
    err_bad_request,
    err_method_not_allowed,
    err_too_large,
    err_timeout,
    err_unavailable,
    err_internal,
    err_transport,
    bad_request_cut_off,
    bad_request_not_a_path,
    bad_request_not_json,
    bad_request_json_syntax,
    bad_request_json_fields,
    bad_request_state_filter,
    bad_request_idempotency_key,
    bad_request_unreadable,
    bad_signature_unverified,
    // A sale's status, an order's status and what it means.
    voucher_upcoming,
    voucher_on_sale,
    voucher_sold_out,
    voucher_ended,
    order_queued,
    order_created,
    order_paid,
    order_confirmed,
    order_refunded,
    order_cancelled,
    order_failed,
    order_queued_sentence,
    order_created_sentence,
    order_paid_sentence,
    order_confirmed_sentence,
    order_refunded_by_shop_sentence,
    order_refunded_late_sentence,
    order_cancelled_by_shopper_sentence,
    order_cancelled_by_deadline_sentence,
    order_failed_unknown_voucher,
    order_failed_sold_out,
    order_failed_already_bought,
    order_failed_dead_letter,
    order_failed_duplicate_id,
    // The home page.
    home_title,
    home_loading,
    home_load_failed,
    home_filters_label,
    home_filter_all,
    home_empty,
    home_pages_label,
    home_newer,
    home_older,
    home_latest_ended,
    card_draw,
    card_ended_summary,
    card_opens_in,
    card_ends_in,
    sign_in_to_buy,
    stock_left_label,
    stock_left,
    // Signing in.
    login_title,
    login_phone,
    login_send_code,
    login_code,
    login_sign_in,
    login_dev_code,
    login_code_on_its_way,
    // A sale's page: facts, the countdown, buying.
    sale_loading,
    sale_announce_open,
    sale_announce_sold_out,
    sale_announce_ended,
    sale_opens,
    sale_closes,
    sale_opens_in,
    sale_draw_in,
    sale_closes_in,
    sale_all_sold,
    sale_over,
    buy_not_open,
    buy_now,
    buy_sold_out,
    buy_ended,
    buy_buying,
    buy_you_bought,
    // A draw sale's panel.
    draw_entries_open,
    draw_draw,
    draw_entered_count,
    draw_in_the_draw,
    draw_you_won,
    draw_pay_from_order,
    draw_see_order,
    draw_not_this_time,
    draw_in_line,
    draw_ended_before,
    draw_check,
    draw_sign_in_to_enter,
    draw_enter,
    draw_not_open,
    draw_hint,
    draw_your_entry,
    draw_your_receipt,
    // Orders: one order's page, paying, the list.
    order_word,
    order_slow,
    order_loading,
    order_title,
    order_checking_payment,
    order_voucher,
    order_ordered_at,
    order_pay_by,
    order_all,
    order_time_passed,
    order_pay_within,
    order_opening_payment,
    order_pay_now,
    order_cancelling,
    order_cancel,
    order_not_found_title,
    order_not_found_text,
    order_yours,
    orders_title,
    orders_loading,
    orders_sign_out_everywhere,
    orders_empty,
    orders_see_sales,
    // The development-mode strip.
    dev_both,
    dev_login_only,
    dev_payments_only,
    dev_no_texts,
    // Checking a draw.
    check_title,
    check_heading,
    check_drawn,
    check_committed,
    check_not_drawn,
    check_ended,
    check_commitment,
    check_entrants,
    check_beacon,
    check_beacon_round,
    check_root,
    check_seed,
    check_units,
    check_how,
    check_uses,
    check_step_1,
    check_step_2,
    check_step_3,
    check_step_4,
    check_step_5,
    check_step_6,
    order_refund_owed,
    order_refund_refused,
    order_refund_owed_by_shop_sentence,
    order_refund_owed_late_sentence,
    order_refund_refused_sentence,
    order_refund_none_by_shop_sentence,
    order_payment_mismatch_sentence,
    buy_your_order_queued,
    buy_your_order_failed,
    buy_your_order_cancelled,
    err_draw_committed,
    err_sale_started,
    err_sale_open,
    err_reminder_sending,
    remind_me,
    remind_sign_in,
    remind_waiting,
    remind_set,
    remind_cancel,
    remind_due,
    remind_sending,
    remind_sent,
    remind_failed,
    remind_hint,
}
admin {
    // The admin's new-voucher form and the fields' messages.
    new_title, new_field_title, new_field_description, new_field_price, new_field_price_short,
    new_field_stock, new_field_opens, new_field_opens_short, new_field_closes,
    new_field_closes_short, new_opening, new_first_come, new_draw, new_entries_open,
    new_entries_short, new_draw_hint, new_zone_hint, new_create, new_back, field_error,
    field_required, field_whole_number, field_at_most_chars, field_no_control, field_price_range,
    field_yuan, field_in_future, field_opening, field_only_for_draw, field_before_start,
    field_future_for_draw, field_date_time, field_between, field_after_start,
    // The console.
    console_title, console_payments, console_new, console_loading, console_empty, console_created,
    console_created_to, console_see_page, console_stalled, console_pages_label, console_newest,
    console_found_none, console_find, console_find_title, console_find_status, console_find_any,
    console_older, console_table_label, console_draw_awaits, col_voucher, col_sale, col_stock,
    col_redis, col_queued, col_written, col_awaiting, col_paid, col_cancelled, col_revenue,
    col_refunded, col_flagged, col_failed, col_dead, col_reminders, col_actions, console_chart, console_manage,
    // Managing a sale (console).
    manage_ended, manage_added, manage_title, manage_left, manage_end, manage_end_text,
    manage_end_now, manage_add, manage_units, manage_add_now,
    manage_edit, manage_edited, edit_title, edit_hint, edit_save,
    // The sales chart (console).
    chart_title, chart_empty, chart_summary, chart_orders, chart_one_order, chart_legend_bars, chart_legend_line,
    unit_days, unit_hours, unit_minutes, unit_seconds,
    // Payments (console).
    payments_title, payments_loading, payments_refunded_notice, payments_owed_notice,
    payments_empty, payments_col_order, payments_col_amount, payments_col_state, payments_col_ref,
    payments_col_changed, payments_filters_label, payments_total, payments_pages_label,
    payments_newer, payments_older, payments_refund, payments_refund_text, payments_refund_now,
    payments_filter_attention, payments_filter_paid, payments_filter_refunded,
    // The books out and the admins' actions (issue #55).
    books_heading, books_from, books_to, books_orders, books_payments, books_hint, actions_title,
    actions_link, actions_loading, actions_empty, actions_done, actions_refused, actions_failed, actions_col_when,
    actions_col_admin, actions_col_action, actions_col_target, actions_col_outcome, actions_older,
    actions_newest, act_create_voucher, act_end_sale, act_add_stock, act_edit_voucher, act_refund_order,
    act_export_orders, act_export_payments, payment_open, payment_paid, payment_flagged,
    payment_refund_owed, payment_refund_failed, payment_refunded, payment_disputed, payment_closed,
}
}
