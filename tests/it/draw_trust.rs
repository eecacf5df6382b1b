//! A draw nobody has to trust (issue #42): entries are durable before their answer, the draw
//! ranks the committed log whatever Redis lost, and it waits for a beacon round that verifies.

use std::time::Duration;

use chrono::Utc;
use fakes::drand::{FakeDrand, Scheme};
use seckill::{
    catalog::{self, admin::SaleAdminError},
    domain::{fair, UserId, VoucherDraft, VoucherId},
    draw::{self, DrawError},
    testing::store,
    Core,
};
use sqlx::PgPool;

use crate::common::{admin, core, del, loopback, users};

/// A draw sale of `stock` units whose entries are open and whose draw is `secs` away.
async fn draw_sale(core: &Core, stock: i64, secs: i64) -> VoucherId {
    let begins = Utc::now() + chrono::Duration::seconds(secs);
    let draft = VoucherDraft {
        title: "Draw".into(),
        price_cents: "100".into(),
        stock: stock.to_string(),
        begins_at: begins.to_rfc3339(),
        ends_at: (begins + chrono::Duration::hours(1)).to_rfc3339(),
        opening: "draw".into(),
        entries_open_at: (Utc::now() - chrono::Duration::seconds(1)).to_rfc3339(),
        ..VoucherDraft::default()
    };
    catalog::create_voucher(core, &admin(core).await, &draft, Utc::now())
        .await
        .expect("create")
}

/// The ranking recomputed from the transcript alone: root, seed, keys.
fn recompute(t: &draw::Transcript, voucher: VoucherId) -> Vec<fair::Hash> {
    let hex32 = |s: &str| fair::hash_from_hex(s).expect("32 bytes of hex");
    let leaves: Vec<fair::Hash> = t
        .leaves
        .as_ref()
        .expect("leaves")
        .iter()
        .map(|l| hex32(l))
        .collect();
    assert!(leaves.windows(2).all(|w| w[0] < w[1]), "sorted ascending");
    let root = fair::merkle_root(&leaves);
    assert_eq!(hex::encode(root), t.entries_root.clone().expect("root"));
    let committed = hex32(t.committed_seed.as_deref().expect("committed seed"));
    assert_eq!(hex::encode(fair::commitment(&committed)), t.commitment);
    let randomness = hex::decode(t.randomness.as_deref().expect("randomness")).expect("hex");
    let seed = fair::draw_seed(voucher.get(), &committed, &root, &randomness);
    assert_eq!(hex::encode(seed), t.seed.clone().expect("seed"));
    fair::rank(&seed, &leaves)
        .into_iter()
        .map(|(l, _)| l)
        .collect()
}

#[sqlx::test]
async fn redis_losing_every_key_of_the_sale_before_the_draw_loses_no_entrant(db: PgPool) {
    let core = core(db, &[("SECKILL_ENTRIES_PER_CLIENT", "1000")]).await;
    const STOCK: i64 = 5;
    let v = draw_sale(&core, STOCK, 2).await;
    let mut receipts = Vec::new();
    for u in users(&core, 30).await {
        let e = draw::enter(&core, u, v, loopback()).await.expect("enter");
        assert!(e.new);
        receipts.push((u, e.receipt));
    }
    // Entering again answers the same receipt.
    let again = draw::enter(&core, receipts[0].0, v, loopback())
        .await
        .expect("again");
    assert_eq!(again.receipt, receipts[0].1);
    assert!(!again.new);

    // Redis loses the sale: its hash, its stock and every entry.
    let k = core.keys.voucher(v);
    del(&core, &[&k.sale, &k.stock, &k.entries, &k.buyers, &k.moves]).await;
    let report = draw::run(&core, v).await.expect("run").expect("ran");
    assert_eq!(report.entrants, 30, "every logged entrant is ranked");
    assert_eq!(
        report.admitted, STOCK,
        "never first come: the draw admitted the units"
    );

    let t = draw::transcript(&core, v).await.expect("transcript");
    let ranked = recompute(&t, v);
    let winners: Vec<String> = ranked[..5].iter().map(hex::encode).collect();
    assert_eq!(t.winners.clone().expect("winners"), winners);
    assert_eq!(t.stock, Some(STOCK));
    // Each winner holds an order; every entrant's leaf is in the list.
    let mut redis = core.redis.clone();
    for (u, r) in &receipts {
        assert!(t.leaves.as_ref().expect("leaves").contains(&r.leaf));
        let held: Option<String> = redis::AsyncCommands::hget(&mut redis, &k.buyers, u.get())
            .await
            .expect("buyers");
        assert_eq!(held.is_some(), winners.contains(&r.leaf), "user {u}");
    }
    // Redis's duplicate check holds every entrant again.
    let n: i64 = redis::AsyncCommands::scard(&mut redis, &k.entries)
        .await
        .expect("scard");
    assert_eq!(n, 30);
}

