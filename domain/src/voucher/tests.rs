//! A voucher draft's parsing: every field's refusal, and what a valid draft becomes.

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
        ..VoucherDraft::default()
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
        opening: "lottery".into(),
        entries_open_at: String::new(),
    };
    let errors = NewVoucher::parse(&bad, now()).expect_err("invalid");
    assert_eq!(errors.get("title"), Some("is required"));
    assert!(errors.get("description").is_some());
    assert_eq!(
        errors.get("price_cents"),
        Some("must be a whole number of cents")
    );
    assert_eq!(
        errors.get("stock"),
        Some("must be between 1 and 10,000,000")
    );
    assert_eq!(
        errors.get("begins_at"),
        Some("must be a date and time with a UTC offset")
    );
    assert_eq!(errors.get("ends_at"), Some("must be in the future"));
    assert_eq!(errors.get("opening"), Some("must be first_come or draw"));
}

#[test]
fn a_draw_opens_its_entries_before_the_start() {
    let mut d = draft();
    d.opening = "draw".into();
    let v = NewVoucher::parse(&d, now()).expect("valid");
    assert_eq!(
        v.opening.entries_open_at().map(|t| t.to_rfc3339()),
        Some("2026-11-22T12:50:00+00:00".to_owned()),
        "ten minutes before the start by default"
    );
    d.entries_open_at = "2026-11-22T12:00:00Z".into();
    let v = NewVoucher::parse(&d, now()).expect("valid");
    assert_eq!(v.opening.entries_open_at(), Some(now()));
    d.entries_open_at = "2026-11-22T13:00:00Z".into();
    let errors = NewVoucher::parse(&d, now()).expect_err("at the start");
    assert_eq!(
        errors.get("entries_open_at"),
        Some("must be before the start")
    );
    d.entries_open_at = "soon".into();
    assert!(NewVoucher::parse(&d, now()).is_err());
    d.opening = "first_come".into();
    d.entries_open_at = "2026-11-22T12:00:00Z".into();
    let errors = NewVoucher::parse(&d, now()).expect_err("entries without a draw");
    assert_eq!(errors.get("entries_open_at"), Some("is only for a draw"));
}

#[test]
fn a_draw_that_would_open_at_once_is_refused() {
    let mut d = draft();
    d.opening = "draw".into();
    d.begins_at = "2026-11-22T11:00:00Z".into();
    let errors = NewVoucher::parse(&d, now()).expect_err("begun");
    assert_eq!(
        errors.get("begins_at"),
        Some("must be in the future for a draw")
    );
    d.begins_at = "2026-11-22T12:05:00Z".into();
    let v = NewVoucher::parse(&d, now()).expect("five minutes ahead");
    assert_eq!(
        v.opening.entries_open_at(),
        Some(now()),
        "entries open now when the default lead would be in the past"
    );
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
fn control_characters_are_refused_in_every_text_field() {
    let mut d = draft();
    d.title = "a\u{0}b".into();
    d.description = "line one\nline two\u{0}".into();
    d.begins_at = "2026-11-22T21:00:00\u{7}+08:00".into();
    let errors = NewVoucher::parse(&d, now()).expect_err("invalid");
    assert_eq!(
        errors.get("title"),
        Some("must not contain control characters")
    );
    assert_eq!(
        errors.get("description"),
        Some("must not contain control characters")
    );
    assert!(errors.get("begins_at").is_some());
    let mut ok = draft();
    ok.description = "line one\r\nline two\tend".into();
    assert!(
        NewVoucher::parse(&ok, now()).is_ok(),
        "line breaks and tabs are text"
    );
}
