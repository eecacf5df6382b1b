//! The beacon's clock and which round a draw takes (design.md decision 42), one copy for the
//! shop and for [`super::check`]:
//!
//! - round `r` of a drand chain is emitted at `genesis_time + (r - 1) · period` seconds;
//! - a sale names at creation the first round emitted at least the commit margin
//!   (`SECKILL_DRAW_COMMIT_MARGIN_MS`) after its entries close (`closes_at`, the sale's start);
//! - the close (`closed_at`) normally comes before that round is emitted, and the draw takes it;
//! - a close that comes once that round was emitted (no instance was up at the start) names the
//!   first round emitted at least the margin after the close, and after it in any case, and
//!   keeps the first as `planned_round`.
//!
//! From the transcript alone a verifier can demand a round, and a moved round later than the one
//! named. With the chain's clock: the named round emitted at or after `closes_at`; the round
//! drawn emitted after `closed_at`; a moved round's named one emitted by `closed_at`. With the
//! shop's margin as well: each round exactly the one the rules name ([`Timing::Checked`]'s
//! `pinned`).

use chrono::{DateTime, Duration, Utc};

use super::{check::Mismatch, Transcript};

/// A drand chain's clock, as its `/info` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chain {
    /// Unix seconds at which round 1 was emitted.
    pub genesis_time: i64,
    /// Seconds between rounds (a period below 1 is taken as 1).
    pub period: i64,
}

fn later(at: DateTime<Utc>, by: Duration) -> DateTime<Utc> {
    at.checked_add_signed(by)
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

impl Chain {
    fn step(&self) -> i64 {
        self.period.max(1)
    }

    /// When round `round` is emitted.
    pub fn emitted_at(&self, round: u64) -> DateTime<Utc> {
        let r = i64::try_from(round).unwrap_or(i64::MAX).saturating_sub(1);
        let secs = self
            .genesis_time
            .saturating_add(r.saturating_mul(self.step()));
        DateTime::from_timestamp(secs, 0).unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    /// The first round emitted at or after `at`.
    pub fn first_round_at(&self, at: DateTime<Utc>) -> u64 {
        let since = at
            .timestamp()
            .saturating_sub(self.genesis_time)
            .saturating_add(i64::from(at.timestamp_subsec_nanos() > 0));
        if since <= 0 {
            return 1;
        }
        let rounds = since.saturating_add(self.step() - 1) / self.step();
        u64::try_from(rounds).unwrap_or(0).saturating_add(1)
    }

    /// The round a sale names at creation: the first emitted at least `margin` after its
    /// entries close at `closes_at`.
    pub fn named_round(&self, closes_at: DateTime<Utc>, margin: Duration) -> u64 {
        self.first_round_at(later(closes_at, margin))
    }

    /// Whether a close at `closed_at` came once `round` was emitted (too late to draw it).
    pub fn emitted_by(&self, round: u64, closed_at: DateTime<Utc>) -> bool {
        self.emitted_at(round) <= closed_at
    }

    /// The round a late close names: the first emitted at least `margin` after the close, and
    /// strictly after it whatever the margin.
    pub fn round_after_close(&self, closed_at: DateTime<Utc>, margin: Duration) -> u64 {
        self.first_round_at(later(closed_at, margin.max(Duration::microseconds(1))))
    }
}

/// A drand chain's hash, recomputed from its info as drand does (`common/chain/info.go`,
/// `Info::Hash`): SHA-256 of the period in seconds (u32, big-endian), the genesis time (i64,
/// big-endian), the public key as published, the group hash (`groupHash`, or `genesis_seed`),
/// then the beacon ID's bytes unless it is the default one (`""` or `"default"`). The scheme is
/// not hashed. A relay's `/info` is believed only if it hashes to the chain pinned.
pub fn chain_hash(
    period_secs: u32,
    genesis_time: i64,
    public_key: &[u8],
    group_hash: &[u8],
    beacon_id: &str,
) -> super::Hash {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(period_secs.to_be_bytes());
    h.update(genesis_time.to_be_bytes());
    h.update(public_key);
    h.update(group_hash);
    if !matches!(beacon_id, "" | "default") {
        h.update(beacon_id.as_bytes());
    }
    h.finalize().into()
}

/// What the verifier knows of the beacon beside the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BeaconCheck {
    /// The chain's clock (from its `/info`, checked against the pinned chain) and, when known,
    /// the shop's commit margin (5 s unless the shop configured another).
    Timed {
        chain: Chain,
        margin: Option<Duration>,
    },
    /// No chain info at hand: the rounds' times are not checked ([`Timing::NotChecked`]).
    Untimed,
    /// A shop run without a beacon on purpose (`SECKILL_DRAND_URL=off`, a test bench): a
    /// transcript without a round is accepted ([`Timing::NoBeacon`]); one with a round is checked
    /// as [`BeaconCheck::Untimed`] would.
    NotExpected,
}

/// How far the beacon round was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// Against the chain's clock: the round named at creation is emitted at or after the entries
    /// close, the round drawn after the close, and a moved round's named one by the close.
    /// `pinned`: with the margin, each round is exactly the one the rules name.
    Checked { pinned: bool },
    /// Without the chain's clock: the rounds' times were not checked.
    NotChecked,
    /// No beacon, as the caller expected.
    NoBeacon,
}

