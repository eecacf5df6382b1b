//! The configuration read from variables: defaults, refusals, secrets never printed.

use super::*;
use crate::orders::payment::ProviderSettings;
use std::collections::HashMap;

fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Config::from_lookup(|k| map.get(k).cloned())
}

#[test]
fn defaults_point_at_the_local_services() {
    let c = config(&[]).expect("defaults are valid");
    assert_eq!(c.database_url.expose(), DEFAULT_DATABASE_URL);
    assert_eq!(c.redis_url.expose(), DEFAULT_REDIS_URL);
    assert!(c.instance_id.ends_with(":3000"), "{}", c.instance_id);
    assert!(!c.dev_login);
    assert!(
        matches!(c.payments.provider, ProviderSettings::None),
        "payments are approved only when asked"
    );
    assert_eq!(c.payments.currency.as_str(), "cny");
    assert_eq!(c.payments.return_origin, None, "paths on the shop");
    assert_eq!(c.payments.pay_within, Duration::from_secs(900));
    assert!(
        c.admin_phones.is_empty(),
        "no default admin outside dev mode"
    );
    assert!(c.auth.webhook.is_none());
}

#[test]
fn a_bad_value_names_its_variable() {
    let err = config(&[("SECKILL_WORKER_BATCH", "0")]).expect_err("zero batch");
    assert_eq!(err.var, "SECKILL_WORKER_BATCH");
    let err = config(&[("SECKILL_ADMIN_PHONES", "123,abc")]).expect_err("bad phone");
    assert_eq!(err.var, "SECKILL_ADMIN_PHONES");
    let err = config(&[("SECKILL_KEY_PREFIX", "a{b}")]).expect_err("brace");
    assert_eq!(err.var, "SECKILL_KEY_PREFIX");
    let err = config(&[("SECKILL_LOCK_LEASE_MS", "200")]).expect_err("lease under 1 s");
    assert_eq!(err.var, "SECKILL_LOCK_LEASE_MS");
    let c = config(&[("SECKILL_LOCK_LEASE_MS", "1000")]).expect("1 s is enough");
    assert_eq!(c.lock_lease, Duration::from_secs(1));
    assert_eq!(
        config(&[]).expect("defaults").lock_lease,
        Duration::from_secs(3)
    );
}

#[test]
fn two_instances_on_one_host_get_their_own_consumer_names() {
    let a = config(&[("LEPTOS_SITE_ADDR", "127.0.0.1:3001")]).expect("valid");
    let b = config(&[("LEPTOS_SITE_ADDR", "127.0.0.1:3002")]).expect("valid");
    let a_again = config(&[("LEPTOS_SITE_ADDR", "127.0.0.1:3001")]).expect("valid");
    assert_ne!(a.instance_id, b.instance_id);
    assert_eq!(a.instance_id, a_again.instance_id, "stable across restarts");
    assert!(a.instance_id.ends_with(":3001"), "{}", a.instance_id);
    let named = config(&[("SECKILL_INSTANCE_ID", "eu-1")]).expect("valid");
    assert_eq!(named.instance_id, "eu-1");
}

#[test]
fn admin_phones_are_read_in_the_default_country() {
    let c = config(&[("SECKILL_ADMIN_PHONES", "138 0000 0000, +44 7911 123456")]).expect("valid");
    let parse = |p: &str| Phone::try_from(p).expect("stored form");
    assert!(c.is_admin(&parse("+8613800000000")));
    assert!(c.is_admin(&parse("+447911123456")));
    let c = config(&[
        ("SECKILL_DEFAULT_COUNTRY_CODE", "44"),
        ("SECKILL_ADMIN_PHONES", "07911 123456"),
    ])
    .expect("valid");
    assert!(c.is_admin(&parse("+447911123456")));
    let err = config(&[("SECKILL_DEFAULT_COUNTRY_CODE", "086")]).expect_err("bad code");
    assert_eq!(err.var, "SECKILL_DEFAULT_COUNTRY_CODE");
}

#[test]
fn secrets_do_not_print() {
    let c = config(&[("DATABASE_URL", "postgres://u:hunter2@h/db")]).expect("valid");
    assert!(!format!("{c:?}").contains("hunter2"));
}

