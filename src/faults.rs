//! Which failures mean a backing store is unreachable (answer 503 and retry later) rather than a
//! fault of this code or its data (500). The adapters ask [`Unavailable::is_unavailable`] of a
//! core error before they choose a status.

use crate::{
    auth::{AuthError, LoginError},
    catalog::{CatalogError, CreateVoucherError, PreloadError},
    checkout::CheckoutError,
    lock::LockError,
    order_id::RaiseError,
    restock::RestockError,
    sale::{BuyError, StatusError},
    sale_admin::SaleAdminError,
    scripts::ScriptError,
    store,
    sweeper::SweepError,
};

/// An error that may be a store being out of reach.
pub trait Unavailable {
    /// `true` when the operation may succeed unchanged once PostgreSQL or Redis is back.
    fn is_unavailable(&self) -> bool;
}

impl Unavailable for sqlx::Error {
    fn is_unavailable(&self) -> bool {
        store::is_unavailable(self)
    }
}

impl Unavailable for redis::RedisError {
    fn is_unavailable(&self) -> bool {
        self.is_io_error()
            || self.is_connection_dropped()
            || self.is_connection_refusal()
            || self.is_timeout()
            || self.is_unrecoverable_error()
            || matches!(
                self.code(),
                Some("LOADING" | "MASTERDOWN" | "CLUSTERDOWN" | "TRYAGAIN")
            )
    }
}

impl Unavailable for ScriptError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Redis(e) => e.is_unavailable(),
            Self::UnknownReply { .. } => false,
        }
    }
}

impl Unavailable for LockError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Script(e) => e.is_unavailable(),
            Self::Redis(e) => e.is_unavailable(),
            Self::NoQuorum { .. } | Self::Timeout(_) => true,
            Self::NotOwner(_) => false,
        }
    }
}

impl Unavailable for CatalogError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Store(e) => e.is_unavailable(),
            Self::Redis(e) => e.is_unavailable(),
        }
    }
}

impl Unavailable for PreloadError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Lock(e) => e.is_unavailable(),
            Self::Busy(_) | Self::Fenced(_) => false,
            Self::Store(e) => e.is_unavailable(),
            Self::Script(e) => e.is_unavailable(),
            Self::Redis(e) => e.is_unavailable(),
            Self::Counter(RaiseError::Store(e)) => e.is_unavailable(),
            Self::Counter(RaiseError::Script(e)) => e.is_unavailable(),
        }
    }
}

impl Unavailable for CreateVoucherError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Invalid(_) => false,
            Self::Store(e) => e.is_unavailable(),
            Self::Preload(_, e) => e.is_unavailable(),
        }
    }
}

impl Unavailable for StatusError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Redis(e) => e.is_unavailable(),
            Self::Store(e) => e.is_unavailable(),
        }
    }
}

impl Unavailable for BuyError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Redis(e) => e.is_unavailable(),
            Self::Script(e) => e.is_unavailable(),
            Self::Store(e) => e.is_unavailable(),
            Self::Preload(e) => e.is_unavailable(),
            _ => false,
        }
    }
}

impl Unavailable for AuthError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Redis(e) => e.is_unavailable(),
            Self::Script(e) => e.is_unavailable(),
            Self::Store(e) => e.is_unavailable(),
        }
    }
}

impl Unavailable for LoginError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Internal(e) => e.is_unavailable(),
            _ => false,
        }
    }
}

impl Unavailable for SweepError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Lock(e) => e.is_unavailable(),
            Self::Store(e) => e.is_unavailable(),
            Self::Redis(e) => e.is_unavailable(),
            Self::Script(e) => e.is_unavailable(),
            Self::Restock(e) => e.is_unavailable(),
        }
    }
}

impl Unavailable for RestockError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Store(e) => e.is_unavailable(),
            Self::Script(e) => e.is_unavailable(),
            Self::Preload(e) => e.is_unavailable(),
            Self::StillNotLoaded(_) => false,
        }
    }
}

impl Unavailable for CheckoutError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Store(e) => e.is_unavailable(),
            Self::Status(e) => e.is_unavailable(),
            // No provider answered: the same payment may go through shortly.
            Self::PaymentUnavailable(_) => true,
            _ => false,
        }
    }
}

impl Unavailable for SaleAdminError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Lock(e) => e.is_unavailable(),
            Self::Store(e) => e.is_unavailable(),
            Self::Script(e) => e.is_unavailable(),
            Self::Restock(e) => e.is_unavailable(),
            _ => false,
        }
    }
}
