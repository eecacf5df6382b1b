//! `lua/enter.lua`: a batch of entries into one draw, in one round trip.

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::{eval_then_wait, Backend, MASTER_LIB};
use crate::{
    domain::UserId,
    infra::{durability::ReplicaWait, keys::VoucherKeys},
};

static ENTER: LazyLock<Script> =
    LazyLock::new(|| Script::new(&[MASTER_LIB, include_str!("../../../lua/enter.lua")].concat()));

/// What `lua/enter.lua` decided for one shopper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryOutcome {
    /// Entered now; the draw has this many entrants after the batch.
    Entered {
        entrants: i64,
    },
    /// Had entered before (the same answer as the first time).
    AlreadyEntered {
        entrants: i64,
    },
    NotOpen,
    Closed,
    NotADraw,
    /// Redis holds no sale for the voucher.
    NotLoaded,
    /// The sale was not reconciled under this Redis master.
    Unreconciled,
}

impl EntryOutcome {
    fn decode(reply: &[i64], n: usize) -> Result<Vec<Self>, Backend> {
        let unknown = || Backend::unknown_reply("enter", reply);
        match reply {
            [5] => Ok(vec![Self::NotLoaded; n]),
            [9] => Ok(vec![Self::Unreconciled; n]),
            [0, entrants, codes @ ..] if codes.len() == n => codes
                .iter()
                .map(|code| match code {
                    0 => Ok(Self::Entered {
                        entrants: *entrants,
                    }),
                    1 => Ok(Self::AlreadyEntered {
                        entrants: *entrants,
                    }),
                    2 => Ok(Self::NotOpen),
                    3 => Ok(Self::Closed),
                    4 => Ok(Self::NotADraw),
                    _ => Err(unknown()),
                })
                .collect(),
            _ => Err(unknown()),
        }
    }
}

/// Decides the entries of `users` into the draw of the sale `keys`, in order, in one call
/// (followed by `WAIT` with `replicas`).
pub async fn enter_batch<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &VoucherKeys,
    users: &[UserId],
    replicas: Option<ReplicaWait>,
) -> Result<Vec<EntryOutcome>, Backend> {
    if users.is_empty() {
        return Ok(Vec::new());
    }
    let script_keys = [keys.sale.clone(), keys.entries.clone()];
    let args: Vec<i64> = users.iter().map(|u| u.get()).collect();
    let reply: Vec<i64> = match replicas {
        None => {
            let mut call = ENTER.prepare_invoke();
            call.key(&script_keys[0]).key(&script_keys[1]);
            for a in &args {
                call.arg(a);
            }
            call.invoke_async(conn).await?
        }
        Some(wait) => eval_then_wait(conn, &ENTER, &script_keys, &args, wait).await?,
    };
    EntryOutcome::decode(&reply, users.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_reply_decodes_per_shopper() {
        assert_eq!(
            EntryOutcome::decode(&[0, 7, 0, 1, 2, 3, 4], 5).expect("decodes"),
            vec![
                EntryOutcome::Entered { entrants: 7 },
                EntryOutcome::AlreadyEntered { entrants: 7 },
                EntryOutcome::NotOpen,
                EntryOutcome::Closed,
                EntryOutcome::NotADraw
            ]
        );
        assert_eq!(
            EntryOutcome::decode(&[5], 2).expect("decodes"),
            vec![EntryOutcome::NotLoaded; 2]
        );
        assert!(EntryOutcome::decode(&[0, 7, 0], 2).is_err());
        assert!(EntryOutcome::decode(&[0, 7, 9], 1).is_err());
    }
}
