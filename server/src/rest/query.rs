//! A request's query string, read the way the admin's GET routes share: its pairs, and a day's
//! first instant in the shop's zone (for date bounds).

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use webapi::error::AppError;

/// The query's pairs (`a=1&b=2`); a malformed encoding is a `400 bad_request`.
pub fn pairs(raw: Option<&str>) -> Result<HashMap<String, String>, AppError> {
    serde_urlencoded::from_str(raw.unwrap_or_default())
        .map_err(|_| AppError::BadRequest("the query is not a valid form encoding".into()))
}

/// The first instant of `day` in the shop's zone (`SECKILL_TIME_ZONE`).
pub fn shop_midnight(day: NaiveDate) -> Option<DateTime<Utc>> {
    app::time::shop_zone()
        .from_local_datetime(&day.and_hms_opt(0, 0, 0)?)
        .earliest()
        .map(|at| at.with_timezone(&Utc))
}
