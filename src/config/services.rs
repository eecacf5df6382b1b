//! The services outside the shop as configured: the SMS gateway's webhook, the payment
//! provider, the origins the shop is served under.

use super::{millis, typed, ConfigError, Secret};
use crate::{
    auth::delivery::Webhook,
    orders::payment::{stripe::StripeSettings, ProviderSettings},
};

/// The SMS gateway's webhook: its URL and secret together, or neither.
pub(super) fn webhook(
    get: &impl Fn(&'static str) -> Option<String>,
) -> Result<Option<Webhook>, ConfigError> {
    const URL: &str = "SECKILL_SMS_WEBHOOK_URL";
    const SECRET: &str = "SECKILL_SMS_WEBHOOK_SECRET";
    let missing = |var: &'static str, with: &str| ConfigError {
        var,
        message: format!("is needed with {with}"),
    };
    let (url, secret) = match (get(URL), get(SECRET)) {
        (None, None) => return Ok(None),
        (Some(_), None) => return Err(missing(SECRET, URL)),
        (None, Some(_)) => return Err(missing(URL, SECRET)),
        (Some(url), Some(secret)) => (url, secret),
    };
    // The client speaks TLS since the payment provider needed it (decision 33): a relay may be
    // reached over https anywhere, or over plain http beside the shop (this machine, or a
    // private network's address): every sign-in code, the admins' too, crosses that hop.
    let (tls, host) = match (url.strip_prefix("https://"), url.strip_prefix("http://")) {
        (Some(host), _) => (true, host),
        (None, Some(host)) => (false, host),
        (None, None) => (false, ""),
    };
    let authority = host.split('/').next().unwrap_or_default();
    if authority.is_empty() || !(tls || beside_the_shop(authority)) {
        return Err(ConfigError {
            var: URL,
            message: format!(
                "{url:?} must be an https:// address of the SMS relay, or http:// on this machine or a \
                 private network's address (10.x, 172.16-31.x, 192.168.x, fc00::/7)"
            ),
        });
    }
    if secret.len() < 16 {
        return Err(ConfigError {
            var: SECRET,
            message: "must be at least 16 characters".into(),
        });
    }
    Ok(Some(Webhook {
        url,
        secret: Secret::new(secret),
        timeout: millis(get, "SECKILL_SMS_WEBHOOK_TIMEOUT_MS", 2_000)?,
    }))
}

/// Whether `host[:port]` is this machine (`localhost`, a loopback address) or a private
/// network's address, where plain http does not cross the internet.
fn beside_the_shop(host_port: &str) -> bool {
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    host.eq_ignore_ascii_case("localhost")
        || match host.parse::<std::net::IpAddr>() {
            Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private(),
            Ok(std::net::IpAddr::V6(ip)) => {
                ip.is_loopback() || (ip.segments()[0] & 0xfe00) == 0xfc00
            }
            Err(_) => false,
        }
}

/// The payment provider: Stripe's key and webhook secret together, or dev payments, or none;
/// both is refused (which one would a shopper pay?).
pub(super) fn payment_provider(
    get: &impl Fn(&'static str) -> Option<String>,
) -> Result<ProviderSettings, ConfigError> {
    const KEY: &str = "SECKILL_STRIPE_SECRET_KEY";
    const SECRET: &str = "SECKILL_STRIPE_WEBHOOK_SECRET";
    const BASE: &str = "SECKILL_STRIPE_API_BASE";
    let dev: bool = typed(get, "SECKILL_DEV_PAYMENTS", "false")?;
    let refused = |var: &'static str, e: crate::orders::payment::stripe::StripeSettingError| {
        // The value is never repeated: it may be a secret.
        ConfigError {
            var,
            message: e.to_string(),
        }
    };
    let (key, secret) = match (get(KEY), get(SECRET)) {
        (None, None) if dev => return Ok(ProviderSettings::Dev),
        (None, None) => return Ok(ProviderSettings::None),
        (Some(_), None) => {
            return Err(ConfigError {
                var: SECRET,
                message: format!("is needed with {KEY} (the webhook endpoint's whsec_… secret)"),
            })
        }
        (None, Some(_)) => {
            return Err(ConfigError {
                var: KEY,
                message: format!("is needed with {SECRET}"),
            })
        }
        (Some(key), Some(secret)) => (key, secret),
    };
    if dev {
        return Err(ConfigError {
            var: "SECKILL_DEV_PAYMENTS",
            message: "is on beside the Stripe settings: choose one payment provider".into(),
        });
    }
    if get("SECKILL_PUBLIC_ORIGIN").is_none() {
        return Err(ConfigError {
            var: "SECKILL_PUBLIC_ORIGIN",
            message: "is needed with Stripe: the hosted page sends shoppers back to the order's page on it (https://shop.example)".into(),
        });
    }
    let base = get(BASE).unwrap_or_else(|| crate::orders::payment::stripe::DEFAULT_API_BASE.into());
    Ok(ProviderSettings::Stripe(StripeSettings {
        secret_key: StripeSettings::key(key.trim()).map_err(|e| refused(KEY, e))?,
        webhook_secret: StripeSettings::webhook_secret(secret.trim())
            .map_err(|e| refused(SECRET, e))?,
        api_base: StripeSettings::api_base(&base).map_err(|e| ConfigError {
            var: BASE,
            message: format!("{base:?} {e}"),
        })?,
        timeout: millis(get, "SECKILL_STRIPE_TIMEOUT_MS", 10_000)?,
        payment_methods: get("SECKILL_STRIPE_PAYMENT_METHODS")
            .map_or_else(|| Ok(Default::default()), |raw| raw.parse())
            .map_err(|message| ConfigError {
                var: "SECKILL_STRIPE_PAYMENT_METHODS",
                message,
            })?,
    }))
}

/// The shop's origins (`SECKILL_PUBLIC_ORIGIN`): comma-separated, each `http://` or
/// `https://` with a host and no path.
pub fn public_origins(raw: Option<&str>) -> Result<Vec<String>, ConfigError> {
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    raw.split(',')
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .map(|o| {
            let rest = o
                .strip_prefix("https://")
                .or_else(|| o.strip_prefix("http://"));
            match rest {
                Some(host) if !host.is_empty() && !host.trim_end_matches('/').contains('/') => {
                    Ok(o.trim_end_matches('/').to_owned())
                }
                _ => Err(ConfigError {
                    var: "SECKILL_PUBLIC_ORIGIN",
                    message: format!("{o:?} is not an origin like https://shop.example"),
                }),
            }
        })
        .collect()
}
