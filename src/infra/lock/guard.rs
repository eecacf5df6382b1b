//! [`LockGuard`]: a held lock, its fencing token and its watchdog.

use tokio::{sync::watch, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{millis, LockClient, LockError};
use crate::{infra::keys::LockKeys, infra::scripts::LockRelease};

/// A granted lock. Keep it alive for as long as the critical section runs; release it with
/// [`LockGuard::release`] to learn whether the lock was still yours. Dropping it stops the
/// watchdog and releases in the background.
pub struct LockGuard {
    client: LockClient,
    keys: LockKeys,
    owner: String,
    fence: i64,
    lost: watch::Receiver<bool>,
    stop: CancellationToken,
    released: bool,
}

impl LockGuard {
    pub(super) fn start(
        client: LockClient,
        keys: LockKeys,
        owner: String,
        fence: i64,
        valid_until: Instant,
    ) -> Self {
        let (lost_tx, lost) = watch::channel(false);
        let stop = CancellationToken::new();
        let watchdog = Watchdog {
            client: client.clone(),
            keys: keys.clone(),
            owner: owner.clone(),
            lost: lost_tx,
            stop: stop.clone(),
        };
        tokio::spawn(watchdog.run(valid_until));
        Self {
            client,
            keys,
            owner,
            fence,
            lost,
            stop,
            released: false,
        }
    }

    /// The fencing token of this grant: larger than every earlier grant's for this name.
    pub fn fence(&self) -> i64 {
        self.fence
    }

    /// Whether the lease ran out or the lock was taken over; the holder should stop.
    pub fn is_lost(&self) -> bool {
        *self.lost.borrow()
    }

    /// A channel that turns `true` when the lock is lost.
    pub fn lost(&self) -> watch::Receiver<bool> {
        self.lost.clone()
    }

    /// The owner identity this grant was made to.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Ends fenced work: says so at WARN if the lock was lost while it ran (the fence is what
    /// kept the stores safe), then releases it; a failed release is a warning too (the lease
    /// runs out on its own). `what` names the work in both lines.
    pub async fn finish(self, what: &str) {
        if self.is_lost() {
            tracing::warn!(lock = %self.keys.lock, "{what}: the lock was lost while it ran");
        }
        let lock = self.keys.lock.clone();
        if let Err(e) = self.release().await {
            tracing::warn!(%lock, error = %e, "{what}: releasing the lock");
        }
    }

    /// Releases this hold. `Err(NotOwner)` when the lock was no longer ours (it expired and
    /// maybe someone else holds it now: their lock is left alone).
    pub async fn release(mut self) -> Result<(), LockError> {
        self.released = true;
        self.stop.cancel();
        let lease_ms = millis(self.client.options().lease);
        let mut ok = 0;
        let mut not_owner = 0;
        for node in self.client.nodes() {
            match node.release(&self.keys, &self.owner, lease_ms).await {
                Ok(LockRelease::Freed | LockRelease::StillHeld { .. }) => ok += 1,
                Ok(LockRelease::NotOwner) => not_owner += 1,
                Err(e) => tracing::debug!(error = %e, "release on one node failed"),
            }
        }
        if ok >= self.client.quorum() {
            Ok(())
        } else if not_owner > 0 {
            Err(LockError::NotOwner(self.keys.lock.clone()))
        } else {
            Err(LockError::NoQuorum {
                reached: ok,
                needed: self.client.quorum(),
            })
        }
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        self.stop.cancel();
        if self.released {
            return;
        }
        // Best effort: if there is no runtime left, the lease runs out instead.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let client = self.client.clone();
            let keys = self.keys.clone();
            let owner = self.owner.clone();
            handle.spawn(async move { client.release_everywhere(&keys, &owner).await });
        }
    }
}

struct Watchdog {
    client: LockClient,
    keys: LockKeys,
    owner: String,
    lost: watch::Sender<bool>,
    stop: CancellationToken,
}

impl Watchdog {
    async fn run(self, mut valid_until: Instant) {
        let options = self.client.options();
        if !options.watchdog {
            // No renewal: the grant is simply over when its validity ends.
            tokio::select! {
                () = self.stop.cancelled() => {}
                () = tokio::time::sleep_until(valid_until) => { let _ = self.lost.send(true); }
            }
            return;
        }
        let period = options.lease / 3;
        let lease_ms = millis(options.lease);
        loop {
            tokio::select! {
                () = self.stop.cancelled() => return,
                () = tokio::time::sleep(period) => {}
            }
            let started = Instant::now();
            let mut renewed = 0;
            let mut refused = 0;
            for node in self.client.nodes() {
                match node.renew(&self.keys, &self.owner, lease_ms).await {
                    Ok(true) => renewed += 1,
                    Ok(false) => refused += 1,
                    Err(e) => tracing::debug!(error = %e, "renewal on one node failed"),
                }
            }
            if self.stop.is_cancelled() {
                return;
            }
            let nodes = self.client.nodes().len();
            if renewed >= self.client.quorum() {
                valid_until = started + options.lease - options.lease / 100;
            } else if refused > nodes - self.client.quorum() || Instant::now() >= valid_until {
                tracing::warn!(lock = %self.keys.lock, "lock lost: the holder must stop");
                let _ = self.lost.send(true);
                return;
            }
        }
    }
}
