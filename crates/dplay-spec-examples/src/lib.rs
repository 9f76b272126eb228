//! The specs' byte examples as hex text, for tests (docs/ARCHITECTURE.md, "Test support"): one
//! copy that the tests of every layer use, `dplay-wire`'s included, so this crate depends on
//! nothing. Parse them with `dplay_wire::hexdump::parse_hex`.
#![deny(missing_docs)]

/// A UDP payload (`$frame`: DFRAME header `$header`, then the message) and the message alone
/// (`$message`), from one copy of the bytes.
macro_rules! frame {
    ($(#[$frame_doc:meta])* $frame:ident, $(#[$message_doc:meta])* $message:ident, $header:literal, $body:literal) => {
        $(#[$frame_doc])*
        pub const $frame: &str = concat!($header, $body);
        $(#[$message_doc])*
        pub const $message: &str = $body;
    };
}

/// MC-DPL8CS 4: a DirectPlay 9 joiner ("Test User" at 65.52.239.61:2302) joins a Windows host's
/// DXDiag session "Test Session", then chats.
pub mod mc_dpl8cs_4 {
    /// The session's instance GUID as it is on the wire (`guidInstance`).
    pub const INSTANCE: [u8; 16] =
        [0x23, 0x81, 0xBE, 0x94, 0xAB, 0xA1, 0xFB, 0x48, 0xA2, 0xE7, 0x23, 0x85, 0x9E, 0x65, 0x89, 0x36];
    /// The host's DPNID (table version 2).
    pub const HOST_DPNID: u32 = 0x949E_8121;
    /// The joiner's DPNID (table version 3).
    pub const JOINER_DPNID: u32 = 0x948E_8120;

    frame!(
        /// First frame (UDP payload): the joiner's DN_INTERNAL_MESSAGE_PLAYER_CONNECT_INFO_EX.
        CONNECT_INFO_EX_FRAME,
        /// The first frame's message without its 4-byte DFRAME header: PLAYER_CONNECT_INFO_EX
        /// (peer, DirectX 9, "Test User", no URL, one alternate address; `guidInstance` at
        /// bytes 52-67).
        CONNECT_INFO_EX,
        "7F 00 01 00",
        "
    C1 00 00 00 04 00 00 00 08 00 00 00
    60 00 00 00 14 00 00 00 00 00 00 00 00 00 00 00
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
    00 00 00 00 00 00 00 00 23 81 BE 94 AB A1 FB 48
    A2 E7 23 85 9E 65 89 36 DA 80 EF 61 1B 69 47 42
    9A DD 1C 7B ED 2B C1 3E 58 00 00 00 08 00 00 00
    07 02 08 FE 41 34 EF 3D 54 00 65 00 73 00 74 00
    20 00 55 00 73 00 65 00 72 00 00 00"
    );

    frame!(
        /// Second frame (UDP payload): the host's DN_SEND_CONNECT_INFO, a 372-byte message.
        SEND_CONNECT_INFO_FRAME,
        /// The second frame's message without its DFRAME header: DN_SEND_CONNECT_INFO with the
        /// host (version 2) and the joiner (version 3), table version 3.
        SEND_CONNECT_INFO,
        "7F 00 01 02",
        "
    C2 00 00 00 00 00 00 00 00 00 00 00
    50 00 00 00 04 00 00 00 00 00 00 00 02 00 00 00
    56 01 00 00 1A 00 00 00 00 00 00 00 00 00 00 00
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
    23 81 BE 94 AB A1 FB 48 A2 E7 23 85 9E 65 89 36
    DA 80 EF 61 1B 69 47 42 9A DD 1C 7B ED 2B C1 3E
    20 81 8E 94 03 00 00 00 00 00 00 00 02 00 00 00
    00 00 00 00 21 81 9E 94 00 00 00 00 02 01 00 00
    02 00 00 00 00 00 00 00 07 00 00 00 42 01 00 00
    14 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
    00 00 00 00 20 81 8E 94 00 00 00 00 00 01 00 00
    03 00 00 00 00 00 00 00 08 00 00 00 2E 01 00 00
    14 00 00 00 00 00 00 00 00 00 00 00 CC 00 00 00
    62 00 00 00 78 2D 64 69 72 65 63 74 70 6C 61 79
    3A 2F 70 72 6F 76 69 64 65 72 3D 25 37 42 45 42
    46 45 37 42 41 30 2D 36 32 38 44 2D 31 31 44 32
    2D 41 45 30 46 2D 30 30 36 30 39 37 42 30 31 34
    31 31 25 37 44 3B 68 6F 73 74 6E 61 6D 65 3D 36
    35 2E 35 32 2E 32 33 39 2E 36 31 3B 70 6F 72 74
    3D 32 33 30 32 00 54 00 65 00 73 00 74 00 20 00
    55 00 73 00 65 00 72 00 00 00 54 00 65 00 73 00
    74 00 20 00 55 00 73 00 65 00 72 00 00 00 54 00
    65 00 73 00 74 00 20 00 53 00 65 00 73 00 73 00
    69 00 6F 00 6E 00 00 00"
    );

    /// Third frame (UDP payload): the DXDiag chat "HI THERE" with 400 bytes of buffer.
    pub const CHAT_FRAME: &str = "
    3D 00 05 03 01 00 48 00 49 00 20 00 54 00 48 00
    45 00 52 00 45 00 00 00 4E 1C 3F 77 64 00 83 00
    00 00 00 00 FC 84 41 7E A4 85 41 7E 22 06 2B 00
    A6 88 41 7E BF 3D 3F 77 48 EF CF 00 D1 88 41 7E
    A8 1B 60 00 00 00 00 00 DA 88 41 7E A6 88 41 7E
    BF 3D 3F 77 00 00 00 00 24 EF CF 00 01 00 00 00
    FC EF CF 00 87 D3 00 00 78 EF CF 00 90 49 3F 77
    20 3E 01 05 C2 00 00 00 00 00 00 00 18 5E 69 4F
    BF 3D 3F 77 BF 3D 3F 77 00 00 00 00 0D 00 00 00
    00 01 00 00 58 5E A8 06 BF 3D 3F 77 01 00 00 00
    A4 EF CF 00 34 87 41 7E 22 06 2B 00 C2 00 00 00
    00 00 00 00 18 5E 69 4F BF 3D 3F 77 CD AB BA DC
    00 00 00 00 E0 EF CF 00 BF 3D 3F 77 0C F0 CF 00
    16 88 41 7E 00 90 FD 7F 0C F0 CF 00 5A 88 41 7E
    CC EF CF 00 2A 88 41 7E C2 00 00 00 A8 1B 60 00
    BC 1B 60 00 14 00 00 00 01 00 00 00 00 00 00 00
    00 00 00 00 10 00 00 00 00 00 00 00 30 88 41 7E
    00 00 00 00 00 00 00 00 01 00 00 00 C0 EF CF 00
    BF 3D 3F 77 5C F2 CF 00 57 04 44 7E C0 F1 CF 00
    08 00 00 00 C0 F1 CF 00 C0 F1 CF 00 C0 F1 CF 00
    30 F0 CF 00 85 38 6A 4F 09 00 00 00 C0 F1 CF 00
    08 00 00 00 58 5E A8 06 48 F0 CF 00 2E 3B 6A 4F
    58 5E A8 06 08 00 00 00 08 00 00 00 C0 F1 CF 00
    64 F0 CF 00 A6 3F 6A 4F 58 5E A8 06 08 00 00 00
    CE 3D 42 7E 8E 13 00 00 BA B8 41 7E 74 F0 CF 00
    BE 7A 6A 4F 00 00";
}
