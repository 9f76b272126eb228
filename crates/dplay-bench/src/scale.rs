//! Many client connections on one server runtime thread (filled in below).
