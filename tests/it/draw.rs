//! A draw resumed after a crash, and run by two instances at once (issue #33): the cursor in the
//! sale's hash, moved in the same script step as its admissions, lets every rank be admitted once
//! whoever runs the rest.

use chrono::{Duration, Utc};
use redis::AsyncCommands;
use seckill::{
    catalog,
    domain::{fair, UserId, VoucherDraft, VoucherId},
    draw,
    testing::{scripts, store},
    Core,
};
use sqlx::PgPool;

use crate::common::{admin, core, loopback, sibling, users};

/// A draw sale of `stock` units whose entries are open and whose draw is `secs` away, and
/// `n` entrants.
async fn draw_sale(core: &Core, stock: i64, secs: i64, n: usize) -> (VoucherId, Vec<UserId>) {
    let begins = Utc::now() + Duration::seconds(secs);
    let draft = VoucherDraft {
        title: "Draw".into(),
        price_cents: "100".into(),
        stock: stock.to_string(),
        begins_at: begins.to_rfc3339(),
        ends_at: (begins + Duration::hours(1)).to_rfc3339(),
        opening: "draw".into(),
        entries_open_at: (Utc::now() - Duration::seconds(1)).to_rfc3339(),
        ..VoucherDraft::default()
    };
    let v = catalog::create_voucher(core, &admin(core).await, &draft, Utc::now())
        .await
        .expect("create");
    let entrants = users(core, n).await;
    for u in &entrants {
        draw::enter(core, *u, v, loopback()).await.expect("enter");
    }
    (v, entrants)
}

/// The entries ranked as every instance ranks them: the log closed (as the draw closes it;
/// idempotent), its root and the committed secret make the seed (no beacon here).
async fn ranking(core: &Core, v: VoucherId) -> Vec<UserId> {
    let committed = store::draws::get(&core.db, v)
        .await
        .expect("read")
        .expect("draw")
        .seed;
    let closed = store::draw_log::close(&core.db, v, |_, _| None)
        .await
        .expect("close");
    let seed = fair::draw_seed(v.get(), &committed, &closed.root, &[]);
    let users: std::collections::HashMap<fair::Hash, UserId> =
        store::draw_log::entrants(&core.db, v)
            .await
            .expect("log")
            .into_iter()
            .map(|(u, l)| (l, u))
            .collect();
    fair::rank(&seed, &closed.leaves)
        .into_iter()
        .map(|(leaf, _)| users[&leaf])
        .collect()
}

#[sqlx::test]
async fn a_draw_resumed_after_a_partial_admission_admits_every_rank_once(db: PgPool) {
    let core = core(db, &[("SECKILL_ENTRIES_PER_CLIENT", "1000")]).await;
    const STOCK: i64 = 20;
    let (v, _) = draw_sale(&core, STOCK, 2, 50).await;
    assert_eq!(
        draw::run(&core, v).await.ok().flatten().map(|r| r.entrants),
        Some(50),
        "run waits for the start by the Redis clock"
    );
    // That run finished: start again on a fresh sale, and stop one half-way by hand.
    let (v, _) = draw_sale(&core, STOCK, 2, 50).await;
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    let ranked = ranking(&core, v).await;
    let mut redis = core.redis.clone();
    let opened = scripts::draw_open(&mut redis, &core.keys, v, Some(50))
        .await
        .expect("open");
    assert_eq!(
        opened,
        scripts::DrawOpen::Open {
            cursor: 0,
            entrants: 50
        }
    );
    let first = scripts::draw_admit(&mut redis, &core.keys, v, 0, &ranked[..7])
        .await
        .expect("admit");
    assert_eq!(
        first,
        scripts::DrawAdmit::Advanced {
            cursor: 7,
            stock: STOCK - 7,
            admitted: 7
        }
    );
    // A stale instance sending the same slice again changes nothing.
    let stale = scripts::draw_admit(&mut redis, &core.keys, v, 0, &ranked[..7])
        .await
        .expect("admit");
    assert_eq!(stale, scripts::DrawAdmit::Moved { cursor: 7 });

    // The "crashed" draw is resumed, by two instances at once.
    let other = sibling(&core, &[]).await;
    let (mine, theirs) = tokio::join!(draw::run(&core, v), draw::run(&other, v));
    let reports: Vec<_> = [mine.expect("run"), theirs.expect("run")]
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(reports.len(), 1, "one instance ran it: {reports:?}");
    assert_eq!(reports[0].admitted, STOCK - 7);
    assert_eq!(reports[0].cursor, STOCK);
    assert!(reports[0].recorded);
    assert!(
        draw::run(&other, v).await.expect("run").is_none(),
        "recorded: never again"
    );

    let keys = core.keys.voucher(v);
    let buyers: std::collections::HashMap<i64, String> =
        redis.hgetall(&keys.buyers).await.expect("buyers");
    let queued: i64 = redis.hlen(&keys.queued).await.expect("queued");
    let stream: i64 = redis.xlen(&keys.orders).await.expect("stream");
    let stock: i64 = redis.get(&keys.stock).await.expect("stock");
    assert_eq!((queued, stream, stock), (STOCK, STOCK, 0));
    let mut winners: Vec<i64> = buyers.keys().copied().collect();
    winners.sort_unstable();
    let mut expected: Vec<i64> = ranked[..20].iter().map(|u| u.get()).collect();
    expected.sort_unstable();
    assert_eq!(winners, expected, "the first {STOCK} ranks, each once");
    let recorded = store::draws::ranks(&core.db, v, 0, 100)
        .await
        .expect("ranks");
    assert_eq!(recorded, ranked, "PostgreSQL holds the same ranking");
}
