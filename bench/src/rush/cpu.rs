//! Where a phase's CPU went: the server's, the load generator's (this process) and everything
//! else's (Redis, PostgreSQL, the kernel's softirqs), from `/proc`, per request. A rate over a
//! phase of a second swings with whatever else the two cores did meanwhile; the CPU each
//! request cost the server does not, so it says which side of a ratio moved. Of everything
//! else, Redis's and PostgreSQL's processes are told apart (by their names, on this machine:
//! the services the scripts start, or anyone else's on the same host).

use std::time::Duration;

/// CPU times read at one moment, in clock ticks.
#[derive(Debug, Clone, Copy)]
pub struct CpuClock {
    server: u64,
    generator: u64,
    machine: u64,
    stores: Stores,
}

/// Redis's and PostgreSQL's ticks, every process of each.
#[derive(Debug, Clone, Copy, Default)]
struct Stores {
    redis: u64,
    postgres: u64,
}

/// The CPU one phase cost, per request, in microseconds.
#[derive(Debug, Clone, Copy)]
pub struct CpuPerRequest {
    pub server_us: f64,
    pub generator_us: f64,
    pub others_us: f64,
    /// Of `others_us`, Redis's processes.
    pub redis_us: f64,
    /// Of `others_us`, PostgreSQL's processes (the backends that ended counted in their
    /// postmaster's children's times).
    pub postgres_us: f64,
}

impl CpuClock {
    /// Now, for the server process `server_pid` (`None` when `/proc` cannot be read).
    pub fn read(server_pid: u32) -> Option<Self> {
        Some(Self {
            server: process_ticks(&format!("/proc/{server_pid}/stat"))?,
            generator: process_ticks("/proc/self/stat")?,
            machine: machine_busy_ticks()?,
            stores: stores_ticks(),
        })
    }

    /// What was spent from `self` to `later`, over `requests` requests.
    pub fn per_request(self, later: Self, requests: usize) -> CpuPerRequest {
        let us = |ticks: u64| ticks_to(ticks).as_secs_f64() * 1e6 / requests.max(1) as f64;
        let server = later.server.saturating_sub(self.server);
        let generator = later.generator.saturating_sub(self.generator);
        let machine = later.machine.saturating_sub(self.machine);
        CpuPerRequest {
            server_us: us(server),
            generator_us: us(generator),
            others_us: us(machine.saturating_sub(server + generator)),
            redis_us: us(later.stores.redis.saturating_sub(self.stores.redis)),
            postgres_us: us(later.stores.postgres.saturating_sub(self.stores.postgres)),
        }
    }
}

impl std::fmt::Display for CpuPerRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "server {:.1} µs, load generator {:.1} µs, the rest {:.1} µs (Redis {:.1}, PostgreSQL {:.1})",
            self.server_us, self.generator_us, self.others_us, self.redis_us, self.postgres_us
        )
    }
}

/// Clock ticks are 1/100 s on Linux (`getconf CLK_TCK`): the unit of `/proc/*/stat`.
fn ticks_to(ticks: u64) -> Duration {
    Duration::from_millis(ticks * 10)
}

/// utime + stime of a process (fields 14 and 15 of its `stat`, after the command's
/// parenthesised name, which may hold spaces).
fn process_ticks(path: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(path).ok()?;
    let (_, ticks) = parse_stat(&stat, false)?;
    Some(ticks)
}

/// A `stat` line's command name and its ticks: utime + stime, and with `children` the ended
/// children's cutime + cstime too (fields 16 and 17).
fn parse_stat(stat: &str, children: bool) -> Option<(&str, u64)> {
    let name = stat.get(stat.find('(')? + 1..stat.rfind(')')?)?;
    let after_name = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = after_name.split(' ').collect();
    // After the name, field 3 (state) is index 0: utime is field 14, so index 11.
    let last = if children { 14 } else { 12 };
    let mut ticks = 0;
    for field in fields.get(11..=last)? {
        ticks += field.parse::<u64>().ok()?;
    }
    Some((name, ticks))
}

/// Every Redis and PostgreSQL process's ticks, by their command names.
fn stores_ticks() -> Stores {
    let mut stores = Stores::default();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return stores;
    };
    for entry in dir.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name.to_str() else {
            continue;
        };
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        match parse_stat(&stat, true) {
            Some(("redis-server", t)) => stores.redis += t,
            Some(("postgres", t)) => stores.postgres += t,
            _ => {}
        }
    }
    stores
}

/// Every CPU's busy ticks (all but idle and iowait), from the first line of `/proc/stat`.
fn machine_busy_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?;
    let values: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest times are inside user).
    let busy = values.iter().take(8).enumerate();
    Some(
        busy.filter(|(i, _)| *i != 3 && *i != 4)
            .map(|(_, v)| v)
            .sum(),
    )
}
