//! `BuildFromDirectPlay4Address`: a DirectPlay 4 address (`dplobby.h`: a run of `DPADDRESS`
//! elements, each a `guidDataType`, a `dwDataSize` and that many bytes) as a DirectPlay 8 URL.
//!
//! The SDK documentation: the address is cleared first; every predefined DirectPlay 4 element
//! maps to its DirectPlay 8 component; `DPAID_Modem` cannot map (DirectPlay 4 names modems,
//! DirectPlay 8 gives them GUIDs) and is skipped; an element that is not predefined fails the
//! call with DPNERR_INVALIDADDRESSFORMAT.

use dplay_wire::dp8::url::{CLSID_DP8SP_TCPIP, DirectPlayUrl, UrlValue};
use uuid::Uuid;

use crate::codes::DPNERR_INVALIDADDRESSFORMAT;
use crate::com::HRESULT;

const DPAID_TOTAL_SIZE: Uuid = Uuid::from_u128(0x1318F560_912C_11D0_9DAA_00A0C90A43CB);
const DPAID_SERVICE_PROVIDER: Uuid = Uuid::from_u128(0x07D916C0_E0AF_11CF_9C4E_00A0C905425E);
const DPAID_LOBBY_PROVIDER: Uuid = Uuid::from_u128(0x59B95640_9667_11D0_A77D_0000F803ABFC);
const DPAID_PHONE: Uuid = Uuid::from_u128(0x78EC89A0_E0AF_11CF_9C4E_00A0C905425E);
const DPAID_PHONE_W: Uuid = Uuid::from_u128(0xBA5A7A70_9DBF_11D0_9CC1_00A0C905425E);
const DPAID_MODEM: Uuid = Uuid::from_u128(0xF6DCC200_A2FE_11D0_9C4F_00A0C905425E);
const DPAID_MODEM_W: Uuid = Uuid::from_u128(0x01FD92E0_A2FF_11D0_9C4F_00A0C905425E);
const DPAID_INET: Uuid = Uuid::from_u128(0xC4A54DA0_E0AF_11CF_9C4E_00A0C905425E);
const DPAID_INET_W: Uuid = Uuid::from_u128(0xE63232A0_9DBF_11D0_9CC1_00A0C905425E);
const DPAID_INET_PORT: Uuid = Uuid::from_u128(0xE4524541_8EA5_11D1_8A96_006097B01411);
const DPAID_COM_PORT: Uuid = Uuid::from_u128(0xF2F0CE00_E0AF_11CF_9C4E_00A0C905425E);

/// DirectPlay 4 service providers (`dplay.h`) and their DirectPlay 8 counterparts (`dplay8.h`).
const PROVIDERS: [(Uuid, Uuid); 4] = [
    (Uuid::from_u128(0x36E95EE0_8577_11CF_960C_0080C7534E82), CLSID_DP8SP_TCPIP),
    (
        Uuid::from_u128(0x685BC400_9D2C_11CF_A9CD_00AA006886E3),
        Uuid::from_u128(0x53934290_628D_11D2_AE0F_006097B01411),
    ),
    (
        Uuid::from_u128(0x0F1D6860_88D9_11CF_9C4E_00A0C905425E),
        Uuid::from_u128(0x743B5D60_628D_11D2_AE0F_006097B01411),
    ),
    (
        Uuid::from_u128(0x44EAA760_CB68_11CF_9C4E_00A0C905425E),
        Uuid::from_u128(0x6D4A3650_628D_11D2_AE0F_006097B01411),
    ),
];

/// `DPCOMPORTADDRESS.dwStopBits` (`ONESTOPBIT`...) as `DPNA_STOP_BITS_*`.
const STOP_BITS: [&str; 3] = ["1", "1.5", "2"];
/// `dwParity` (`NOPARITY`, `ODDPARITY`, `EVENPARITY`, `MARKPARITY`, `SPACEPARITY`).
const PARITY: [&str; 5] = ["NONE", "ODD", "EVEN", "MARK", "SPACE"];
/// `dwFlowControl` (`DPCPA_NOFLOW` ... `DPCPA_RTSDTRFLOW`).
const FLOW_CONTROL: [&str; 5] = ["NONE", "XONXOFF", "RTS", "DTR", "RTSDTR"];

