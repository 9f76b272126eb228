//! Data: windows, masks, delivery categories, reassembly, coalescing (MC-DPL8R 3.1.5.2).
