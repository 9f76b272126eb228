use proptest::prelude::*;

use super::*;
use crate::testutil::{assert_reemits, assert_roundtrip, bytes, snapshot_text};

const DXDIAG: Uuid = DXDIAG_APPLICATION_GUID;
/// {C0A65D4F-9CE3-4F70-80DE-3AB4DF6F09B6}, the instance GUID of MC-DPLNAT 4.2.
const INSTANCE: Uuid = uuid::uuid!("C0A65D4F-9CE3-4F70-80DE-3AB4DF6F09B6");

/// The EnumResponse of `dxdiag_enum_response`, field by field.
const DXDIAG_RESPONSE: &str = "00 03 01 00  00 00 00 00  00 00 00 00  50 00 00 00 \
     04 00 00 00  00 00 00 00  01 00 00 00  58 00 00 00 \
     0A 00 00 00  00 00 00 00  00 00 00 00  00 00 00 00 \
     00 00 00 00  00 00 00 00  00 00 00 00  4F 5D A6 C0 \
     E3 9C 70 4F  80 DE 3A B4  DF 6F 09 B6  DA 80 EF 61 \
     1B 69 47 42  9A DD 1C 7B  ED 2B C1 3E  54 00 65 00 \
     73 00 74 00  00 00";

/// MS-DPDX 2.2.4 with MC-DPLHP 4's first query: DXDiag's EnumQuery, EnumPayload 1, QueryType
/// 0x01 and the DXDiag GUID in its wire layout (INDEX 0). Neither spec prints enumeration
/// bytes, so these are built from the field rules.
#[test]
fn dxdiag_enum_query() {
    let wire = bytes("00 02 01 00 01 DA 80 EF 61 1B 69 47 42 9A DD 1C 7B ED 2B C1 3E");
    let q = assert_reemits::<EnumQuery>(&wire);
    assert_eq!(q.enum_payload, 1);
    assert_eq!(q.query_type(), QueryType::APPLICATION_GUID);
    assert_eq!(q.application_guid, Some(DXDIAG));
    assert_eq!(
        &wire[5..],
        &bytes("DA 80 EF 61 1B 69 47 42 9A DD 1C 7B ED 2B C1 3E")[..],
        "INDEX 0 GUID layout"
    );
    assert!(q.application_payload.is_empty());
    let m = assert_reemits::<EnumMessage>(&wire);
    assert_eq!(m.name(), "EnumQuery");
}

/// MC-DPLHP 2.2.1: QueryType 0x02 has no GUID; the ApplicationPayload is the rest.
#[test]
fn enum_query_without_guid() {
    let q = assert_reemits::<EnumQuery>(&bytes("00 02 05 00 02 AB CD"));
    assert_eq!(q.enum_payload, 5);
    assert_eq!(q.query_type(), QueryType::NO_APPLICATION_GUID);
    assert_eq!(q.application_guid, None);
    assert_eq!(&*q.application_payload, &[0xAB, 0xCD]);
}

/// MS-DPDX 2.2.5: a DXDiag host's answer to EnumPayload 1. MIGRATE_HOST, unlimited players,
/// one player, session "Test" at offset 0x58 (byte 92, counted from byte 4; INDEX F-13).
#[test]
fn dxdiag_enum_response() {
    let wire = bytes(DXDIAG_RESPONSE);
    let r = assert_reemits::<EnumResponse>(&wire);
    assert_eq!(r.enum_payload, 1);
    assert_eq!(r.application_desc_flags, ApplicationDescFlags::MIGRATE_HOST);
    assert_eq!((r.max_players, r.current_players), (0, 1));
    assert_eq!(r.session_name, Some(WideString::new("Test")));
    assert_eq!((r.password.as_ref(), r.reserved_data.as_ref()), (None, None));
    assert_eq!((r.application_reserved_data.as_ref(), r.application_data.as_ref()), (None, None));
    assert_eq!(r.application_instance_guid, INSTANCE);
    assert_eq!(r.application_guid, DXDIAG);
    assert_eq!(assert_reemits::<EnumMessage>(&wire).name(), "EnumResponse");
}

/// MC-DPLHP 2.2.2: each field is found by its offset, whatever the order on the wire. Here
/// ApplicationData (ReplyOffset 0x58) comes before SessionName (0x5C); the value re-emits in
/// the diagram's order.
#[test]
fn enum_response_fields_in_any_order() {
    let mut wire = bytes(DXDIAG_RESPONSE);
    wire[4..8].copy_from_slice(&0x58u32.to_le_bytes());
    wire[8..12].copy_from_slice(&4u32.to_le_bytes());
    wire[28..32].copy_from_slice(&0x5Cu32.to_le_bytes());
    wire.splice(92..92, [0xDE, 0xAD, 0xBE, 0xEF]);
    let r = EnumResponse::parse(&wire).unwrap();
    assert_eq!(r.session_name, Some(WideString::new("Test")));
    assert_eq!(r.application_data, Some(Blob::new(&[0xDE, 0xAD, 0xBE, 0xEF])));
    let again = r.to_vec().unwrap();
    assert_eq!(&again[92..102], &wire[96..106], "SessionName first");
    assert_eq!(EnumResponse::parse(&again).unwrap(), r);
}

