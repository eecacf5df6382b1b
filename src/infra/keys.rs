//! Every Redis key name, in one place (design.md §4).
//!
//! The keys of one voucher share its shard's hash tag `{s<k>}` (k = voucher ID mod 256, see
//! [`Shard`]) with that shard's order-ID day counters, so the admission script touches a single
//! Redis Cluster slot and draws its order ID in the same round trip. Every key starts with the configured [`KeyPrefix`], which lets
//! tests and several deployments share one Redis without seeing each other.

use crate::domain::{Phone, Shard, UserId, VoucherId};

/// The consumer group of the order writers, on every voucher's order stream.
pub const ORDER_GROUP: &str = "order-writers";

/// A prefix for every key. It may not contain `{` or `}`, which would change hash slots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyPrefix(String);

impl TryFrom<&str> for KeyPrefix {
    type Error = String;
    fn try_from(raw: &str) -> Result<Self, Self::Error> {
        if raw.contains(['{', '}']) || raw.chars().any(char::is_whitespace) {
            return Err("must not contain braces or whitespace".to_owned());
        }
        Ok(Self(raw.to_owned()))
    }
}

impl KeyPrefix {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The keys of one voucher's sale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoucherKeys {
    /// Hash: `begins_ms`, `ends_ms`, `initial` (preloaded sale window and initial stock).
    pub sale: String,
    /// String: units left to admit.
    pub stock: String,
    /// Hash: user → order (16-hex) of each shopper admitted and not released, so a repeated
    /// buy answers with the same order. (Named `buyer-orders`: the set this replaced was
    /// `buyers`, and a live Redis may still hold one.)
    pub buyers: String,
    /// Hash: order (16-hex) → user, for orders admitted and not yet settled by the worker.
    pub queued: String,
    /// Stream: the durable order queue of this voucher.
    pub orders: String,
    /// Stream: orders the worker gave up on, with their reason.
    pub dead: String,
    /// Hash: key of each stock move (a cancelled order's unit back, an admin's top-up) already
    /// applied to `stock`, so a move is applied once (`lua/apply_move.lua`).
    pub moves: String,
    /// Set: a draw sale's entrants (user IDs), frozen when its draw opens (`lua/enter.lua`).
    pub entries: String,
    /// Prefix of the per-shopper purchase-attempt counters (append the user ID): each counts
    /// the attempts of one Redis-clock second and expires at its end.
    pub rate: String,
    /// Set: the shoppers waiting for the sale's reminder (user IDs), its count read by the sale's
    /// page; PostgreSQL's `reminders` is the record (`src/reminders/`).
    pub reminders: String,
}

impl VoucherKeys {
    /// The purchase-attempt counter of `user` on this sale.
    pub fn rate_of(&self, user: UserId) -> String {
        format!("{}{user}", self.rate)
    }
}

/// The keys of one named lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockKeys {
    /// Hash: owner → hold count (reentrant).
    pub lock: String,
    /// String: the last fencing token granted for this name.
    pub fence: String,
    /// Pub/sub channel announcing releases.
    pub channel: String,
}

/// The sign-in keys of one phone, in one slot (the phone is their hash tag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginKeys {
    /// Hash `code`, `attempts` of the code last sent.
    pub code: String,
    /// Present while the phone may not be sent another code.
    pub throttle: String,
    /// Wrong codes sent for the phone in the current window.
    pub failures: String,
}

/// Builds key names under one prefix.
#[derive(Debug, Clone, Default)]
pub struct Keys {
    prefix: KeyPrefix,
}

impl Keys {
    pub fn new(prefix: KeyPrefix) -> Self {
        Self { prefix }
    }

    pub fn prefix(&self) -> &KeyPrefix {
        &self.prefix
    }

    /// The hash tag of a shard: every key with it lives in the same Redis Cluster slot.
    pub fn shard_tag(shard: Shard) -> String {
        format!("{{s{shard}}}")
    }

    pub fn voucher(&self, id: VoucherId) -> VoucherKeys {
        let tag = Self::shard_tag(Shard::of_voucher(id));
        let base = format!("{}seckill:{tag}:v{id}", self.prefix.0);
        VoucherKeys {
            sale: format!("{base}:sale"),
            stock: format!("{base}:stock"),
            buyers: format!("{base}:buyer-orders"),
            queued: format!("{base}:queued"),
            orders: format!("{base}:orders"),
            dead: format!("{base}:dead"),
            moves: format!("{base}:moves"),
            entries: format!("{base}:entries"),
            rate: format!("{base}:rate:"),
            reminders: format!("{base}:reminders"),
        }
    }

    /// Reminders sent in the second `unix_secs`, across instances (their pace, `src/reminders/`).
    pub fn reminders_sent(&self, unix_secs: i64) -> String {
        format!("{}reminders:sent:{unix_secs}", self.prefix.0)
    }

    /// Set of voucher IDs preloaded into Redis: the worker reads their order streams.
    pub fn preloaded_vouchers(&self) -> String {
        format!("{}seckill:vouchers", self.prefix.0)
    }

    /// The order-ID counter of `shard` on the UTC day `day` (`INCR`ed by the scripts that draw
    /// IDs; the app names it from its clock and the script checks the day against Redis's).
    pub fn order_counter(&self, shard: Shard, day: chrono::NaiveDate) -> String {
        format!(
            "{}icr:{}:order:{}",
            self.prefix.0,
            Self::shard_tag(shard),
            day.format("%Y:%m:%d")
        )
    }

