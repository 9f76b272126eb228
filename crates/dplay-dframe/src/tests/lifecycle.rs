//! Timers and disconnects (MC-DPL8R 3.1.2, 3.1.4.3, 3.1.4.5, 3.1.6).
