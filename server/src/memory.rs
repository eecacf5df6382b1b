//! How the server's heap is paged: small pages, not the kernel's transparent huge pages.
//!
//! On a machine whose transparent huge pages are `always` (this one's), every 2 MB of heap the
//! allocator first touches is zeroed whole in one fault. The heap grows at a sale's opening
//! (24-36 MB in the 20,000-shopper rush, given back by mimalloc once the crowd is gone), so the
//! opening paid for it: `clear_page_erms` under `do_huge_pmd_anonymous_page` was 8-9% of the
//! server's samples in the rush and absent from the `GET /api/live` run after it. With small
//! pages only what is used is zeroed: buys/s 9-12% higher and the peak RSS 20-25 MB lower
//! (BENCHMARKS.md, "The opening's page faults"; decision 56).

use std::io;

/// Turns transparent huge pages off for this process (Linux; elsewhere nothing to do). Called
/// first thing in `main`, before the runtime's threads and the heap grow; the setting holds for
/// every thread of the process and its children.
pub fn small_pages() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    rustix::thread::disable_transparent_huge_pages(true)?;
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_process_runs_on_small_pages_once_asked() {
        small_pages().expect("prctl");
        assert!(rustix::thread::transparent_huge_pages_are_disabled().expect("prctl"));
        let status = std::fs::read_to_string("/proc/self/status").expect("status");
        assert!(
            status
                .lines()
                .any(|l| l.split_whitespace().eq(["THP_enabled:", "0"])),
            "the kernel says huge pages are still on: {status}"
        );
    }
}
