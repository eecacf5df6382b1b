//! The `job_runs` table: singleton jobs, fenced by their lock's token.

use sqlx::PgPool;

/// Records that `instance` starts `job` under fencing token `fence`. `false` (nothing written)
/// when a run with a newer token was already recorded: the caller's lock is stale.
pub async fn begin(
    db: &PgPool,
    job: &str,
    fence: i64,
    instance: &str,
) -> Result<bool, sqlx::Error> {
    let updated = sqlx::query(
        "INSERT INTO job_runs (name, fence, instance) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE
           SET fence = EXCLUDED.fence, instance = EXCLUDED.instance, started_at = now(),
               finished_at = NULL, report = NULL
         WHERE job_runs.fence < EXCLUDED.fence",
    )
    .bind(job)
    .bind(fence)
    .bind(instance)
    .execute(db)
    .await?
    .rows_affected();
    Ok(updated == 1)
}

/// Records the end of the run holding `fence`; `false` when a newer run took over meanwhile.
pub async fn finish(db: &PgPool, job: &str, fence: i64, report: &str) -> Result<bool, sqlx::Error> {
    let updated = sqlx::query(
        "UPDATE job_runs SET finished_at = now(), report = $3 WHERE name = $1 AND fence = $2",
    )
    .bind(job)
    .bind(fence)
    .bind(report)
    .execute(db)
    .await?
    .rows_affected();
    Ok(updated == 1)
}
