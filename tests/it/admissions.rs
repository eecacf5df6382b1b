//! Batched admissions (issue #14) on the real Redis and PostgreSQL: one script call decides a
//! batch exactly as the same buys one by one would, concurrent buys share calls, and a lane
//! closes when idle and reopens on the next buy.

use std::{collections::HashMap, time::Duration};

use crate::common::*;
use futures::StreamExt;
use seckill::{
    domain::{OrderId, VoucherId},
    sale::{self, BuyError},
    testing::scripts::{self, AdmissionOutcome},
};
use sqlx::PgPool;

#[sqlx::test]
async fn one_call_decides_each_shopper_in_order(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 3).await;
    let v = voucher(&core, 2, 60, 3600).await;
    let mut c = core.redis.clone();
    // u0 twice in the batch: admitted once, then told that order; u2 comes after the stock.
    let batch = [u[0], u[1], u[0], u[2]];
    let outcomes = scripts::admit_batch(&mut c, &core.keys, v, &batch, 5, None)
        .await
        .expect("script");
    let [AdmissionOutcome::Admitted(first), AdmissionOutcome::Admitted(second), AdmissionOutcome::AlreadyBought(again), AdmissionOutcome::SoldOut] =
        outcomes[..]
    else {
        panic!("unexpected outcomes {outcomes:?}");
    };
    assert_eq!(again, first, "the repeat learns the order of its first buy");
    assert_ne!(first, second);
    let k = core.keys.voucher(v);
    assert_eq!(redis_i64(&core, &k.stock).await, Some(0));
    assert_eq!(hlen(&core, &k.buyers).await, 2);
    assert_eq!(
        xlen(&core, &k.orders).await,
        2,
        "one queued order per admission"
    );
    drain(&core).await;
    assert_stock_conserved(&core, v, 2).await;
}

#[sqlx::test]
async fn a_batch_counts_each_attempt_against_its_shopper(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 10, 60, 3600).await;
    let mut c = core.redis.clone();
    // Two attempts a second allowed: u0's third attempt in one batch is refused, u1's first is not.
    let batch = [u[0], u[0], u[0], u[1]];
    let outcomes = scripts::admit_batch(&mut c, &core.keys, v, &batch, 2, None)
        .await
        .expect("script");
    assert!(
        matches!(outcomes[0], AdmissionOutcome::Admitted(_)),
        "{outcomes:?}"
    );
    assert!(
        matches!(outcomes[1], AdmissionOutcome::AlreadyBought(_)),
        "{outcomes:?}"
    );
    assert_eq!(outcomes[2], AdmissionOutcome::RateLimited);
    assert!(
        matches!(outcomes[3], AdmissionOutcome::Admitted(_)),
        "{outcomes:?}"
    );
}

#[sqlx::test]
async fn concurrent_buys_share_calls_and_keep_every_invariant(db: PgPool) {
    let core = core(db, &[("SECKILL_BUYS_PER_SECOND", "100")]).await;
    let shoppers = users(&core, 300).await;
    let stock = 120;
    let v = voucher(&core, stock, 60, 3600).await;
    // 600 buys at once: every shopper twice.
    let attempts: Vec<_> = shoppers.iter().chain(shoppers.iter()).copied().collect();
    let before = core.admissions.calls();
    let results: Vec<_> = futures::stream::iter(attempts.iter().map(|u| {
        let core = &core;
        async move { (*u, sale::buy(core, *u, v).await) }
    }))
    .buffer_unordered(600)
    .collect()
    .await;
    let calls = core.admissions.calls() - before;
    let mut orders: HashMap<_, OrderId> = HashMap::new();
    let mut refused = 0;
    for (u, r) in &results {
        match r {
            Ok(id) => assert!(orders.insert(*u, *id).is_none(), "{u:?} admitted twice"),
            Err(BuyError::SoldOut) => refused += 1,
            Err(BuyError::AlreadyBought(_)) => {}
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert_eq!(orders.len(), stock as usize, "exactly the stock is sold");
    for (u, r) in &results {
        if let Err(BuyError::AlreadyBought(id)) = r {
            assert_eq!(orders.get(u), Some(id), "a repeat learns its own order");
        }
    }
    assert!(refused > 0);
    assert!(
        calls < attempts.len() as u64 / 2,
        "{} buys took {calls} script calls",
        attempts.len()
    );
    drain(&core).await;
    assert_stock_conserved(&core, v, stock).await;
}

#[sqlx::test]
async fn an_idle_lane_closes_and_the_next_buy_opens_another(db: PgPool) {
    let core = core(db, &[("SECKILL_ADMIT_LANE_IDLE_MS", "100")]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 5, 60, 3600).await;
    sale::buy(&core, u[0], v).await.expect("admitted");
    assert_eq!(core.admissions.open_lanes(), 1);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(core.admissions.open_lanes(), 0, "the idle lane closed");
    sale::buy(&core, u[1], v)
        .await
        .expect("admitted by a new lane");
    assert_eq!(core.admissions.open_lanes(), 1);
}

#[sqlx::test]
async fn a_buy_of_a_voucher_that_does_not_exist_opens_no_lane(db: PgPool) {
    let core = core(db, &[]).await;
    let v = voucher(&core, 3, 5, 600).await;
    let users = users(&core, 1).await;
    // A flood of made-up IDs past the largest: refused, with no lane and no script call.
    for made_up in 1..=500 {
        let id = VoucherId::try_from(v.get() + made_up).expect("id");
        assert!(matches!(
            sale::buy(&core, users[0], id).await,
            Err(BuyError::NotFound)
        ));
    }
    assert_eq!(
        core.admissions.open_lanes(),
        0,
        "no lane for a voucher that does not exist"
    );
    assert_eq!(core.admissions.calls(), 0, "no admission script call");
    // A voucher created on another instance a moment ago is found once the check is due.
    let other = sibling(&core, &[]).await;
    let newer = voucher(&other, 3, 5, 600).await;
    tokio::time::sleep(seckill::sale::known::RECHECK).await;
    assert!(
        sale::buy(&core, users[0], newer).await.is_ok(),
        "found after the recheck"
    );
}
