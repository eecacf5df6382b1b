//! The server's own settings: where it listens, what one connection or request may take, and
//! how long a shared rendering is answered again. Read from the environment like the core's
//! [`Config`](seckill::Config), with the same rules (a blank variable counts as unset; an
//! unusable value stops start-up naming its variable).

use std::{
    net::{IpAddr, SocketAddr},
    time::Duration,
};

use seckill::config::{
    millis, non_blank, positive, public_origins, typed, ConfigError, DEFAULT_SITE_ADDR,
};

/// Where `/metrics` is served unless `SECKILL_METRICS_ADDR` says otherwise (Prometheus's
/// customary exporter port, on loopback).
pub const DEFAULT_METRICS_ADDR: &str = "127.0.0.1:9464";

/// Settings of the HTTP side of one instance.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The listening address (`LEPTOS_SITE_ADDR`; port 0 picks a free port).
    pub site_addr: SocketAddr,
    pub http: HttpConfig,
    /// How long an instance answers the home page and a voucher's page, as anonymous visitors
    /// see them, from its last rendering (`SECKILL_PAGE_CACHE_MS`).
    pub page_ttl: Duration,
    /// The origins the shop is served under (`SECKILL_PUBLIC_ORIGIN`, comma-separated, e.g.
    /// `https://shop.example`): requests that change something from any other are refused.
    /// Empty: the listening address (see [`crate::origin::SiteOrigins`]).
    pub public_origins: Vec<String>,
    /// Proxies whose `X-Forwarded-For` names the client (`SECKILL_TRUSTED_PROXIES`,
    /// comma-separated addresses, e.g. HAProxy's): see [`crate::client`].
    pub trusted_proxies: Vec<IpAddr>,
    /// Where `/metrics` is served (`SECKILL_METRICS_ADDR`, default `127.0.0.1:9464`; `off`:
    /// nowhere): a listener of its own, never the shop's public one.
    pub metrics_addr: Option<SocketAddr>,
    /// Dev login on a shop others reach is meant (`SECKILL_DEV_LOGIN_PUBLIC`): a shared
    /// staging machine, never a shop.
    pub dev_login_public: bool,
    /// Dev payments (every payment approved) on a shop others reach are meant
    /// (`SECKILL_DEV_PAYMENTS_PUBLIC`): a shared staging machine, never a shop.
    pub dev_payments_public: bool,
    /// The zone every page shows its times in, and the admin's form reads them in
    /// (`SECKILL_TIME_ZONE`, an IANA name; default `Asia/Shanghai`). The REST API's times stay
    /// RFC 3339 in UTC.
    pub time_zone: chrono_tz::Tz,
}

/// What one HTTP connection or request may take.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// A request body larger than this is refused (413).
    pub max_body_bytes: usize,
    /// Connections served at once; past it the server stops accepting until one closes.
    pub max_connections: usize,
    /// A connection that does not send a whole request head within this long (a slow client, or
    /// an idle keep-alive connection) is closed.
    pub header_timeout: Duration,
    /// A request whose whole body has not arrived this long after its head is refused (408).
    pub body_timeout: Duration,
    /// A connection whose client reads nothing of its answer for this long is closed.
    pub write_timeout: Duration,
    /// Sale streams one client address may hold open on this instance (429 past it).
    pub streams_per_client: usize,
}

impl Settings {
    /// Reads the settings from the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the settings through `lookup`, so tests need not touch the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = non_blank(lookup);
        Ok(Self {
            site_addr: typed(&get, "LEPTOS_SITE_ADDR", DEFAULT_SITE_ADDR)?,
            http: HttpConfig {
                max_body_bytes: positive(&get, "SECKILL_MAX_BODY_BYTES", 64 * 1024)?,
                max_connections: positive(&get, "SECKILL_MAX_CONNECTIONS", 10_000)?,
                header_timeout: millis(&get, "SECKILL_HEADER_TIMEOUT_MS", 15_000)?,
                body_timeout: millis(&get, "SECKILL_BODY_TIMEOUT_MS", 15_000)?,
                write_timeout: millis(&get, "SECKILL_WRITE_TIMEOUT_MS", 30_000)?,
                streams_per_client: positive(&get, "SECKILL_STREAMS_PER_CLIENT", 32)?,
            },
            page_ttl: millis(&get, "SECKILL_PAGE_CACHE_MS", 1_000)?,
            public_origins: public_origins(get("SECKILL_PUBLIC_ORIGIN").as_deref())?,
            trusted_proxies: addresses(get("SECKILL_TRUSTED_PROXIES").as_deref())?,
            metrics_addr: match get("SECKILL_METRICS_ADDR").as_deref().map(str::trim) {
                Some("off") => None,
                _ => Some(typed(&get, "SECKILL_METRICS_ADDR", DEFAULT_METRICS_ADDR)?),
            },
            dev_login_public: typed(&get, "SECKILL_DEV_LOGIN_PUBLIC", "false")?,
            dev_payments_public: typed(&get, "SECKILL_DEV_PAYMENTS_PUBLIC", "false")?,
            time_zone: seckill::config::time_zone(get("SECKILL_TIME_ZONE").as_deref())?,
        })
    }
}