#[sqlx::test]
async fn an_entry_answered_is_in_the_committed_list_and_one_refused_is_not(db: PgPool) {
    let core = core(db, &[("SECKILL_ENTRIES_PER_CLIENT", "100000")]).await;
    let v = draw_sale(&core, 3, 3_600).await;
    let shoppers = users(&core, 300).await;
    // Entries race the close (as the draw closes the log): every one answered 202 must be in
    // the list the close committed, every one refused must not.
    let mut tasks = tokio::task::JoinSet::new();
    for u in shoppers.clone() {
        let core = core.clone();
        tasks.spawn(async move { (u, draw::enter(&core, u, v, loopback()).await) });
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let closed = store::draw_log::close(&core.db, v, |_, _| None)
        .await
        .expect("close");
    let (mut answered, mut refused) = (0, 0);
    while let Some(joined) = tasks.join_next().await {
        let (u, result) = joined.expect("task");
        let leaf = store::draw_log::get(&core.db, v, u).await.expect("read");
        match result {
            Ok(e) => {
                answered += 1;
                let leaf = fair::hash_from_hex(&e.receipt.leaf).expect("leaf");
                assert!(closed.leaves.binary_search(&leaf).is_ok(), "user {u}");
            }
            Err(DrawError::EntriesClosed) => {
                refused += 1;
                assert!(leaf.is_none(), "a refused entry is not logged: user {u}");
            }
            Err(e) => panic!("user {u}: {e}"),
        }
    }
    assert_eq!(answered + refused, 300);
    assert_eq!(
        closed.leaves.len(),
        answered,
        "the list is exactly the entries answered"
    );
    let after = draw::enter(&core, UserId::from_db(shoppers[0].get()), v, loopback()).await;
    assert!(
        matches!(&after, Ok(_) | Err(DrawError::EntriesClosed)),
        "{after:?}"
    );
}

async fn beacon_core(db: PgPool, drand: &FakeDrand) -> Core {
    core(
        db,
        &[
            ("SECKILL_DRAND_URL", drand.url()),
            ("SECKILL_DRAND_CHAIN_HASH", drand.chain_hash()),
            ("SECKILL_DRAND_PUBLIC_KEY", &drand.public_key()),
            ("SECKILL_DRAW_COMMIT_MARGIN_MS", "1000"),
        ],
    )
    .await
}

#[sqlx::test]
async fn the_draw_waits_for_a_beacon_round_that_verifies_and_takes_its_randomness(db: PgPool) {
    let drand = FakeDrand::start(Scheme::Quicknet, 1, b"quicknet stand-in")
        .await
        .expect("drand");
    let core = beacon_core(db, &drand).await;
    let v = draw_sale(&core, 2, 1).await;
    for u in users(&core, 6).await {
        draw::enter(&core, u, v, loopback()).await.expect("enter");
    }
    let named = draw::transcript(&core, v)
        .await
        .expect("transcript")
        .beacon
        .expect("a round named at creation");
    assert_eq!(named.chain_hash, drand.chain_hash());

    // The relay lies: rounds signed with another key. The draw waits, committed but unrun.
    drand.forge(true);
    let running = tokio::spawn({
        let core = core.clone();
        async move { draw::run(&core, v).await }
    });
    let mut waited = 0;
    loop {
        let t = draw::transcript(&core, v).await.expect("transcript");
        if t.entries_root.is_some() {
            assert!(t.seed.is_none(), "no seed before a verified round");
            assert!(t.closed_at.expect("closed") < drand_time(&drand, &core, named.round).await);
            break;
        }
        waited += 1;
        assert!(waited < 600, "the log never closed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Past the round's time, still waiting on a forged relay.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        !running.is_finished(),
        "the draw ran on a round that does not verify"
    );
    assert!(draw::transcript(&core, v).await.expect("t").seed.is_none());

    drand.forge(false);
    let report = tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the draw ran once the round verified")
        .expect("task")
        .expect("run")
        .expect("ran");
    assert_eq!(report.admitted, 2);
    let t = draw::transcript(&core, v).await.expect("transcript");
    let round = t.beacon.as_ref().expect("beacon").round;
    assert_eq!(
        t.randomness.clone().expect("randomness"),
        hex::encode(drand.randomness(round)),
        "the round's own randomness"
    );
    let ranked = recompute(&t, v);
    assert_eq!(t.ranking.expect("ranking").len(), ranked.len());
}

/// Issue #51: once the list is committed, its operator cannot abort the draw after learning the
/// round. The instance waiting for the round dies (its task aborted, its lock left to lapse);
/// an admin's end is refused; the next instance runs the draw, which publishes a ranking that
/// recomputes; the sale ends after it.
#[sqlx::test]
async fn a_committed_draw_cannot_be_ended_before_its_ranking_is_published(db: PgPool) {
    let drand = FakeDrand::start(Scheme::Quicknet, 1, b"quicknet stand-in")
        .await
        .expect("drand");
    let core = beacon_core(db, &drand).await;
    let v = draw_sale(&core, 2, 1).await;
    for u in users(&core, 5).await {
        draw::enter(&core, u, v, loopback()).await.expect("enter");
    }
    // The round is held back (the relay serves only forgeries), so the draw waits, committed.
    drand.forge(true);
    let waiting = tokio::spawn({
        let core = core.clone();
        async move { draw::run(&core, v).await }
    });
    let mut tries = 0;
    while draw::transcript(&core, v)
        .await
        .expect("transcript")
        .entries_root
        .is_none()
    {
        tries += 1;
        assert!(tries < 600, "the log never closed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    waiting.abort();
    // Closed, not drawn: the published JSON (the leaves kept serialized, sent after the rest)
    // reads back as the transcript, and the check page's facts are its own.
    let t = draw::transcript(&core, v).await.expect("transcript");
    assert_eq!(t.leaves.as_ref().map(Vec::len), Some(5));
    let sent: Vec<u8> = draw::transcript_json(&core, v)
        .await
        .expect("json")
        .concat();
    let sent: serde_json::Value = serde_json::from_slice(&sent).expect("one JSON object");
    assert_eq!(sent, serde_json::to_value(&t).expect("value"));
    let facts = draw::facts(&core, v).await.expect("facts");
    assert_eq!(
        (
            facts.entrants,
            facts.entries_root.as_ref(),
            facts.seed.as_ref()
        ),
        (5, t.entries_root.as_ref(), None)
    );
    let admin = admin(&core).await;
    let refused = catalog::admin::end_sale(&core, &admin, v).await;
    assert!(
        matches!(refused, Err(SaleAdminError::DrawCommitted)),
        "{refused:?}"
    );
    // The console shows the draw waiting, and for which round.
    let round = draw::transcript(&core, v)
        .await
        .expect("transcript")
        .beacon
        .expect("beacon")
        .round;
    let row = catalog::console::overview(&core, 25)
        .await
        .expect("console")
        .into_iter()
        .find(|r| r.state.voucher.id == v)
        .expect("the draw's row");
    assert_eq!(row.awaiting_round, Some(round));
    // The round comes out; whichever instance gets the lock next runs the draw.
    drand.forge(false);
    let mut report = None;
    for _ in 0..600 {
        report = draw::run(&core, v).await.expect("run");
        if report.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let report = report.expect("the draw ran once the lapsed lock was free");
    assert_eq!(report.entrants, 5);
    let t = draw::transcript(&core, v).await.expect("transcript");
    let ranked = recompute(&t, v);
    assert_eq!(t.ranking.expect("ranking").len(), ranked.len());
    let row = catalog::console::overview(&core, 25)
        .await
        .expect("console")
        .into_iter()
        .find(|r| r.state.voucher.id == v)
        .expect("the draw's row");
    assert_eq!(row.awaiting_round, None, "drawn: nothing awaited");
    catalog::admin::end_sale(&core, &admin, v)
        .await
        .expect("ended after the draw");
}

/// Issue #51: a draw whose round is withheld (the relay serves that round forged, so it never
/// verifies) stalls no other draw: the draws job runs each due draw in a task of its own.
#[sqlx::test]
async fn a_withheld_round_stalls_no_other_draw(db: PgPool) {
    let drand = FakeDrand::start(Scheme::Quicknet, 1, b"quicknet stand-in")
        .await
        .expect("drand");
    let core = beacon_core(db, &drand).await;
    let stuck = draw_sale(&core, 1, 1).await;
    let other = draw_sale(&core, 1, 4).await;
    for u in users(&core, 3).await {
        draw::enter(&core, u, stuck, loopback())
            .await
            .expect("enter");
        draw::enter(&core, u, other, loopback())
            .await
            .expect("enter");
    }
    let named = |t: draw::Transcript| t.beacon.expect("a round named at creation").round;
    let stuck_round = named(draw::transcript(&core, stuck).await.expect("t"));
    let other_round = named(draw::transcript(&core, other).await.expect("t"));
    assert!(stuck_round < other_round, "{stuck_round} {other_round}");
    drand.forge_round(stuck_round);
    let shutdown = tokio_util::sync::CancellationToken::new();
    let job = tokio::spawn(seckill::jobs::draws::run(core.clone(), shutdown.clone()));
    // A hang guard of a minute; the draw is due in seconds.
    let mut tries = 0;
    while draw::transcript(&core, other)
        .await
        .expect("transcript")
        .seed
        .is_none()
    {
        tries += 1;
        assert!(
            tries < 600,
            "the other draw waited behind the withheld round"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let waiting = draw::transcript(&core, stuck).await.expect("transcript");
    assert!(
        waiting.entries_root.is_some() && waiting.seed.is_none(),
        "the first draw is committed and still waits for a round that verifies"
    );
    shutdown.cancel();
    job.await.expect("the job stops at shutdown");
}

/// When `round` is emitted, by the chain's own `/info` (as the shop reads it).
async fn drand_time(_drand: &FakeDrand, core: &Core, round: u64) -> chrono::DateTime<Utc> {
    let timing = seckill::testing::beacon_timing(core).await.expect("timing");
    timing.emitted_at(round)
}

#[sqlx::test]
async fn a_pedersen_chain_verifies_too(db: PgPool) {
    let drand = FakeDrand::start(Scheme::PedersenUnchained, 1, b"pedersen stand-in")
        .await
        .expect("drand");
    let core = beacon_core(db, &drand).await;
    let v = draw_sale(&core, 1, 1).await;
    for u in users(&core, 3).await {
        draw::enter(&core, u, v, loopback()).await.expect("enter");
    }
    let report = tokio::time::timeout(Duration::from_secs(30), draw::run(&core, v))
        .await
        .expect("in time")
        .expect("run")
        .expect("ran");
    assert_eq!(report.admitted, 1);
    let t = draw::transcript(&core, v).await.expect("transcript");
    let round = t.beacon.as_ref().expect("beacon").round;
    assert_eq!(
        t.randomness.clone().expect("randomness"),
        hex::encode(drand.randomness(round))
    );
    recompute(&t, v);
}