#[track_caller]
fn with(patch: impl FnOnce(&mut Vec<u8>)) -> Result<EnumResponse, WireError> {
    let mut wire = bytes(DXDIAG_RESPONSE);
    patch(&mut wire);
    EnumResponse::parse(&wire)
}

#[test]
fn rejects_bad_enum_responses() {
    let put = |at: usize, v: u32| move |w: &mut Vec<u8>| w[at..at + 4].copy_from_slice(&v.to_le_bytes());
    // ApplicationDescSize MUST be 0x50.
    assert!(matches!(with(put(12, 0x4C)), Err(WireError::InvalidValue { field: "ApplicationDescSize", .. })));
    // SessionName past the end, and inside the fixed part.
    assert!(matches!(with(put(28, 0x5A)), Err(WireError::BadOffset { field: "SessionName", .. })));
    assert!(matches!(with(put(28, 0x10)), Err(WireError::BadOffset { field: "SessionName", .. })));
    // An odd string size, and a size without an offset.
    assert!(matches!(with(put(32, 9)), Err(WireError::BadString { .. })));
    assert!(matches!(with(put(40, 2)), Err(WireError::BadOffset { field: "Password", .. })));
    // Huge sizes are bounds errors, not allocations.
    assert!(with(put(56, u32::MAX)).is_err());
    assert!(matches!(with(|w| w.truncate(91)), Err(WireError::Truncated { .. })));
    assert!(matches!(with(|w| w[0] = 0x80), Err(WireError::InvalidValue { field: "LeadByte", .. })));
}

#[test]
fn rejects_bad_enum_queries() {
    assert!(matches!(
        EnumQuery::parse(&bytes("00 02 01 00 03")),
        Err(WireError::InvalidValue { field: "QueryType", .. })
    ));
    assert!(matches!(EnumQuery::parse(&bytes("00 02 01 00 01 DA 80")), Err(WireError::Truncated { .. })));
    assert!(EnumQuery::parse(&bytes("00 02 01 00")).is_err());
    assert_eq!(
        EnumMessage::parse(&bytes("00 05 C1 D0 B8 82 DD 92 9C E9 AF F9")),
        Err(WireError::Unknown { what: "enumeration CommandByte", value: 5 })
    );
    assert!(EnumMessage::parse(&bytes("3F 02 00 00")).is_err());
}

fn wide() -> impl Strategy<Value = WideString> {
    proptest::collection::vec(any::<u16>().prop_filter("no NUL", |u| *u != 0), 0..12)
        .prop_map(WideString::from_units)
}

fn blob() -> impl Strategy<Value = Blob> {
    proptest::collection::vec(any::<u8>(), 0..24).prop_map(Blob::from)
}

fn uuid() -> impl Strategy<Value = Uuid> {
    any::<u128>().prop_map(Uuid::from_u128)
}

fn enum_query() -> impl Strategy<Value = EnumQuery> {
    (any::<u16>(), proptest::option::of(uuid()), blob()).prop_map(
        |(enum_payload, application_guid, application_payload)| EnumQuery {
            enum_payload,
            application_guid,
            application_payload,
        },
    )
}

fn enum_response() -> impl Strategy<Value = EnumResponse> {
    (
        (any::<u16>(), any::<u32>(), any::<u32>(), any::<u32>(), uuid(), uuid()),
        (proptest::option::of(wide()), proptest::option::of(wide())),
        (proptest::option::of(blob()), proptest::option::of(blob()), proptest::option::of(blob())),
    )
        .prop_map(
            |(
                (
                    enum_payload,
                    flags,
                    max_players,
                    current_players,
                    application_instance_guid,
                    application_guid,
                ),
                (session_name, password),
                (reserved_data, application_reserved_data, application_data),
            )| EnumResponse {
                enum_payload,
                application_desc_flags: ApplicationDescFlags::from_bits_retain(flags),
                max_players,
                current_players,
                session_name,
                password,
                reserved_data,
                application_reserved_data,
                application_instance_guid,
                application_guid,
                application_data,
            },
        )
}

proptest! {
    #[test]
    fn roundtrip(m in prop_oneof![enum_query().prop_map(EnumMessage::Query), enum_response().prop_map(EnumMessage::Response)]) {
        assert_roundtrip(&m);
    }

    #[test]
    fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..160)) {
        let _ = EnumMessage::parse(&data);
    }

    #[test]
    fn parse_never_panics_on_mutated_responses(at in 0usize..102, byte in any::<u8>()) {
        let _ = with(|w| w[at] = byte);
    }
}

#[test]
fn snapshots() {
    let query =
        EnumQuery { enum_payload: 1, application_guid: Some(DXDIAG), application_payload: Blob::default() };
    insta::assert_snapshot!("EnumQuery", snapshot_text(&EnumMessage::Query(query)));
    let response = EnumResponse {
        enum_payload: 1,
        application_desc_flags: ApplicationDescFlags::MIGRATE_HOST,
        max_players: 0,
        current_players: 1,
        session_name: Some(WideString::new("Test")),
        password: None,
        reserved_data: None,
        application_reserved_data: Some(Blob::new(b"map1")),
        application_instance_guid: INSTANCE,
        application_guid: DXDIAG,
        application_data: Some(Blob::new(&[0; 4])),
    };
    insta::assert_snapshot!("EnumResponse", snapshot_text(&EnumMessage::Response(response)));
}
