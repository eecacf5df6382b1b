//! `bench payments`: a rush's orders paid through a Stripe stand-in that misbehaves as Stripe
//! may (design.md decision 41): every 10th API call answers 500 (and Stripe saves it against
//! its idempotency key), every 3rd webhook is lost, every 4th comes twice, every 5th comes
//! 1.5 s late (after later ones: out of order), every call waits 20 ms, and Stripe is down for
//! 2.5 s as the first deadlines pass; the shop gives an unreachable Stripe no grace, so a
//! failed expiry closes a session Stripe still holds open. Then the shoppers act: half pay, a tenth pay after their order was
//! cancelled (one of whose refunds Stripe refuses for good), a fifth cancel, a fifth forget.
//! At quiescence I1–I4 and M1–M3 must hold; the figures: the time from a payment to its order
//! reading "paid", the refunds made and refused, and how long units were held past their
//! deadline.
//!
//! The run here; what a shopper does in `shopper.rs`; the checks at quiescence in
//! `checks.rs`; the figures and their report in `figures.rs`.

mod checks;
mod figures;
mod shopper;

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use anyhow::bail;
use fakes::stripe::{Chaos, FakeStripe};
use futures::StreamExt;
use tokio::time::Instant;

use self::{
    checks::{money_holds, quiescent, units_hold},
    figures::Figures,
    shopper::Shopper,
};
use crate::{
    drill::shoppers::{self, Arrival},
    rush::{measure, process::Server},
    scratch::Scratch,
    Options,
};

const WHSEC: &str = "whsec_bench_payments";

/// How long an order waits for payment here: long enough for every shopper to act (they act
/// [`ACTING`] at a time), short enough for the late payers' wait.
fn pay_within_ms(quick: bool) -> u64 {
    if quick {
        4_000
    } else {
        10_000
    }
}

/// Shoppers acting on their orders at once.
const ACTING: usize = 500;

/// The bench's price: above Stripe's ¥4.00 minimum.
const PRICE_CENTS: i64 = 990;

/// What a shopper does with their order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Intent {
    Pay,
    /// Opens the payment page, lets the order be cancelled at its deadline, then pays.
    PayLate,
    Cancel,
    Forget,
}

impl Intent {
    /// By the shopper's index: 5 in 10 pay, 1 pays late, 2 cancel, 2 forget.
    fn of(shopper: usize) -> Self {
        match (shopper as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) % 10 {
            0..=4 => Self::Pay,
            5 => Self::PayLate,
            6 | 7 => Self::Cancel,
            _ => Self::Forget,
        }
    }
}

/// What happened to one shopper's order, as the shopper saw it.
#[derive(Debug, Clone, Default)]
struct Outcome {
    /// Microseconds from paying on the hosted page to the order reading "paid".
    paid_after_us: Option<u64>,
    /// Paid after the cancellation, and Stripe took the money (a refund is owed).
    paid_late: bool,
    /// What went wrong, if anything.
    error: Option<String>,
}

pub async fn run(options: &Options) -> anyhow::Result<()> {
    let scratch = Scratch::new("payments").await?;
    let result = run_on(options, &scratch).await;
    scratch.cleanup().await?;
    result
}

