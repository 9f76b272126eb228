//! Reading pcap and pcapng files into numbered, timed frames.

use std::time::Duration;

use anyhow::{Context, bail};
use pcap_file::DataLink;
use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgReader};

/// One captured frame.
pub(crate) struct Frame {
    /// 1-based, counting every packet in the file (as Wireshark numbers them).
    pub(crate) number: u64,
    /// Capture time since the epoch.
    pub(crate) time: Duration,
    pub(crate) link: DataLink,
    pub(crate) data: Vec<u8>,
}

const PCAPNG_MAGIC: [u8; 4] = [0x0A, 0x0D, 0x0D, 0x0A];

/// Every packet read, and why reading stopped early (a capture cut short, as when the
/// capturing program was killed): the packets before the cut are kept.
pub(crate) struct Capture {
    pub(crate) frames: Vec<Frame>,
    pub(crate) cut: Option<String>,
}

/// Reads every packet of a pcap or pcapng file, told apart by their magic numbers. Fails
/// only when the file header cannot be read.
pub(crate) fn read(bytes: &[u8]) -> anyhow::Result<Capture> {
    match bytes.get(..4) {
        Some(m) if m == PCAPNG_MAGIC => read_pcapng(bytes),
        Some(
            [0xD4, 0xC3, 0xB2, 0xA1]
            | [0xA1, 0xB2, 0xC3, 0xD4]
            | [0x4D, 0x3C, 0xB2, 0xA1]
            | [0xA1, 0xB2, 0x3C, 0x4D],
        ) => read_pcap(bytes),
        _ => bail!("not a pcap or pcapng file (unknown magic number)"),
    }
}

fn read_pcap(bytes: &[u8]) -> anyhow::Result<Capture> {
    let mut reader = PcapReader::new(bytes).context("reading the pcap header")?;
    let link = reader.header().datalink;
    let mut frames = Vec::new();
    while let Some(packet) = reader.next_packet() {
        let packet = match packet {
            Ok(p) => p,
            Err(e) => return Ok(Capture { cut: Some(format!("packet {}: {e}", frames.len() + 1)), frames }),
        };
        frames.push(Frame {
            number: frames.len() as u64 + 1,
            time: packet.timestamp,
            link,
            data: packet.data.into_owned(),
        });
    }
    Ok(Capture { frames, cut: None })
}

/// A raw pcapng timestamp in its interface's `if_tsresol` unit (pcapng 4.2: 10^-n seconds,
/// or 2^-n with the top bit set; 10^-6 when absent) as a duration.
fn timestamp(raw: u128, resol: Option<u8>) -> Duration {
    let resol = resol.unwrap_or(6);
    let nanos = if resol & 0x80 != 0 {
        raw.checked_mul(1_000_000_000).map(|n| n >> (resol & 0x7F)).unwrap_or(0)
    } else if resol <= 9 {
        raw.saturating_mul(10u128.pow(9 - u32::from(resol)))
    } else {
        raw / 10u128.pow(u32::from(resol.min(38)) - 9)
    };
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

fn read_pcapng(bytes: &[u8]) -> anyhow::Result<Capture> {
    let mut reader = PcapNgReader::new(bytes).context("reading the pcapng section header")?;
    let mut interfaces: Vec<(DataLink, Option<u8>)> = Vec::new();
    let mut frames = Vec::new();
    while let Some(block) = reader.next_block() {
        let block = match block {
            Ok(b) => b,
            Err(e) => {
                return Ok(Capture {
                    cut: Some(format!("block after packet {}: {e}", frames.len())),
                    frames,
                });
            }
        };
        let (interface, raw_time, data) = match block {
            Block::InterfaceDescription(idb) => {
                let resol = idb.options.iter().find_map(|o| match o {
                    InterfaceDescriptionOption::IfTsResol(r) => Some(*r),
                    _ => None,
                });
                interfaces.push((idb.linktype, resol));
                continue;
            }
            Block::SectionHeader(_) => {
                interfaces.clear();
                continue;
            }
            // pcap-file stores the raw timestamp as if it counted nanoseconds; rescale below.
            Block::EnhancedPacket(epb) => (epb.interface_id, epb.timestamp.as_nanos(), epb.data.into_owned()),
            Block::SimplePacket(spb) => (0, 0, spb.data.into_owned()),
            _ => continue,
        };
        let &(link, resol) = usize::try_from(interface)
            .ok()
            .and_then(|i| interfaces.get(i))
            .with_context(|| format!("packet {} names undeclared interface {interface}", frames.len() + 1))?;
        let time = timestamp(raw_time, resol);
        frames.push(Frame { number: frames.len() as u64 + 1, time, link, data });
    }
    Ok(Capture { frames, cut: None })
}