/// The beacon's rules for the drawn transcript `t`, closed at `closed_at`.
pub(super) fn rounds(
    t: &Transcript,
    closed_at: DateTime<Utc>,
    check: &BeaconCheck,
) -> Result<Timing, Mismatch> {
    let Some(b) = &t.beacon else {
        return match check {
            BeaconCheck::NotExpected => Ok(Timing::NoBeacon),
            _ => Err(Mismatch::NoBeacon),
        };
    };
    let round = b.round;
    if round == 0 {
        return Err(Mismatch::RoundZero);
    }
    let named = match b.planned_round {
        Some(planned) if planned == 0 || planned >= round => {
            return Err(Mismatch::MovedBack { planned, round })
        }
        Some(planned) => planned,
        None => round,
    };
    let BeaconCheck::Timed { chain, margin } = *check else {
        return Ok(Timing::NotChecked);
    };
    let emitted = chain.emitted_at(named);
    if emitted < t.closes_at {
        return Err(Mismatch::NamedBeforeStart {
            round: named,
            emitted,
            closes_at: t.closes_at,
        });
    }
    if let Some(margin) = margin {
        let expected = chain.named_round(t.closes_at, margin);
        if named != expected {
            return Err(Mismatch::NotNamed { named, expected });
        }
    }
    if b.planned_round.is_some() && !chain.emitted_by(named, closed_at) {
        return Err(Mismatch::NeedlessMove {
            planned: named,
            emitted,
            closed_at,
        });
    }
    if chain.emitted_by(round, closed_at) {
        return Err(Mismatch::BeforeClose {
            round,
            emitted: chain.emitted_at(round),
            closed_at,
        });
    }
    if let (Some(margin), Some(_)) = (margin, b.planned_round) {
        let expected = chain.round_after_close(closed_at, margin);
        if round != expected {
            return Err(Mismatch::MovedElsewhere { round, expected });
        }
    }
    Ok(Timing::Checked {
        pinned: margin.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_and_times_meet() {
        let c = Chain {
            genesis_time: 1_692_803_367,
            period: 3,
        };
        let at = |s: i64| DateTime::from_timestamp(s, 0).expect("time");
        assert_eq!(c.emitted_at(1), at(1_692_803_367));
        assert_eq!(c.emitted_at(3), at(1_692_803_373));
        assert_eq!(c.first_round_at(at(1_692_803_367)), 1);
        assert_eq!(c.first_round_at(at(1_692_803_368)), 2);
        assert_eq!(c.first_round_at(at(1_692_803_371)), 3);
        for s in 1_692_803_360..1_692_803_400 {
            let r = c.first_round_at(at(s));
            assert!(c.emitted_at(r) >= at(s), "round {r} comes after {s}");
            assert!(r == 1 || c.emitted_at(r - 1) < at(s), "and is the first");
        }
    }

    #[test]
    fn a_late_close_names_a_round_after_it_even_with_no_margin() {
        let c = Chain {
            genesis_time: 1_000,
            period: 3,
        };
        let on_a_round = c.emitted_at(10);
        assert_eq!(c.first_round_at(on_a_round), 10, "at or after");
        assert_eq!(c.round_after_close(on_a_round, Duration::zero()), 11);
        assert!(c.emitted_at(c.round_after_close(on_a_round, Duration::zero())) > on_a_round);
        assert_eq!(c.round_after_close(on_a_round, Duration::seconds(5)), 12);
        assert_eq!(c.named_round(on_a_round, Duration::seconds(6)), 12);
    }
}

#[cfg(test)]
mod hash_tests {
    use super::chain_hash;

    fn unhex(s: &str) -> Vec<u8> {
        hex::decode(s).expect("hex")
    }

    #[test]
    fn quicknet_and_the_default_chain_hash_as_drand_publishes_them() {
        // quicknet (drand's own TestJsonFromRelay) and the League of Entropy's default chain.
        let quicknet = chain_hash(
            3,
            1_692_803_367,
            &unhex("83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a"),
            &unhex("f477d5c89f21a17c863a7f937c6a6d15859414d2be09cd448d4279af331c5d3e"),
            "quicknet",
        );
        assert_eq!(
            hex::encode(quicknet),
            "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"
        );
        let default = chain_hash(
            30,
            1_595_431_050,
            &unhex("868f005eb8e6e4ca0a47c8a77ceaa5309a47978a7c71bc5cce96366b5d7a569937c529eeda66c7293784a9402801af31"),
            &unhex("176f93498eac9ca337150b46d21dd58673ea4e3581185f869672e59fa4cb390a"),
            "default",
        );
        assert_eq!(
            hex::encode(default),
            "8990e7a9aaed2ffed73dbd7092123d6f289930540d7651336225dc172e51b2ce"
        );
        // Any field changed is another chain.
        let shifted = chain_hash(
            3,
            1_692_803_368,
            &unhex("83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a"),
            &unhex("f477d5c89f21a17c863a7f937c6a6d15859414d2be09cd448d4279af331c5d3e"),
            "quicknet",
        );
        assert_ne!(shifted, quicknet);
    }
}
