//! Several instances of one deployment over HTTP: run against one Redis node, and against a
//! Redis Cluster when `REDIS_URL` lists its seed nodes (the test command runs both).

use std::{
    collections::{HashMap, HashSet},
    time::Duration,
};

use crate::support::spawn_instances;
use reqwest::StatusCode;
use seckill::domain::{OrderId, Shard, VoucherId};
use serde_json::Value;
use sqlx::PgPool;

const VOUCHERS: usize = 12;
const STOCK: i64 = 30;
const SHOPPERS: usize = 60;

/// Buys `voucher` through `base`: the status and the order ID, if any.
async fn buy(c: &reqwest::Client, base: &str, voucher: i64) -> (StatusCode, Option<OrderId>) {
    let r = c
        .post(format!("{base}/api/vouchers/{voucher}/orders"))
        .send()
        .await
        .expect("send");
    let status = r.status();
    let body: Value = r.json().await.expect("json");
    let id = body["order_id"]
        .as_str()
        .map(|s| s.parse().expect("order id"));
    (status, id)
}

#[sqlx::test]
async fn three_instances_on_many_shards_hand_out_unique_ids_and_write_every_order(db: PgPool) {
    let apps = spawn_instances(db.clone(), 3).await;
    let admin = apps[0].sign_in("13800000000").await;
    let mut vouchers = Vec::new();
    for i in 0..VOUCHERS {
        // Created through every instance in turn; one voucher per shard.
        vouchers.push(apps[i % 3].create(&admin, -5, 3600, STOCK).await);
    }
    let shards: HashSet<Shard> = vouchers
        .iter()
        .map(|v| Shard::of_voucher(VoucherId::try_from(*v).expect("id")))
        .collect();
    assert_eq!(shards.len(), VOUCHERS, "the sales sit on {VOUCHERS} shards");

    // Every shopper tries every voucher at once, each buy through the next instance.
    let mut shoppers = Vec::new();
    for i in 0..SHOPPERS {
        shoppers.push(apps[i % 3].sign_in(&format!("1390000{i:04}")).await);
    }
    let mut tasks = Vec::new();
    for (i, c) in shoppers.iter().enumerate() {
        for (j, v) in vouchers.iter().enumerate() {
            let base = apps[(i + j) % 3].base.clone();
            let (c, v) = (c.clone(), *v);
            tasks.push(tokio::spawn(async move { (v, buy(&c, &base, v).await) }));
        }
    }
    let mut ids: HashMap<OrderId, i64> = HashMap::new();
    let mut admitted_per_voucher: HashMap<i64, i64> = HashMap::new();
    for t in tasks {
        let (v, (status, id)) = t.await.expect("task");
        match status {
            StatusCode::ACCEPTED => {
                let id = id.expect("an admitted buy names its order");
                let shard = Shard::of_voucher(VoucherId::try_from(v).expect("id"));
                assert_eq!(
                    Shard::of_order(id),
                    shard,
                    "the ID names its voucher's shard"
                );
                assert!(
                    ids.insert(id, v).is_none(),
                    "order ID {id} handed out twice"
                );
                *admitted_per_voucher.entry(v).or_default() += 1;
            }
            StatusCode::CONFLICT => {}
            other => panic!("a buy answered {other}"),
        }
    }
    for v in &vouchers {
        assert_eq!(
            admitted_per_voucher.get(v),
            Some(&STOCK),
            "voucher {v} sold out exactly"
        );
    }

    // The three workers write every accepted order, once, under its ID.
    let expected = i64::try_from(ids.len()).expect("count");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let written = loop {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM orders")
            .fetch_one(&db)
            .await
            .expect("count");
        if n >= expected || tokio::time::Instant::now() > deadline {
            break n;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(written, expected, "every accepted order is written");
    let rows: Vec<(i64, i64)> = sqlx::query_as("SELECT id, voucher_id FROM orders")
        .fetch_all(&db)
        .await
        .expect("rows");
    for (id, voucher) in rows {
        let id = OrderId::from_db(id).expect("id");
        assert_eq!(
            ids.get(&id),
            Some(&voucher),
            "order {id} written for its voucher"
        );
    }
    let stock_left: Vec<i64> = sqlx::query_scalar("SELECT stock FROM vouchers")
        .fetch_all(&db)
        .await
        .expect("stock");
    assert!(stock_left.iter().all(|s| *s == 0), "{stock_left:?}");
}

#[sqlx::test]
async fn a_buy_repeated_through_another_instance_answers_the_same_order(db: PgPool) {
    let apps = spawn_instances(db, 3).await;
    let admin = apps[0].sign_in("13800000000").await;
    let v = apps[1].create(&admin, -5, 3600, 5).await;
    let shopper = apps[2].sign_in("13900000001").await;
    let (status, first) = buy(&shopper, &apps[0].base, v).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let first = first.expect("order");
    // A load balancer or the shopper's app re-sends the buy after a lost reply, elsewhere.
    // (Three attempts in all: the per-second attempt limit of the test config.)
    for app in &apps[1..] {
        let (status, again) = buy(&shopper, &app.base, v).await;
        assert_eq!(
            status,
            StatusCode::ACCEPTED,
            "a repeated buy is not a refusal"
        );
        assert_eq!(again, Some(first), "the same order, through {}", app.base);
    }
    let left: Value = reqwest::get(format!("{}/api/vouchers/{v}", apps[1].base))
        .await
        .expect("send")
        .json()
        .await
        .expect("json");
    assert_eq!(left["remaining"], 4, "one unit taken: {left}");
}
