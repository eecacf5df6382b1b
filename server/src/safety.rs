//! Start-ups that would be unsafe on the internet are refused, before the listener binds, and
//! development conveniences are loud (design.md §8, decision 25):
//!
//! - no way to sign in (dev login off and no SMS gateway webhook): refused, naming the settings;
//! - dev login (anyone can sign in as anyone) or dev payments (every payment approved) on a
//!   shop others reach (a listening address other than loopback, or a public origin on another
//!   host, which a proxy on this machine serves): refused unless `SECKILL_DEV_LOGIN_PUBLIC=true`
//!   or `SECKILL_DEV_PAYMENTS_PUBLIC=true` says it is meant;
//! - no way to pay (neither Stripe nor dev payments): refused, naming the settings; every order
//!   would expire unpaid at its deadline and its unit go back on sale, a shop that sells
//!   nothing while looking healthy. A WARN line is read after the sale; a refusal before it;
//! - draws without the shop's own receipt key (`SECKILL_DRAW_SIGNING_KEY`), or without a choice
//!   of beacon (`SECKILL_DRAND_URL`, a relay or `off`): refused unless dev login is on, as a
//!   receipt signed with the published dev key proves nothing (decision 42);
//! - dev login and dev payments (every payment approved) each log a WARN banner at start, and
//!   every page shows a "Development mode" strip; so do the dev draw key and draws without a
//!   beacon.

use anyhow::bail;
use seckill::{orders::payment::ProviderSettings, Config};

use crate::settings::Settings;

