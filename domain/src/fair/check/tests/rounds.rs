//! [`check`]'s beacon rules: a round named, the one the rules name, emitted after the close.

use super::*;

#[test]
fn a_late_close_with_its_planned_round_checks() {
    // Closed a minute after the start: the named round was emitted by then.
    let t = drawn_closing(10, 3, 60_000);
    let b = t.beacon.clone().expect("beacon");
    let planned = b.planned_round.expect("moved");
    assert!(b.round > planned);
    assert_eq!(planned, CHAIN.named_round(closes_at(), MARGIN));
    let c = check(&t, &sale(3), &timed()).expect("checks");
    assert_eq!(c.timing, Timing::Checked { pinned: true });
}

#[test]
fn without_a_beacon_the_draw_is_refused_unless_none_was_expected() {
    let mut t = drawn(10, 2);
    t.beacon = None;
    for b in [timed(), BeaconCheck::Untimed] {
        assert_eq!(check(&t, &sale(2), &b), Err(Mismatch::NoBeacon));
    }
    assert_eq!(
        check(&t, &sale(2), &BeaconCheck::NotExpected),
        Err(Mismatch::RandomnessWithoutBeacon)
    );
    // The shop without a beacon: empty randomness, the seed made of it.
    let committed = hash_from_hex(t.committed_seed.as_deref().expect("c")).expect("hex");
    let root = hash_from_hex(t.entries_root.as_deref().expect("root")).expect("hex");
    let seed = draw_seed(VOUCHER, &committed, &root, &[]);
    let leaves: Vec<Hash> = t
        .leaves
        .as_ref()
        .expect("leaves")
        .iter()
        .map(|l| hash_from_hex(l).expect("hex"))
        .collect();
    let ranked = rank(&seed, &leaves);
    t.randomness = Some(String::new());
    t.seed = Some(hex::encode(seed));
    t.ranking = Some(
        ranked
            .iter()
            .zip(1..)
            .map(|((l, k), rank)| RankedLeaf {
                rank,
                leaf: hex::encode(l),
                key: hex::encode(k),
            })
            .collect(),
    );
    t.winners = Some(ranked[..2].iter().map(|(l, _)| hex::encode(l)).collect());
    let c = check(&t, &sale(2), &BeaconCheck::NotExpected).expect("checks");
    assert_eq!(c.timing, Timing::NoBeacon);
    assert_eq!(check(&t, &sale(2), &timed()), Err(Mismatch::NoBeacon));
}

/// `drawn(10, 2)` with its beacon changed by `f`.
fn beacon(f: impl Fn(&mut BeaconView)) -> Transcript {
    let mut t = drawn(10, 2);
    f(t.beacon.as_mut().expect("beacon"));
    t
}

#[test]
fn a_round_other_than_the_one_the_rules_name_is_refused() {
    let named = CHAIN.named_round(closes_at(), MARGIN);
    let unpinned = BeaconCheck::Timed {
        chain: CHAIN,
        margin: None,
    };
    // A later round, as if the first one was not liked: only the margin tells.
    let later = beacon(|b| b.round = named + 1);
    assert_eq!(
        check(&later, &sale(2), &timed()),
        Err(Mismatch::NotNamed {
            named: named + 1,
            expected: named
        })
    );
    assert!(check(&later, &sale(2), &unpinned).is_ok());
    // A round emitted before the entries closed can never have been named at creation.
    let early = beacon(|b| b.round = CHAIN.first_round_at(closes_at()) - 1);
    assert!(matches!(
        check(&early, &sale(2), &unpinned),
        Err(Mismatch::NamedBeforeStart { .. })
    ));
    assert_eq!(
        check(&beacon(|b| b.round = 0), &sale(2), &BeaconCheck::Untimed),
        Err(Mismatch::RoundZero)
    );
    // A move must go to a later round, from transcript alone.
    let back = beacon(|b| b.planned_round = Some(b.round + 1));
    assert!(matches!(
        check(&back, &sale(2), &BeaconCheck::Untimed),
        Err(Mismatch::MovedBack { .. })
    ));
    let same = beacon(|b| b.planned_round = Some(b.round));
    assert!(matches!(
        check(&same, &sale(2), &BeaconCheck::Untimed),
        Err(Mismatch::MovedBack { .. })
    ));
    // A move while the named round was still to come.
    let needless = beacon(|b| {
        b.planned_round = Some(b.round);
        b.round += 4;
    });
    assert!(matches!(
        check(&needless, &sale(2), &unpinned),
        Err(Mismatch::NeedlessMove { .. })
    ));
    // A late close moved to another round than the first after it.
    let mut late = drawn_closing(10, 2, 60_000);
    late.beacon.as_mut().expect("beacon").round += 1;
    assert!(matches!(
        check(&late, &sale(2), &timed()),
        Err(Mismatch::MovedElsewhere { .. })
    ));
}

#[test]
fn a_round_emitted_before_the_close_is_refused() {
    let named = CHAIN.named_round(closes_at(), MARGIN);
    let unpinned = BeaconCheck::Timed {
        chain: CHAIN,
        margin: None,
    };
    // Closed after the named round, yet not moved.
    let mut t = drawn_closing(10, 2, 60_000);
    let b = t.beacon.as_mut().expect("beacon");
    b.round = named;
    b.planned_round = None;
    for check_with in [timed(), unpinned] {
        assert!(matches!(
            check(&t, &sale(2), &check_with),
            Err(Mismatch::BeforeClose { round, .. }) if round == named
        ));
    }
    // Moved, to a round still emitted before the close.
    let mut t = drawn_closing(10, 2, 60_000);
    let closed_at = t.closed_at.expect("closed");
    t.beacon.as_mut().expect("beacon").round = CHAIN.first_round_at(closed_at) - 1;
    assert!(matches!(
        check(&t, &sale(2), &unpinned),
        Err(Mismatch::BeforeClose { .. })
    ));
}
