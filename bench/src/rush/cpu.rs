//! Where a phase's CPU went: the server's, the load generator's (this process) and everything
//! else's (Redis, PostgreSQL, the kernel's softirqs), from `/proc`, per request. A rate over a
//! phase of a second swings with whatever else the two cores did meanwhile; the CPU each
//! request cost the server does not, so it says which side of a ratio moved.

use std::time::Duration;

/// CPU times read at one moment, in clock ticks.
#[derive(Debug, Clone, Copy)]
pub struct CpuClock {
    server: u64,
    generator: u64,
    machine: u64,
}

/// The CPU one phase cost, per request, in microseconds.
#[derive(Debug, Clone, Copy)]
pub struct CpuPerRequest {
    pub server_us: f64,
    pub generator_us: f64,
    pub others_us: f64,
}

impl CpuClock {
    /// Now, for the server process `server_pid` (`None` when `/proc` cannot be read).
    pub fn read(server_pid: u32) -> Option<Self> {
        Some(Self {
            server: process_ticks(&format!("/proc/{server_pid}/stat"))?,
            generator: process_ticks("/proc/self/stat")?,
            machine: machine_busy_ticks()?,
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
        }
    }
}

impl std::fmt::Display for CpuPerRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "server {:.1} µs, load generator {:.1} µs, the rest {:.1} µs",
            self.server_us, self.generator_us, self.others_us
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
    let after_name = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = after_name.split(' ').collect();
    // After the name, field 3 (state) is index 0: utime is field 14, stime 15.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
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
