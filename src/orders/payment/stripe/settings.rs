//! What an operator gives to reach Stripe (`SECKILL_STRIPE_*`), each checked when the
//! configuration is read, and what Stripe can charge.

use std::time::Duration;

use crate::secret::Secret;

/// Stripe's smallest charge in `currency`, in its minor units ("Minimum and maximum charge
/// amounts"). A currency Stripe does not settle in (`cny` among them) must come to at least
/// the settlement currency's minimum, $0.50 or €0.50, once converted: for those the shop asks
/// the equivalent of US$0.60 at a cautious rate, so a rate's swing does not refuse a payment.
pub fn minimum_charge(currency: &str) -> i64 {
    match currency {
        "usd" | "aud" | "brl" | "cad" | "chf" | "eur" | "inr" | "nzd" | "sgd" => 50,
        "gbp" => 30,
        "jpy" => 50,
        "hkd" => 400,
        "dkk" => 250,
        "nok" | "sek" => 300,
        "pln" | "ron" | "myr" | "aed" => 200,
        "bgn" => 100,
        "czk" => 1_500,
        "huf" => 17_500,
        "mxn" | "thb" => 1_000,
        "cny" => 400,
        // Any other: the US$0.50 minimum is a few hundred minor units at most of them; the
        // provider itself refuses less, and Pay now says so.
        _ => 50,
    }
}

/// How to reach Stripe (`SECKILL_STRIPE_*`), checked when the configuration is read.
#[derive(Debug, Clone)]
pub struct StripeSettings {
    /// `sk_…` (secret) or `rk_…` (restricted) key.
    pub secret_key: Secret,
    /// The webhook endpoint's signing secret, `whsec_…`.
    pub webhook_secret: Secret,
    /// `https://api.stripe.com` unless a test points it elsewhere; plain `http://` only on
    /// loopback.
    pub api_base: String,
    /// One call's bound.
    pub timeout: Duration,
    /// What the hosted page offers (`SECKILL_STRIPE_PAYMENT_METHODS`).
    pub payment_methods: PaymentMethods,
}

/// The payment methods the hosted page offers: immediate ones only, since an order is held 15
/// minutes and a delayed method (a bank debit) settles days later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentMethods(Vec<&'static str>);

/// Methods that confirm while the shopper is on the page.
const IMMEDIATE_METHODS: [&str; 3] = ["card", "alipay", "wechat_pay"];

/// Stripe's delayed methods, named so the refusal can say why.
const DELAYED_METHODS: [&str; 10] = [
    "sepa_debit",
    "us_bank_account",
    "bacs_debit",
    "au_becs_debit",
    "acss_debit",
    "boleto",
    "konbini",
    "oxxo",
    "customer_balance",
    "sofort",
];

impl std::str::FromStr for PaymentMethods {
    type Err = String;

    /// A comma-separated list (`card,alipay,wechat_pay`).
    fn from_str(raw: &str) -> Result<Self, String> {
        let mut methods = Vec::new();
        for name in raw.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let Some(known) = IMMEDIATE_METHODS.iter().find(|m| **m == name) else {
                return Err(if DELAYED_METHODS.contains(&name) {
                    format!("{name:?} is a delayed payment method: it settles days after the shopper leaves the page, and an order is held only until its payment deadline")
                } else {
                    format!(
                        "{name:?} is not a payment method the shop offers (one of: {})",
                        IMMEDIATE_METHODS.join(", ")
                    )
                });
            };
            if !methods.contains(known) {
                methods.push(*known);
            }
        }
        if methods.is_empty() {
            return Err("names no payment method (card, alipay, wechat_pay)".into());
        }
        Ok(Self(methods))
    }
}

impl Default for PaymentMethods {
    fn default() -> Self {
        Self(vec!["card"])
    }
}

impl PaymentMethods {
    /// The session's form fields that name them (WeChat Pay on a web page needs its client).
    pub(super) fn form(&self) -> Vec<(String, String)> {
        let mut form: Vec<(String, String)> = self
            .0
            .iter()
            .enumerate()
            .map(|(i, m)| (format!("payment_method_types[{i}]"), (*m).to_owned()))
            .collect();
        if self.0.contains(&"wechat_pay") {
            form.push((
                "payment_method_options[wechat_pay][client]".into(),
                "web".into(),
            ));
        }
        form
    }
}