    /// A counter in `shard`'s slot the order writer increments before `WAIT` (see
    /// `jobs/order_writer/replicated.rs`): a write on the connection, so the wait covers every
    /// earlier write of that master.
    pub fn replication_mark(&self, shard: Shard) -> String {
        format!(
            "{}seckill:{}:replicated",
            self.prefix.0,
            Self::shard_tag(shard)
        )
    }

    /// Pub/sub channel on which units coming back on sale are announced (the voucher's ID).
    pub fn stock_back_channel(&self) -> String {
        format!("{}seckill:stock-back", self.prefix.0)
    }

    /// Pub/sub channel: a voucher changed (created, ended, topped up); payload its ID.
    pub fn catalog_channel(&self) -> String {
        format!("{}seckill:catalog", self.prefix.0)
    }

    /// A session from before signed tokens (decision 30): kept until it expires.
    pub fn session(&self, token: &str) -> String {
        format!("{}session:{token}", self.prefix.0)
    }

    /// Sessions signed out before their expiry: session ID → expiry (ms).
    pub fn revoked_sessions(&self) -> String {
        format!("{}sessions:revoked", self.prefix.0)
    }

    /// Users signed out everywhere: user ID → cut-off (ms).
    pub fn revoked_users(&self) -> String {
        format!("{}sessions:cut-offs", self.prefix.0)
    }

    /// Pub/sub channel: a revocation ([`crate::auth::revocations::Revoked`]'s text).
    pub fn revocations_channel(&self) -> String {
        format!("{}seckill:revoked", self.prefix.0)
    }

    /// The session signing key every instance shares when `SECKILL_SESSION_KEYS` is not set.
    pub fn session_key(&self) -> String {
        format!("{}sessions:key", self.prefix.0)
    }

    pub fn login(&self, phone: &Phone) -> LoginKeys {
        let base = format!("{}login:{{{phone}}}", self.prefix.0);
        LoginKeys {
            code: format!("{base}:code"),
            throttle: format!("{base}:throttle"),
            failures: format!("{base}:failures"),
        }
    }

    /// A fixed-window counter of `what` (`codes`, `sign-ins`, `entries`) from the clients of
    /// `network` (an address, an IPv6 /64 or /48), in the slot of `site` (the address, or the
    /// IPv6 /48 `network` lies in): one client's counters are counted in one atomic call.
    pub fn client_limit(
        &self,
        site: std::net::IpAddr,
        network: std::net::IpAddr,
        what: &str,
    ) -> String {
        format!("{}limit:{{{site}}}:{network}:{what}", self.prefix.0)
    }

    pub fn lock(&self, name: &str) -> LockKeys {
        let base = format!("{}lock:{{{name}}}", self.prefix.0);
        LockKeys {
            lock: base.clone(),
            fence: format!("{base}:fence"),
            channel: format!("{base}:released"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot_tag(key: &str) -> &str {
        let open = key.find('{').expect("has a tag");
        let close = key[open..].find('}').expect("closed") + open;
        &key[open + 1..close]
    }

    #[test]
    fn a_vouchers_keys_share_one_hash_tag() {
        let keys = Keys::new(KeyPrefix::try_from("t1:").expect("valid"));
        let v = keys.voucher(VoucherId::try_from(42).expect("positive"));
        let rate = v.rate_of(crate::domain::UserId::try_from(7).expect("positive"));
        for k in [
            &v.sale, &v.stock, &v.buyers, &v.queued, &v.orders, &v.dead, &v.moves, &v.entries,
            &rate,
        ] {
            assert!(k.starts_with("t1:seckill:{s42}:v42:"), "{k}");
            assert_eq!(slot_tag(k), "s42");
        }
        let day = chrono::NaiveDate::from_ymd_opt(2026, 3, 9).expect("date");
        let counter = keys.order_counter(
            Shard::of_voucher(VoucherId::try_from(298).expect("id")),
            day,
        );
        assert_eq!(slot_tag(&counter), "s42", "voucher 298 is in shard 42 too");
    }

    #[test]
    fn prefixes_with_braces_are_refused() {
        assert!(KeyPrefix::try_from("a{").is_err());
        assert!(KeyPrefix::try_from("a b").is_err());
        assert!(KeyPrefix::try_from("test-1:").is_ok());
    }

    #[test]
    fn the_day_counter_key_is_the_scripts_own() {
        let day = chrono::NaiveDate::from_ymd_opt(2026, 3, 9).expect("date");
        assert_eq!(
            Keys::default().order_counter(Shard::new(7), day),
            "icr:{s7}:order:2026:03:09"
        );
    }

    #[test]
    fn a_phones_sign_in_keys_share_its_tag() {
        let keys = Keys::new(KeyPrefix::try_from("t:").expect("prefix"));
        let phone = Phone::try_from("+8613800000000").expect("phone");
        let login = keys.login(&phone);
        for k in [&login.code, &login.throttle, &login.failures] {
            assert_eq!(slot_tag(k), "+8613800000000", "{k}");
        }
    }

    #[test]
    fn lock_keys_share_a_tag() {
        let l = Keys::default().lock("preload:7");
        assert_eq!(slot_tag(&l.lock), slot_tag(&l.fence));
        assert_eq!(slot_tag(&l.lock), "preload:7");
    }
}