/// The URL of the DirectPlay 4 address `bytes`.
pub(super) fn url_of(mut bytes: &[u8]) -> Result<DirectPlayUrl, HRESULT> {
    let bad = DPNERR_INVALIDADDRESSFORMAT;
    let mut provider = None;
    let mut rest = Vec::new();
    while !bytes.is_empty() {
        let (head, tail) = bytes.split_at_checked(20).ok_or(bad)?;
        let kind = Uuid::from_bytes_le(head[..16].try_into().map_err(|_| bad)?);
        let len = u32::from_le_bytes(head[16..20].try_into().map_err(|_| bad)?);
        let (data, tail) = tail.split_at_checked(usize::try_from(len).map_err(|_| bad)?).ok_or(bad)?;
        bytes = tail;
        let dword = |at: usize| data.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        match kind {
            DPAID_TOTAL_SIZE | DPAID_LOBBY_PROVIDER | DPAID_MODEM | DPAID_MODEM_W => {}
            DPAID_SERVICE_PROVIDER => {
                let sp = Uuid::from_bytes_le(data.try_into().map_err(|_| bad)?);
                provider = Some(PROVIDERS.iter().find(|(dp4, _)| *dp4 == sp).ok_or(bad)?.1);
            }
            DPAID_INET | DPAID_PHONE => {
                let text = data.split(|&b| b == 0).next().unwrap_or_default();
                let key = if kind == DPAID_INET { "hostname" } else { "phonenumber" };
                rest.push((key, UrlValue::String(super::latin1(text))));
            }
            DPAID_INET_W | DPAID_PHONE_W => {
                let units: Vec<u16> = data
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .take_while(|&c| c != 0)
                    .collect();
                let key = if kind == DPAID_INET_W { "hostname" } else { "phonenumber" };
                rest.push((key, UrlValue::String(String::from_utf16(&units).map_err(|_| bad)?)));
            }
            DPAID_INET_PORT => {
                let port = data.get(..2).ok_or(bad)?;
                rest.push(("port", UrlValue::Dword(u16::from_le_bytes([port[0], port[1]]).into())));
            }
            DPAID_COM_PORT => {
                // DPCOMPORTADDRESS: dwComPort, dwBaudRate, dwStopBits, dwParity, dwFlowControl.
                // The COM port number has no DirectPlay 8 form (serial devices are GUIDs).
                let name =
                    |table: &[&'static str], at| dword(at).and_then(|i| table.get(i as usize).copied());
                rest.push(("baud", UrlValue::Dword(dword(4).ok_or(bad)?)));
                for (key, table, at) in [
                    ("stopbits", &STOP_BITS[..], 8),
                    ("parity", &PARITY, 12),
                    ("flowcontrol", &FLOW_CONTROL, 16),
                ] {
                    rest.push((key, UrlValue::String(name(table, at).ok_or(bad)?.to_owned())));
                }
            }
            _ => return Err(bad),
        }
    }
    let url = DirectPlayUrl::new(provider.ok_or(bad)?);
    Ok(rest.into_iter().fold(url, |url, (key, value)| url.with_value(key, value)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn element(kind: Uuid, data: &[u8]) -> Vec<u8> {
        let mut e = kind.to_bytes_le().to_vec();
        e.extend_from_slice(&u32::try_from(data.len()).unwrap().to_le_bytes());
        e.extend_from_slice(data);
        e
    }

    #[test]
    fn maps_an_internet_address() {
        let dp4_tcpip = PROVIDERS[0].0;
        let mut addr = element(DPAID_TOTAL_SIZE, &80u32.to_le_bytes());
        addr.extend(element(DPAID_SERVICE_PROVIDER, &dp4_tcpip.to_bytes_le()));
        addr.extend(element(DPAID_INET, b"192.0.2.1\0"));
        addr.extend(element(DPAID_INET_PORT, &2302u16.to_le_bytes()));
        let url = url_of(&addr).unwrap();
        assert_eq!(url, DirectPlayUrl::ip("192.0.2.1", 2302));
    }

    #[test]
    fn maps_a_serial_address_and_skips_the_modem_name() {
        let serial = PROVIDERS[2];
        let com: Vec<u8> = [1u32, 57600, 0, 0, 4].iter().flat_map(|d| d.to_le_bytes()).collect();
        let mut addr = element(DPAID_SERVICE_PROVIDER, &serial.0.to_bytes_le());
        addr.extend(element(DPAID_COM_PORT, &com));
        addr.extend(element(DPAID_MODEM, b"Hayes\0"));
        let text = url_of(&addr).unwrap().to_string();
        assert_eq!(
            text,
            "x-directplay:/provider=%7B743B5D60-628D-11D2-AE0F-006097B01411%7D;baud=57600;stopbits=1;\
             parity=NONE;flowcontrol=RTSDTR"
        );
    }

    #[test]
    fn refuses_unknown_elements_and_truncation() {
        let sp = element(DPAID_SERVICE_PROVIDER, &PROVIDERS[0].0.to_bytes_le());
        let mut unknown = sp.clone();
        unknown.extend(element(Uuid::from_u128(7), b""));
        assert_eq!(url_of(&unknown), Err(DPNERR_INVALIDADDRESSFORMAT));
        assert_eq!(url_of(&sp[..sp.len() - 1]), Err(DPNERR_INVALIDADDRESSFORMAT));
        assert_eq!(url_of(&element(DPAID_INET, b"a\0")), Err(DPNERR_INVALIDADDRESSFORMAT), "no provider");
    }
}