impl Settings {
    /// How others reach this shop, if they do: a listening address other than loopback, or a
    /// public origin whose host is not this machine (a proxy on the same machine, nginx or a
    /// sidecar, serves a shop that listens on 127.0.0.1). `None`: this machine alone.
    pub fn reached_by_others(&self) -> Option<String> {
        if !self.site_addr.ip().is_loopback() {
            return Some(self.site_addr.to_string());
        }
        self.public_origins
            .iter()
            .find(|origin| !is_loopback_host(origin_host(origin)))
            .cloned()
    }
}

/// The host of an origin as `public_origins` keeps it (`scheme://host[:port]`), brackets of
/// an IPv6 address removed.
fn origin_host(origin: &str) -> &str {
    let authority = origin.split_once("://").map_or(origin, |(_, rest)| rest);
    let authority = authority.split('/').next().unwrap_or(authority);
    match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => authority.split(':').next().unwrap_or(authority),
    }
}

fn is_loopback_host(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Comma-separated IP addresses.
fn addresses(raw: Option<&str>) -> Result<Vec<IpAddr>, ConfigError> {
    raw.unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(|a| {
            a.parse().map_err(|_| ConfigError {
                var: "SECKILL_TRUSTED_PROXIES",
                message: format!("{a:?} is not an IP address"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> Result<Settings, ConfigError> {
        Settings::from_lookup(|k| {
            vars.iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn defaults_listen_on_loopback() {
        let s = settings(&[]).expect("defaults are valid");
        assert_eq!(s.site_addr.to_string(), "127.0.0.1:3000");
        assert_eq!(s.http.max_body_bytes, 64 * 1024);
        assert_eq!(s.page_ttl, Duration::from_secs(1));
        assert_eq!(
            s.metrics_addr.map(|a| a.to_string()).as_deref(),
            Some(DEFAULT_METRICS_ADDR)
        );
        assert!(settings(&[("SECKILL_METRICS_ADDR", "off")])
            .expect("off")
            .metrics_addr
            .is_none());
    }

    #[test]
    fn a_bad_value_names_its_variable() {
        let err = settings(&[("LEPTOS_SITE_ADDR", "nowhere")]).expect_err("bad addr");
        assert_eq!(err.var, "LEPTOS_SITE_ADDR");
        let err = settings(&[("SECKILL_BODY_TIMEOUT_MS", "0")]).expect_err("zero");
        assert_eq!(err.var, "SECKILL_BODY_TIMEOUT_MS");
        for bad in [
            "shop.example",
            "ftp://shop.example",
            "https://shop.example/path",
            "https://",
        ] {
            let err = settings(&[("SECKILL_PUBLIC_ORIGIN", bad)]).expect_err(bad);
            assert_eq!(err.var, "SECKILL_PUBLIC_ORIGIN");
        }
        let err = settings(&[("SECKILL_TRUSTED_PROXIES", "127.0.0.1, haproxy")]).expect_err("name");
        assert_eq!(err.var, "SECKILL_TRUSTED_PROXIES");
        let s = settings(&[("SECKILL_TRUSTED_PROXIES", "127.0.0.1, ::1")]).expect("two");
        assert_eq!(s.trusted_proxies.len(), 2);
        let s = settings(&[(
            "SECKILL_PUBLIC_ORIGIN",
            "https://a.example, http://b.example:8080",
        )])
        .expect("two origins");
        assert_eq!(
            s.public_origins,
            ["https://a.example", "http://b.example:8080"]
        );
    }
}
