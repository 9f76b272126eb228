//! 8-bit sequence arithmetic: every comparison is modulo 256 (MC-DPL8R 3.1.5.2.1; INDEX §0).

/// At most 64 frames are outstanding, and a receiver accepts `bSeq` in `[NRcv, NRcv + 63]`
/// (MC-DPL8R 3.1.4.4, 3.1.5.2.1).
pub const WINDOW: u8 = 64;

/// How far `to` is ahead of `from`, modulo 256.
pub(crate) fn distance(from: u8, to: u8) -> u8 {
    to.wrapping_sub(from)
}

/// True when `seq` lies in the 64-wide window that starts at `base` (MC-DPL8R 3.1.5.2.1).
pub(crate) fn in_window(base: u8, seq: u8) -> bool {
    distance(base, seq) < WINDOW
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MC-DPL8R 3.1.5.2.1: the window wraps past 255.
    #[test]
    fn window_wraps_past_255() {
        assert!(in_window(250, 250));
        assert!(in_window(250, 255));
        assert!(in_window(250, 0));
        assert!(in_window(250, 57));
        assert!(!in_window(250, 58));
        assert!(!in_window(250, 249));
        assert_eq!(distance(255, 0), 1);
        assert_eq!(distance(0, 255), 255);
    }
}