async fn run_on(options: &Options, scratch: &Scratch) -> anyhow::Result<()> {
    let shoppers = options
        .shoppers
        .unwrap_or(if options.quick { 300 } else { 2_000 });
    let stock = options
        .stock
        .unwrap_or(if options.quick { 200 } else { 1_500 });
    let conns = options.conns.unwrap_or(50);
    let fake = Arc::new(FakeStripe::start(WHSEC).await?);
    fake.set_latency(Duration::from_millis(20));
    fake.set_chaos(Chaos {
        fail_every: 10,
        drop_every: 3,
        twice_every: 4,
        late_every: 5,
        late_by: Duration::from_millis(1_500),
    });
    let pay_within = pay_within_ms(options.quick);
    let mut server = start_shop(scratch, &fake, pay_within).await?;
    let users = scratch.users(shoppers).await?;
    let tokens = Arc::new(scratch.sessions(&users).await?);
    let voucher = scratch
        .voucher_priced(stock, chrono::Duration::milliseconds(1_000), PRICE_CENTS)
        .await?;
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()?;
    let answers = shoppers::buy_all(
        client.clone(),
        server.base.clone(),
        voucher,
        tokens.clone(),
        Arrival {
            conns,
            pace: Duration::from_millis(5),
            deadline: Instant::now() + Duration::from_secs(60),
        },
    )
    .await?;
    let mut violations = Vec::new();
    if let Err(e) = measure::poll_until(
        &client,
        &server.base,
        &tokens,
        &answers.admitted,
        conns,
        Instant::now() + Duration::from_secs(30),
    )
    .await
    {
        violations.push(format!("I3: not written within 30 s: {e}"));
    }
    // The first shopper who pays late has their refund refused for good (a dispute).
    let refused_for = answers
        .admitted
        .iter()
        .find(|(i, _)| Intent::of(*i) == Intent::PayLate)
        .map(|(_, order)| order.clone());
    let acted = Instant::now();
    // Stripe is down while the first deadlines pass: with no grace, the sweep closes those
    // sessions without Stripe's word, and a late payer's money arrives on a cancelled order.
    let outage = {
        let fake = fake.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(pay_within - 1_000)).await;
            fake.outage(Duration::from_millis(2_500));
        })
    };
    let shop = Shop {
        client,
        base: server.base.clone(),
        tokens,
        fake: fake.clone(),
    };
    let outcomes = act_all(&shop, &answers.admitted, refused_for.as_deref()).await;
    outage.await?;
    let settled = quiescent(scratch, voucher, Instant::now() + Duration::from_secs(60)).await;
    let settled_after = acted.elapsed().as_secs_f64();
    if let Err(e) = settled {
        violations.push(e.to_string());
    }
    server.stop();
    violations.extend(
        outcomes
            .iter()
            .filter_map(|(order, (intent, o))| {
                o.error
                    .as_ref()
                    .map(|e| format!("order {order} ({intent:?}): {e}"))
            })
            .take(20),
    );
    violations.extend(units_hold(scratch, voucher, stock, answers.admitted.len()).await?);
    violations.extend(money_holds(scratch, &fake).await?);
    violations.extend(answers.internal_errors());

    let figures = Figures::read(scratch, voucher, &outcomes, fake.calls().len()).await?;
    figures
        .report(
            shoppers,
            stock,
            answers.admitted.len(),
            settled_after,
            &violations,
        )?
        .publish(options)?;
    if !violations.is_empty() {
        bail!("payments: {}", violations.join("; "));
    }
    let refused = figures.refund_failed;
    if refused != i64::from(refused_for.is_some() && figures.late_paid > 0) {
        bail!("payments: {refused} refunds refused for good, one expected");
    }
    Ok(())
}

/// The shop under test, its Stripe pointed at `fake` and its orders waiting `pay_within` ms
/// for payment.
async fn start_shop(
    scratch: &Scratch,
    fake: &FakeStripe,
    pay_within: u64,
) -> anyhow::Result<Server> {
    let base = fake.base();
    let mut env: Vec<(String, String)> = scratch
        .env
        .iter()
        .filter(|(k, _)| k != "SECKILL_DEV_PAYMENTS")
        .cloned()
        .collect();
    for (k, v) in [
        ("SECKILL_STRIPE_SECRET_KEY", "sk_test_bench"),
        ("SECKILL_STRIPE_WEBHOOK_SECRET", WHSEC),
        ("SECKILL_STRIPE_API_BASE", base.as_str()),
        ("SECKILL_STRIPE_TIMEOUT_MS", "2000"),
        ("SECKILL_STRIPE_EXPIRE_GRACE_MS", "1"),
        ("SECKILL_PUBLIC_ORIGIN", "http://shop.bench"),
        // The shoppers sign in by dev login, which a shop served under another host than this
        // machine only runs when told so (server/src/safety.rs).
        ("SECKILL_DEV_LOGIN_PUBLIC", "true"),
        ("SECKILL_PAY_WITHIN_MS", &pay_within.to_string()),
        ("SECKILL_SWEEP_MS", "300"),
    ] {
        env.push((k.to_owned(), v.to_owned()));
    }
    let server = Server::start(&env).await?;
    fake.set_webhook(&format!("{}/api/payments/stripe/webhook", server.base));
    Ok(server)
}

/// The shop and its Stripe as every shopper reaches them.
struct Shop {
    client: reqwest::Client,
    base: String,
    tokens: Arc<Vec<String>>,
    fake: Arc<FakeStripe>,
}

/// Every admitted shopper acts on their order by their [`Intent`], [`ACTING`] at a time; the
/// late payer of `refused_for` has their refund refused for good.
async fn act_all(
    shop: &Shop,
    admitted: &[(usize, String)],
    refused_for: Option<&str>,
) -> BTreeMap<String, (Intent, Outcome)> {
    futures::stream::iter(admitted.iter().cloned())
        .map(|(i, order)| {
            let shopper = Shopper {
                client: shop.client.clone(),
                base: shop.base.clone(),
                token: shop.tokens[i].clone(),
                order: order.clone(),
                fake: shop.fake.clone(),
                stripe: shop.fake.base(),
            };
            let refuse = refused_for == Some(order.as_str());
            async move {
                let intent = Intent::of(i);
                (order, (intent, shopper.act(intent, refuse).await))
            }
        })
        .buffer_unordered(ACTING)
        .collect()
        .await
}