/// Why a Stripe setting is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StripeSettingError {
    #[error("must be a Stripe secret key (sk_…) or restricted key (rk_…)")]
    Key,
    #[error("must be a webhook signing secret (whsec_…)")]
    WebhookSecret,
    #[error("must be an https:// address (plain http:// only on loopback, for a test's stand-in), without a path")]
    Base,
}

impl StripeSettings {
    /// The secret key, checked: `sk_` or `rk_` and more.
    pub fn key(raw: &str) -> Result<Secret, StripeSettingError> {
        let ok = ["sk_", "rk_"]
            .iter()
            .any(|p| raw.starts_with(p) && raw.len() > p.len());
        if ok && !raw.contains(char::is_whitespace) {
            Ok(Secret::new(raw))
        } else {
            Err(StripeSettingError::Key)
        }
    }

    /// The webhook secret, checked: `whsec_` and more.
    pub fn webhook_secret(raw: &str) -> Result<Secret, StripeSettingError> {
        match raw.strip_prefix("whsec_") {
            Some(rest) if !rest.is_empty() && !raw.contains(char::is_whitespace) => {
                Ok(Secret::new(raw))
            }
            _ => Err(StripeSettingError::WebhookSecret),
        }
    }

    /// The API's base address: `https://host[:port]`, or `http://` on a loopback host.
    pub fn api_base(raw: &str) -> Result<String, StripeSettingError> {
        let raw = raw.trim().trim_end_matches('/');
        let (tls, host) = match (raw.strip_prefix("https://"), raw.strip_prefix("http://")) {
            (Some(host), _) => (true, host),
            (None, Some(host)) => (false, host),
            (None, None) => return Err(StripeSettingError::Base),
        };
        if host.is_empty() || host.contains(['/', '?', '#', '@']) {
            return Err(StripeSettingError::Base);
        }
        if !tls && !is_loopback_host(host) {
            return Err(StripeSettingError::Base);
        }
        Ok(raw.to_owned())
    }
}

/// Whether `host[:port]` names this machine (`127.x.x.x`, `localhost`, `[::1]`).
pub(super) fn is_loopback_host(host_port: &str) -> bool {
    let host = if let Some(rest) = host_port.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_secrets_are_checked_by_their_prefix() {
        assert!(StripeSettings::key("sk_test_123").is_ok());
        assert!(StripeSettings::key("rk_live_123").is_ok());
        for bad in ["", "sk_", "pk_test_123", "whsec_1", "sk_test 1"] {
            assert_eq!(
                StripeSettings::key(bad).err(),
                Some(StripeSettingError::Key),
                "{bad:?}"
            );
        }
        assert!(StripeSettings::webhook_secret("whsec_abc").is_ok());
        assert!(StripeSettings::webhook_secret("sk_test_1").is_err());
        assert!(StripeSettings::webhook_secret("whsec_").is_err());
    }

    #[test]
    fn only_immediate_payment_methods_are_offered() {
        let m: PaymentMethods = "card, alipay,wechat_pay,card".parse().expect("immediate");
        assert_eq!(m.0, ["card", "alipay", "wechat_pay"]);
        assert!(m.form().contains(&(
            "payment_method_options[wechat_pay][client]".into(),
            "web".into()
        )));
        let delayed = "card,sepa_debit"
            .parse::<PaymentMethods>()
            .expect_err("delayed");
        assert!(delayed.contains("delayed"), "{delayed}");
        assert!("paypal".parse::<PaymentMethods>().is_err());
        assert!(" , ".parse::<PaymentMethods>().is_err());
        assert_eq!(PaymentMethods::default().form().len(), 1);
    }

    #[test]
    fn plain_http_is_only_for_loopback() {
        assert_eq!(
            StripeSettings::api_base("https://api.stripe.com/").as_deref(),
            Ok("https://api.stripe.com")
        );
        for ok in [
            "http://127.0.0.1:12111",
            "http://localhost:1",
            "http://[::1]:8",
        ] {
            assert!(StripeSettings::api_base(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://api.stripe.com",
            "http://10.0.0.1:80",
            "http://127.0.0.1.evil.example",
            "ftp://x",
            "https://x/v1",
            "https://user@host",
            "",
        ] {
            assert_eq!(
                StripeSettings::api_base(bad),
                Err(StripeSettingError::Base),
                "{bad}"
            );
        }
    }
}
