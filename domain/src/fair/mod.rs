//! A draw anyone can check (design.md decision 42): the rules the shop follows and a verifier
//! recomputes, in one place, with no I/O. The shop, its command-line verifier and its tests all
//! call these; README writes the same rules out with test vectors for a third party.
//!
//! - An entrant's **leaf** is `SHA-256("{voucher}:{user}:{salt hex}")`: it names the entry
//!   without naming the shopper, as only the shopper and the shop know the salt.
//! - A **receipt** is the shop's Ed25519 signature of the leaf and the sale's terms fixed at its
//!   creation ([`ReceiptTerms::message`]), by the key its transcript names ([`ReceiptKeyView`]).
//! - The entrant list is committed as the **RFC 9162 Merkle tree hash** over the leaves sorted
//!   ascending ([`merkle_root`]), with inclusion proofs ([`inclusion_proof`], [`verify_inclusion`]).
//! - The draw's **seed** is `SHA-256("seckill-draw-v1:{voucher}:{committed seed hex}:{root
//!   hex}:{randomness hex}")` ([`draw_seed`]), and a leaf's **key** `HMAC-SHA256(seed, leaf)`;
//!   ranks ascend by key ([`rank`]).
//! - A unit given down the ranking after the draw is a **move**, chained by
//!   `SHA-256("{previous hex}:{leaf hex}:{reason}")`, the first previous being the seed.
//!
//! [`Transcript`] is the draw as the shop publishes it; [`check`] recomputes it from what the
//! caller read beside it ([`Sale`], [`BeaconCheck`]) and names the first thing that does not hold.

mod chain;
mod check;
mod receipt;
mod transcript;
mod witness;

pub use chain::{chain_hash, BeaconCheck, Chain, Timing};
pub use check::{check, Checked, Mismatch, Sale, StockSeen, Witnessed};
pub use receipt::{key_id, ReceiptKeyView, ReceiptTerms};
pub use transcript::{BeaconView, Move, RankedLeaf, Transcript, WitnessView};
pub use witness::{
    read_token, timestamp_request, token_of_reply, witness_imprint, witness_message, TokenFacts,
    WitnessError,
};

use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};

/// 32 bytes: a leaf, a root, a seed, a key.
pub type Hash = [u8; 32];

/// An entrant's leaf: `SHA-256("{voucher}:{user}:{salt hex}")`.
pub fn leaf(voucher: i64, user: i64, salt: &[u8; 16]) -> Hash {
    Sha256::digest(format!("{voucher}:{user}:{}", hex::encode(salt))).into()
}

fn leaf_hash(leaf: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(leaf);
    h.finalize().into()
}

fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// The largest power of two smaller than `n` (`n` ≥ 2).
fn split(n: usize) -> usize {
    let mut k = 1;
    while k * 2 < n {
        k *= 2;
    }
    k
}

/// RFC 9162 §2.1.1: the Merkle tree hash of `leaves` in the order given (the shop gives them
/// sorted ascending). The empty tree hashes to `SHA-256("")`.
pub fn merkle_root(leaves: &[Hash]) -> Hash {
    match leaves {
        [] => Sha256::digest([]).into(),
        [one] => leaf_hash(one),
        _ => {
            let k = split(leaves.len());
            let (left, right) = leaves.split_at(k);
            node_hash(&merkle_root(left), &merkle_root(right))
        }
    }
}

/// RFC 9162 §2.1.3.1: the audit path of `leaves[index]`, siblings from the leaf up; `None` when
/// `index` is out of range.
pub fn inclusion_proof(leaves: &[Hash], index: usize) -> Option<Vec<Hash>> {
    if index >= leaves.len() {
        return None;
    }
    let mut path = Vec::new();
    let mut at = index;
    let mut span = leaves;
    // Walk down from the root, keeping the sibling subtree's hash at each step; reversed
    // at the end so the path reads from the leaf up.
    while span.len() > 1 {
        let k = split(span.len());
        let (left, right) = span.split_at(k);
        if at < k {
            path.push(merkle_root(right));
            span = left;
        } else {
            path.push(merkle_root(left));
            span = right;
            at -= k;
        }
    }
    path.reverse();
    Some(path)
}

