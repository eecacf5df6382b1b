//! PostgreSQL: the pool, the embedded migrations and one repository per table group.

pub mod audit;
pub mod books;
pub mod draw_log;
pub mod draws;
pub mod finding;
pub mod jobs;
pub mod moves;
pub mod orders;
pub mod payments;
pub mod reminders;
pub mod revocations;
pub mod sales;
pub mod users;
pub mod vouchers;

use std::time::Duration;

use sqlx::{postgres::PgPoolOptions, PgPool};

/// The migrations in `migrations/`, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Opens a pool to `url`.
pub async fn connect(url: &str, max_connections: u32) -> Result<PgPool, sqlx::Error> {
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(5))
        .connect(url)
        .await
}

/// Applies pending migrations; an error stops start-up.
pub async fn migrate(pool: &PgPool) -> Result<(), sqlx::migrate::MigrateError> {
    MIGRATOR.run(pool).await
}
