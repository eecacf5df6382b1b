//! Who a request is from: a signed-in [`Principal`], and the [`Admin`] proof admin operations
//! require.

use crate::domain::{Phone, UserId};

/// A signed-in user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub user: UserId,
    pub phone: Phone,
    pub is_admin: bool,
}

impl Principal {
    /// Proof of the admin role, required by admin operations.
    pub fn as_admin(&self) -> Option<Admin> {
        self.is_admin.then(|| Admin(self.clone()))
    }
}

/// A principal known to be an admin; only [`Principal::as_admin`] makes one.
#[derive(Debug, Clone)]
pub struct Admin(Principal);

impl Admin {
    pub fn user(&self) -> UserId {
        self.0.user
    }
}