/// RFC 9162 §2.1.3.2: whether `path` proves `leaf` at `index` of a tree of `tree_size` leaves
/// whose hash is `root`.
pub fn verify_inclusion(
    leaf: &Hash,
    index: u64,
    tree_size: u64,
    path: &[Hash],
    root: &Hash,
) -> bool {
    if index >= tree_size {
        return false;
    }
    let (mut fn_, mut sn) = (index, tree_size - 1);
    let mut r = leaf_hash(leaf);
    for p in path {
        if sn == 0 {
            return false;
        }
        if fn_ & 1 == 1 || fn_ == sn {
            r = node_hash(p, &r);
            if fn_ & 1 == 0 {
                while fn_ & 1 == 0 && fn_ != 0 {
                    fn_ >>= 1;
                    sn >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    sn == 0 && &r == root
}

/// The draw's seed: `SHA-256("seckill-draw-v1:{voucher}:{committed seed hex}:{entries root
/// hex}:{randomness hex}")`; `randomness` is empty when the shop runs without a beacon.
pub fn draw_seed(
    voucher: i64,
    committed_seed: &Hash,
    entries_root: &Hash,
    randomness: &[u8],
) -> Hash {
    Sha256::digest(format!(
        "seckill-draw-v1:{voucher}:{}:{}:{}",
        hex::encode(committed_seed),
        hex::encode(entries_root),
        hex::encode(randomness)
    ))
    .into()
}

/// A leaf's key in the draw: `HMAC-SHA256(key = seed, message = leaf)`.
pub fn key(seed: &Hash, leaf: &Hash) -> Hash {
    // HMAC takes a key of any length: this cannot fail.
    let mut mac = <hmac::Hmac<Sha256> as KeyInit>::new_from_slice(seed)
        .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
    mac.update(leaf);
    mac.finalize().into_bytes().into()
}

/// The leaves in rank order, each with its key: keys ascending (distinct leaves cannot tie
/// short of a SHA-256 collision; the leaf breaks one anyway).
pub fn rank(seed: &Hash, leaves: &[Hash]) -> Vec<(Hash, Hash)> {
    let mut ranked: Vec<(Hash, Hash)> = leaves.iter().map(|l| (*l, key(seed, l))).collect();
    ranked.sort_unstable_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    ranked
}

/// The SHA-256 of 32 bytes as a commitment (`SHA-256(committed seed)`).
pub fn commitment(secret: &Hash) -> Hash {
    Sha256::digest(secret).into()
}

/// Why a unit went down the ranking after the draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoveReason {
    /// The winner cancelled their order.
    Cancelled,
    /// The winner did not pay in time.
    Unpaid,
    /// The shop refunded and cancelled the order.
    Refunded,
    /// An admin added units.
    Added,
}

impl MoveReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cancelled => "cancelled",
            Self::Unpaid => "unpaid",
            Self::Refunded => "refunded",
            Self::Added => "added",
        }
    }
}

/// The next link of the moves' chain: `SHA-256("{previous hex}:{leaf hex}:{reason}")`.
pub fn move_hash(previous: &Hash, leaf: &Hash, reason: MoveReason) -> Hash {
    Sha256::digest(format!(
        "{}:{}:{}",
        hex::encode(previous),
        hex::encode(leaf),
        reason.as_str()
    ))
    .into()
}