/// Refuses an unsafe start-up; warns about the dev conveniences that are on.
pub fn check(config: &Config, settings: &Settings) -> anyhow::Result<()> {
    if !config.dev_login && config.auth.webhook.is_none() {
        bail!(
            "sign-in codes would go nowhere: set SECKILL_SMS_WEBHOOK_URL and SECKILL_SMS_WEBHOOK_SECRET \
             (the SMS gateway's webhook; docs/security.md), or SECKILL_DEV_LOGIN=true on a development machine"
        );
    }
    if matches!(config.payments.provider, ProviderSettings::None) {
        bail!(
            "orders could not be paid, so every one would be cancelled at its deadline: set \
             SECKILL_STRIPE_SECRET_KEY, SECKILL_STRIPE_WEBHOOK_SECRET and SECKILL_PUBLIC_ORIGIN (docs/payments.md), \
             or SECKILL_DEV_PAYMENTS=true on a development machine"
        );
    }
    if !config.dev_login && config.draw.receipt_key.dev {
        bail!(
            "draw receipts would be signed with the published dev key, which anyone holds: set \
             SECKILL_DRAW_SIGNING_KEY (64 hex characters; `openssl rand -hex 32` makes one; the same on every \
             instance), or SECKILL_DEV_LOGIN=true on a development machine"
        );
    }
    if !config.dev_login && !config.draw.beacon_chosen {
        bail!(
            "draws need a public randomness beacon: set SECKILL_DRAND_URL to a drand relay (https://api.drand.sh; \
             quicknet is pinned by default), or to `off` to draw on the shop's committed secret alone (docs/draws.md)"
        );
    }
    let public = settings.reached_by_others();
    if let (true, Some(face), false) = (config.dev_login, &public, settings.dev_login_public) {
        bail!(
            "SECKILL_DEV_LOGIN=true lets anyone sign in as anyone, admins included, and this shop is reached \
             by others at {face}: turn dev login off, serve it on 127.0.0.1 alone, or set \
             SECKILL_DEV_LOGIN_PUBLIC=true if this is really meant"
        );
    }
    if let (true, Some(face), false) = (
        config.payments.is_dev(),
        &public,
        settings.dev_payments_public,
    ) {
        bail!(
            "SECKILL_DEV_PAYMENTS=true approves every payment without charging anyone, and this shop is \
             reached by others at {face}: set up Stripe (docs/payments.md), serve it on 127.0.0.1 alone, or \
             set SECKILL_DEV_PAYMENTS_PUBLIC=true if this is really meant"
        );
    }
    if config.dev_login {
        tracing::warn!(
            "DEVELOPMENT MODE: SECKILL_DEV_LOGIN=true shows every sign-in code to whoever asks; \
             anyone can sign in as anyone, admins included. Never on a shop's public address."
        );
    }
    if config.payments.is_dev() {
        tracing::warn!(
            "DEVELOPMENT MODE: SECKILL_DEV_PAYMENTS=true approves every payment without charging anyone."
        );
    }
    if config.draw.receipt_key.dev {
        tracing::warn!(
            "DEVELOPMENT MODE: draw receipts are signed with the published dev key; they prove nothing."
        );
    }
    if config.draw.beacon.is_none() {
        tracing::warn!(
            "draws run without a public beacon: their seeds rest on the shop's committed secret and the \
             committed entrant list only (docs/draws.md)"
        );
    }
    if config.draw.tsa.is_none() {
        tracing::warn!(
            "draws are not witnessed outside the shop: set SECKILL_DRAW_TSA_URL to an RFC 3161 timestamping \
             authority so a skeptic can show each entrant list existed before its beacon round (docs/draws.md)"
        );
    }
    if config.admin_phones.is_empty() {
        tracing::warn!(
            "no admins: SECKILL_ADMIN_PHONES names none, so nobody can manage the vouchers"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(vars: &[(&str, &str)]) -> anyhow::Result<()> {
        let get = |k: &str| {
            vars.iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| (*v).to_owned())
        };
        let config = Config::from_lookup(get)?;
        let settings = Settings::from_lookup(get)?;
        check(&config, &settings)
    }

    const WEBHOOK: [(&str, &str); 5] = [
        ("SECKILL_SMS_WEBHOOK_URL", "http://127.0.0.1:9/sms"),
        ("SECKILL_SMS_WEBHOOK_SECRET", "0123456789abcdef0123"),
        DRAW_KEY,
        ("SECKILL_DRAND_URL", "off"),
        PAY,
    ];
    const DRAW_KEY: (&str, &str) = (
        "SECKILL_DRAW_SIGNING_KEY",
        "5555555555555555555555555555555555555555555555555555555555555555",
    );
    const PAY: (&str, &str) = ("SECKILL_DEV_PAYMENTS", "true");

    #[test]
    fn a_shop_without_a_way_to_sign_in_does_not_start() {
        let err = start(&[PAY]).expect_err("no sender");
        assert!(err.to_string().contains("SECKILL_SMS_WEBHOOK_URL"), "{err}");
        start(&WEBHOOK).expect("the webhook is a way");
        start(&[("SECKILL_DEV_LOGIN", "true"), PAY]).expect("dev login on loopback");
    }

    #[test]
    fn a_shop_that_cannot_be_paid_does_not_start() {
        let err = start(&WEBHOOK[..4]).expect_err("no provider");
        assert!(
            err.to_string().contains("SECKILL_STRIPE_SECRET_KEY"),
            "{err}"
        );
        let stripe = [
            WEBHOOK[0],
            WEBHOOK[1],
            WEBHOOK[2],
            WEBHOOK[3],
            ("SECKILL_STRIPE_SECRET_KEY", "sk_test_1"),
            ("SECKILL_STRIPE_WEBHOOK_SECRET", "whsec_1"),
            ("SECKILL_PUBLIC_ORIGIN", "https://shop.example"),
        ];
        start(&stripe).expect("Stripe is a way to be paid");
    }

    #[test]
    fn dev_login_on_a_public_address_needs_saying_so() {
        let public = [
            ("SECKILL_DEV_LOGIN", "true"),
            ("LEPTOS_SITE_ADDR", "0.0.0.0:3000"),
            PAY,
        ];
        let err = start(&public).expect_err("public dev login");
        assert!(
            err.to_string().contains("SECKILL_DEV_LOGIN_PUBLIC"),
            "{err}"
        );
        let meant = [
            ("SECKILL_DEV_LOGIN", "true"),
            ("LEPTOS_SITE_ADDR", "0.0.0.0:3000"),
            ("SECKILL_DEV_LOGIN_PUBLIC", "true"),
            PAY,
            ("SECKILL_DEV_PAYMENTS_PUBLIC", "true"),
        ];
        start(&meant).expect("said so");
        let production = [
            WEBHOOK[0],
            WEBHOOK[1],
            WEBHOOK[2],
            WEBHOOK[3],
            PAY,
            ("LEPTOS_SITE_ADDR", "0.0.0.0:3000"),
            ("SECKILL_DEV_PAYMENTS_PUBLIC", "true"),
        ];
        start(&production).expect("no dev login: any address");
    }

    #[test]
    fn a_shop_on_loopback_behind_a_proxy_is_public_for_the_dev_conveniences() {
        let proxied = |origin: &'static str| {
            [
                ("SECKILL_DEV_LOGIN", "true"),
                PAY,
                ("LEPTOS_SITE_ADDR", "127.0.0.1:3000"),
                ("SECKILL_PUBLIC_ORIGIN", origin),
            ]
        };
        for origin in [
            "https://shop.example",
            "http://127.0.0.1:3000,https://shop.example:8443",
            "http://[2001:db8::1]:3000",
        ] {
            let err = start(&proxied(origin)).expect_err(origin);
            assert!(
                err.to_string().contains("SECKILL_DEV_LOGIN_PUBLIC"),
                "{origin}: {err}"
            );
        }
        for origin in [
            "http://127.0.0.1:3000",
            "http://localhost:3000,http://127.0.0.2",
            "http://[::1]:3000",
        ] {
            start(&proxied(origin)).expect(origin);
        }
    }

    #[test]
    fn dev_payments_on_a_public_shop_need_saying_so() {
        let public = [
            WEBHOOK[0],
            WEBHOOK[1],
            WEBHOOK[2],
            WEBHOOK[3],
            PAY,
            ("LEPTOS_SITE_ADDR", "127.0.0.1:3000"),
            ("SECKILL_PUBLIC_ORIGIN", "https://shop.example"),
        ];
        let err = start(&public).expect_err("public dev payments");
        assert!(
            err.to_string().contains("SECKILL_DEV_PAYMENTS_PUBLIC"),
            "{err}"
        );
        let mut meant = public.to_vec();
        meant.push(("SECKILL_DEV_PAYMENTS_PUBLIC", "true"));
        start(&meant).expect("said so");
    }

    #[test]
    fn a_production_draw_needs_its_own_key_and_a_chosen_beacon() {
        let err = start(&[WEBHOOK[0], WEBHOOK[1], WEBHOOK[3], PAY]).expect_err("no key");
        assert!(
            err.to_string().contains("SECKILL_DRAW_SIGNING_KEY"),
            "{err}"
        );
        let err = start(&[WEBHOOK[0], WEBHOOK[1], WEBHOOK[2], PAY]).expect_err("no beacon chosen");
        assert!(err.to_string().contains("SECKILL_DRAND_URL"), "{err}");
        start(&WEBHOOK).expect("a key, and drawing without a beacon said explicitly");
        start(&[("SECKILL_DEV_LOGIN", "true"), PAY]).expect("dev: the dev key, no beacon");
    }

    #[test]
    fn admins_are_the_listed_phones_and_the_default_only_in_dev_mode() {
        let admins = |vars: &[(&str, &str)]| {
            let get = |k: &str| {
                vars.iter()
                    .find(|(name, _)| *name == k)
                    .map(|(_, v)| (*v).to_owned())
            };
            Config::from_lookup(get).expect("config").admin_phones.len()
        };
        assert_eq!(
            admins(&[("SECKILL_DEV_LOGIN", "true")]),
            1,
            "the default, in dev mode"
        );
        assert_eq!(admins(&WEBHOOK), 0, "no default admin outside dev mode");
        let empty = [("SECKILL_DEV_LOGIN", "true"), ("SECKILL_ADMIN_PHONES", "")];
        assert_eq!(admins(&empty), 0, "set but empty: no admins");
        let two = [("SECKILL_ADMIN_PHONES", "13800000001, +8613800000002")];
        assert_eq!(admins(&two), 2);
    }
}