const STRIPE: [(&str, &str); 3] = [
    ("SECKILL_STRIPE_SECRET_KEY", "sk_test_abc"),
    ("SECKILL_STRIPE_WEBHOOK_SECRET", "whsec_xyz"),
    ("SECKILL_PUBLIC_ORIGIN", "https://shop.example"),
];

#[test]
fn stripe_needs_its_key_and_secret_in_their_forms_and_never_prints_them() {
    let c = config(&STRIPE).expect("valid");
    let ProviderSettings::Stripe(s) = &c.payments.provider else {
        panic!("stripe expected");
    };
    assert_eq!(s.api_base, "https://api.stripe.com");
    let printed = format!("{c:?}");
    assert!(!printed.contains("sk_test_abc") && !printed.contains("whsec_xyz"));
    let err = config(&[STRIPE[0], STRIPE[2]]).expect_err("no secret");
    assert_eq!(err.var, "SECKILL_STRIPE_WEBHOOK_SECRET");
    let err = config(&[
        STRIPE[0],
        ("SECKILL_STRIPE_WEBHOOK_SECRET", "sk_oops"),
        STRIPE[2],
    ])
    .expect_err("not whsec");
    assert_eq!(err.var, "SECKILL_STRIPE_WEBHOOK_SECRET");
    assert!(!err.to_string().contains("sk_oops"), "{err}");
    let err = config(&[
        ("SECKILL_STRIPE_SECRET_KEY", "pk_test_abc"),
        STRIPE[1],
        STRIPE[2],
    ])
    .expect_err("publishable key");
    assert_eq!(err.var, "SECKILL_STRIPE_SECRET_KEY");
    let mut vars = STRIPE.to_vec();
    vars.push(("SECKILL_STRIPE_API_BASE", "http://stripe.example"));
    assert_eq!(
        config(&vars).expect_err("plain http off loopback").var,
        "SECKILL_STRIPE_API_BASE"
    );
    let mut vars = STRIPE.to_vec();
    vars.push(("SECKILL_DEV_PAYMENTS", "true"));
    assert_eq!(
        config(&vars).expect_err("two providers").var,
        "SECKILL_DEV_PAYMENTS"
    );
    let err = config(&STRIPE[..2]).expect_err("nowhere to come back to");
    assert_eq!(err.var, "SECKILL_PUBLIC_ORIGIN");
}

#[test]
fn the_sms_relay_is_reached_over_https_or_over_plain_http_beside_the_shop() {
    let secret = ("SECKILL_SMS_WEBHOOK_SECRET", "0123456789abcdef");
    for ok in [
        "https://sms.example/hook",
        "http://127.0.0.1:9/sms",
        "http://localhost:9/sms",
        "http://10.0.3.7:8080/sms",
        "http://[::1]:9/sms",
        "http://[fd12::7]/sms",
    ] {
        let c = config(&[("SECKILL_SMS_WEBHOOK_URL", ok), secret]).expect(ok);
        assert_eq!(c.auth.webhook.map(|w| w.url).as_deref(), Some(ok));
    }
    // Plain http across the internet: anyone on the way reads every sign-in code.
    for bad in [
        "ftp://sms.example",
        "sms.example",
        "https:///x",
        "http://sms.example/hook",
        "http://203.0.113.9/sms",
        "http://[2001:db8::1]/sms",
    ] {
        let err = config(&[("SECKILL_SMS_WEBHOOK_URL", bad), secret]).expect_err(bad);
        assert_eq!(err.var, "SECKILL_SMS_WEBHOOK_URL");
    }
}

#[test]
fn shoppers_come_back_to_the_first_public_origin() {
    let c = config(&[(
        "SECKILL_PUBLIC_ORIGIN",
        "https://shop.example/, https://b.example",
    )])
    .expect("valid");
    assert_eq!(
        c.payments.return_origin.as_deref(),
        Some("https://shop.example")
    );
    let err = config(&[("SECKILL_CURRENCY", "yuan")]).expect_err("not a code");
    assert_eq!(err.var, "SECKILL_CURRENCY");
}
