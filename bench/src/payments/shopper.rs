//! One shopper acting on their order as a person would: paying on the hosted page, paying a
//! page the shop had given up on, cancelling, retrying a 503.

use std::{sync::Arc, time::Duration};

use anyhow::{bail, Context};
use fakes::stripe::FakeStripe;
use tokio::time::Instant;

use super::{Intent, Outcome};

/// How near its deadline a payment may be made and still be closed without Stripe's word: the
/// run's outage (2.5 s) and a margin.
const OUTAGE_MARGIN: chrono::Duration = chrono::Duration::milliseconds(3_000);

/// One shopper and their order.
pub(super) struct Shopper {
    pub(super) client: reqwest::Client,
    pub(super) base: String,
    pub(super) token: String,
    pub(super) order: String,
    pub(super) fake: Arc<FakeStripe>,
    /// The stand-in's address: its hosted pages are `{stripe}/pay/{session}`.
    pub(super) stripe: String,
}

impl Shopper {
    pub(super) async fn act(&self, intent: Intent, refuse_refund: bool) -> Outcome {
        let mut outcome = Outcome::default();
        let result = match intent {
            Intent::Pay => self.pay(&mut outcome).await,
            Intent::PayLate => self.pay_late(&mut outcome, refuse_refund).await,
            Intent::Cancel => self.cancel().await,
            Intent::Forget => Ok(()),
        };
        if let Err(e) = result {
            outcome.error = Some(format!("{e:#}"));
        }
        outcome
    }

    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .post(format!("{}/api/orders/{}/{path}", self.base, self.order))
            .header(
                reqwest::header::COOKIE,
                format!("seckill_session={}", self.token),
            )
    }

    /// The order as its page reads it (`?payment=return`: back from the hosted page).
    async fn status(&self) -> anyhow::Result<serde_json::Value> {
        let r = self
            .client
            .get(format!(
                "{}/api/orders/{}?payment=return",
                self.base, self.order
            ))
            .header(
                reqwest::header::COOKIE,
                format!("seckill_session={}", self.token),
            )
            .send()
            .await?;
        Ok(r.json().await?)
    }

    /// Pay now, retried as a shopper would while it answers 503: the hosted page's session.
    async fn open(&self) -> anyhow::Result<String> {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let r = self.post("pay").send().await?;
            let status = r.status().as_u16();
            let body: serde_json::Value = r.json().await.unwrap_or_default();
            if status == 200 {
                let url = body["redirect_url"].as_str().unwrap_or_default();
                return url
                    .strip_prefix(&format!("{}/pay/", self.stripe))
                    .map(str::to_owned)
                    .with_context(|| format!("{url:?} is not the stand-in's page"));
            }
            if status != 503 || Instant::now() > until {
                bail!("Pay now answered {status} {body}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Until `done` holds of the order (30 s at most).
    async fn until(&self, done: impl Fn(&serde_json::Value) -> bool) -> anyhow::Result<()> {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let o = self.status().await?;
            if done(&o) {
                return Ok(());
            }
            if Instant::now() > until {
                bail!("the order stayed {o}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn pay(&self, outcome: &mut Outcome) -> anyhow::Result<()> {
        let session = self.open().await?;
        let pay_by = self.status().await?["pay_by"]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
        let paid_at = Instant::now();
        let paid_wall = chrono::Utc::now();
        self.fake.pay(&session).await?;
        // Paid in the last moments while Stripe was down (the run's outage spans the first
        // deadlines): the sweep may close the session without Stripe's word at the deadline,
        // and the money that still arrived goes back. A late payment, not a broken promise;
        // anywhere else the order must read paid.
        let near_deadline = pay_by.is_some_and(|by| paid_wall + OUTAGE_MARGIN >= by);
        self.until(|o| {
            o["status"] == "paid"
                || (near_deadline && o["cancelled_by"] == "deadline" && o["refund"] == "refunded")
        })
        .await?;
        if self.status().await?["status"] == "paid" {
            outcome.paid_after_us = Some(paid_at.elapsed().as_micros() as u64);
        } else {
            outcome.paid_late = true;
        }
        Ok(())
    }

    async fn pay_late(&self, outcome: &mut Outcome, refuse_refund: bool) -> anyhow::Result<()> {
        let session = self.open().await?;
        if refuse_refund {
            self.fake.refuse_refunds_of(&session, "charge_disputed");
        }
        self.until(|o| o["status"] == "cancelled").await?;
        // Stripe refuses a page the shop expired; one the shop closed without Stripe's word
        // (its expiry answered 500) still takes money, which must go back.
        if self.fake.pay(&session).await.is_ok() {
            outcome.paid_late = true;
            // Until Stripe has answered the refund: made, or (the one refused on purpose)
            // refused for good. The order says which; `refunded` only once made.
            let answer = if refuse_refund { "refused" } else { "refunded" };
            self.until(|o| o["refund"] == answer).await?;
        }
        Ok(())
    }

    async fn cancel(&self) -> anyhow::Result<()> {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let status = self.post("cancel").send().await?.status().as_u16();
            match status {
                200 => return Ok(()),
                503 if Instant::now() < until => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                other => bail!("cancel answered {other}"),
            }
        }
    }
}
