//! The DLL's objects driven through their vtables, the way a game does, on loopback sockets
//! the tests open themselves (port 0: the system picks).

mod client_server;
mod game;
mod peer;