/// Parses 64 hex characters into 32 bytes.
pub fn hash_from_hex(text: &str) -> Option<Hash> {
    let bytes = hex::decode(text).ok()?;
    bytes.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves(n: u8) -> Vec<Hash> {
        let mut v: Vec<Hash> = (0..n).map(|i| Sha256::digest([i]).into()).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn the_empty_tree_and_one_leaf_hash_as_rfc_9162_says() {
        assert_eq!(
            hex::encode(merkle_root(&[])),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let l = [7u8; 32];
        let mut h = Sha256::new();
        h.update([0u8]);
        h.update(l);
        assert_eq!(merkle_root(&[l]), <Hash>::from(h.finalize()));
    }

    #[test]
    fn three_leaves_split_at_two() {
        let l = leaves(3);
        let want = node_hash(
            &node_hash(&leaf_hash(&l[0]), &leaf_hash(&l[1])),
            &leaf_hash(&l[2]),
        );
        assert_eq!(merkle_root(&l), want);
    }

    #[test]
    fn every_leaf_of_every_size_proves_and_no_other_does() {
        for n in 1..=33u8 {
            let l = leaves(n);
            let root = merkle_root(&l);
            let size = u64::from(n);
            for (i, leaf) in l.iter().enumerate() {
                let path = inclusion_proof(&l, i).expect("in range");
                let at = u64::try_from(i).expect("small");
                assert!(
                    verify_inclusion(leaf, at, size, &path, &root),
                    "n={n} i={i}"
                );
                assert!(
                    !verify_inclusion(&[9; 32], at, size, &path, &root),
                    "another leaf"
                );
                if n > 1 {
                    let elsewhere = (at + 1) % size;
                    assert!(
                        !verify_inclusion(leaf, elsewhere, size, &path, &root),
                        "n={n} i={i} at another index"
                    );
                }
            }
            assert!(inclusion_proof(&l, l.len()).is_none());
        }
    }

    #[test]
    fn the_leaf_and_the_seed_are_the_published_strings_hashed() {
        let salt = [0xab; 16];
        let want: Hash = Sha256::digest(format!("12:34:{}", "ab".repeat(16))).into();
        assert_eq!(leaf(12, 34, &salt), want);
        let seed = draw_seed(12, &[1; 32], &[2; 32], &[]);
        let text = format!(
            "seckill-draw-v1:12:{}:{}:",
            "01".repeat(32),
            "02".repeat(32)
        );
        assert_eq!(seed, <Hash>::from(Sha256::digest(text)));
    }

    #[test]
    fn ranks_ascend_by_key_whatever_the_order_given() {
        let l = leaves(50);
        let mut backwards = l.clone();
        backwards.reverse();
        let seed = [5; 32];
        let a = rank(&seed, &l);
        assert_eq!(a, rank(&seed, &backwards));
        assert!(a.windows(2).all(|w| w[0].1 < w[1].1));
        assert_ne!(a, rank(&[6; 32], &l), "another seed, another ranking");
    }

    #[test]
    fn the_moves_chain_changes_with_every_link() {
        let a = move_hash(&[0; 32], &[1; 32], MoveReason::Unpaid);
        assert_ne!(a, move_hash(&[0; 32], &[1; 32], MoveReason::Added));
        assert_ne!(a, move_hash(&[0; 32], &[2; 32], MoveReason::Unpaid));
        assert_ne!(a, move_hash(&[3; 32], &[1; 32], MoveReason::Unpaid));
    }
}

/// The worked example in README ("Checking a draw"): a third party checks their own code
/// against these values.
#[cfg(test)]
mod readme_vectors {
    use super::*;

    #[test]
    fn the_readme_example_holds() {
        let salt = |b: u8| [b; 16];
        let leaves: Vec<Hash> = vec![
            leaf(42, 7, &salt(0x01)),
            leaf(42, 8, &salt(0x02)),
            leaf(42, 9, &salt(0x03)),
        ];
        let mut sorted = leaves.clone();
        sorted.sort_unstable();
        let root = merkle_root(&sorted);
        let committed = [0x11; 32];
        let randomness = [0x22; 32];
        let seed = draw_seed(42, &committed, &root, &randomness);
        let ranked = rank(&seed, &sorted);
        let proof = inclusion_proof(&sorted, 0).expect("in range");
        let hexes = |v: &[Hash]| v.iter().map(hex::encode).collect::<Vec<_>>();
        assert_eq!(
            hexes(&sorted),
            [
                "653c0cfe5ea55259482a31e33d37aa55e42635c9836d7c2c4053458adbc060c6",
                "8ad8b6555993c814bf12bb70afa38f5c2afc203498465ab10dca909e4d42c8ee",
                "bf0e7e9937c92ceb0700aa71f8d3a05174af4d01a4c55a39fdff319a6a0b0b04",
            ]
        );
        assert_eq!(
            hex::encode(leaves[0]),
            "8ad8b6555993c814bf12bb70afa38f5c2afc203498465ab10dca909e4d42c8ee",
            "user 7's leaf"
        );
        assert_eq!(
            hex::encode(root),
            "69184ace557cf2052b84e31fa0bcdde9bcc5dd94d262e29ab952062307aca7d2"
        );
        assert_eq!(
            hex::encode(commitment(&committed)),
            "02d449a31fbb267c8f352e9968a79e3e5fc95c1bbeaa502fd6454ebde5a4bedc"
        );
        assert_eq!(
            hex::encode(seed),
            "428b1488328bae97a0c0f1f9c7eefa036d96a450f79519c8c62b520b3443f2a5"
        );
        let keys: Vec<String> = ranked.iter().map(|(_, k)| hex::encode(k)).collect();
        assert_eq!(
            keys,
            [
                "18d5697c17af6bad1c2e68a4fe4f41502e090fc55d4b28ed3b8f68fd184b6d2c",
                "291a0dedba32a4f8534443d8c8078a8ff8fba37ad9e0bbf0c17da908f8986fc9",
                "b94708a886891c6b27c3396d9ebc52f8b9d9c25c05aae6daa5d32d1a43d14655",
            ]
        );
        assert_eq!(
            ranked.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
            sorted,
            "here, rank = sorted"
        );
        assert_eq!(
            hexes(&proof),
            [
                "a1ca49f7e1be48f83d02291049c157274181594ad5d7eed7ece9cbeb219e856c",
                "8c8fcae3f308c1e679f9f15732e854ad10b79c894043cdcfca6577092ffa8d07",
            ]
        );
        assert!(verify_inclusion(&sorted[0], 0, 3, &proof, &root));
    }
}
