//! How a sign-in code reaches its phone (design.md §8, decision 25).
//!
//! - **Dev** (`SECKILL_DEV_LOGIN=true`): the code goes back in the answer and on the sign-in
//!   page. Anyone can sign in as anyone: for a laptop, never a public address (the server
//!   refuses that start-up unless told `SECKILL_DEV_LOGIN_PUBLIC=true`).
//! - **SMS gateway webhook** (`SECKILL_SMS_WEBHOOK_URL` + `SECKILL_SMS_WEBHOOK_SECRET`): the
//!   code is `POST`ed as JSON `{"phone","code","expires_in_s"}` with
//!   `X-Seckill-Signature: sha256=<hex HMAC-SHA256 of the body, keyed by the secret>`, so the
//!   operator's relay to any SMS provider can check it came from the shop. Each attempt has a
//!   short timeout; a failed one (no answer, a 5xx) is tried once more; a 4xx is the gateway's
//!   refusal and is not. The code never reaches the caller nor a log line.

use std::time::Duration;

use crate::{domain::Phone, secret::Secret, signing};

/// The header carrying the body's signature.
pub const SIGNATURE_HEADER: &str = "x-seckill-signature";
/// Attempts per code at most (the first and one retry).
const ATTEMPTS: u32 = 2;
/// The pause before the retry.
const RETRY_AFTER: Duration = Duration::from_millis(200);

/// An SMS gateway's webhook and the secret its requests are signed with.
#[derive(Debug, Clone)]
pub struct Webhook {
    pub url: String,
    pub secret: Secret,
    /// One attempt's bound (`SECKILL_SMS_WEBHOOK_TIMEOUT_MS`).
    pub timeout: Duration,
}

/// The code did not reach the gateway.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error("the SMS gateway answered {0}")]
    Refused(u16),
    #[error("the SMS gateway did not answer: {0}")]
    Unreachable(String),
}

/// `sha256=<hex>`: the HMAC-SHA256 of `body` keyed by `secret`, as the signature header holds
/// it.
pub fn signature(secret: &str, body: &[u8]) -> String {
    format!("sha256={}", signing::sign_hex(secret.as_bytes(), &[body]))
}

impl Webhook {
    /// Sends `code` for `phone`, valid for `expires_in`: one attempt, and one more after a
    /// failure that is not the gateway's refusal.
    pub async fn send(
        &self,
        client: &reqwest::Client,
        phone: &Phone,
        code: &str,
        expires_in: Duration,
    ) -> Result<(), DeliveryError> {
        let body = serde_json::json!({
            "phone": phone.as_str(),
            "code": code,
            "expires_in_s": expires_in.as_secs(),
        })
        .to_string();
        let signed = signature(self.secret.expose(), body.as_bytes());
        let mut last = DeliveryError::Unreachable("no attempt".into());
        for attempt in 1..=ATTEMPTS {
            let sent = client
                .post(&self.url)
                .timeout(self.timeout)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(SIGNATURE_HEADER, &signed)
                .body(body.clone())
                .send()
                .await;
            last = match sent {
                Ok(r) if r.status().is_success() => return Ok(()),
                Ok(r) if r.status().is_client_error() => {
                    return Err(DeliveryError::Refused(r.status().as_u16()))
                }
                Ok(r) => DeliveryError::Refused(r.status().as_u16()),
                // Without the URL: reqwest's text names it, and it may carry credentials.
                Err(e) => DeliveryError::Unreachable(e.without_url().to_string()),
            };
            if attempt < ATTEMPTS {
                tokio::time::sleep(RETRY_AFTER).await;
            }
        }
        Err(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_hmac_sha256_of_the_body() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
