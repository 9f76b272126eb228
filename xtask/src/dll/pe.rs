//! Just enough of the PE format (Microsoft's "PE Format" page) to check what `cargo xtask dll`
//! made: a PE32 image for i386 marked as a DLL, and the names it exports.

use anyhow::{Context, ensure};

/// IMAGE_FILE_MACHINE_I386.
const MACHINE_I386: u16 = 0x014c;
/// IMAGE_FILE_DLL in the COFF header's characteristics.
const FILE_DLL: u16 = 0x2000;
/// The optional header's magic for PE32 (PE32+ is 0x20b).
const PE32_MAGIC: u16 = 0x010b;

/// The names a 32-bit DLL exports, after checking it is one.
pub(crate) fn pe32_dll_exports(image: &[u8]) -> anyhow::Result<Vec<String>> {
    ensure!(image.get(..2) == Some(b"MZ"), "not a PE image (no MZ header)");
    let pe = u32_at(image, 0x3c)? as usize;
    ensure!(image.get(pe..pe + 4) == Some(b"PE\0\0"), "not a PE image (no PE signature)");
    let coff = pe + 4;
    ensure!(u16_at(image, coff)? == MACHINE_I386, "not an i386 image");
    let sections = u16_at(image, coff + 2)? as usize;
    let optional_size = u16_at(image, coff + 16)? as usize;
    ensure!(u16_at(image, coff + 18)? & FILE_DLL != 0, "not a DLL");
    let optional = coff + 20;
    ensure!(u16_at(image, optional)? == PE32_MAGIC, "not PE32");
    // The export table is data directory 0, at offset 96 of a PE32 optional header.
    let export_rva = u32_at(image, optional + 96)?;
    if export_rva == 0 {
        return Ok(Vec::new());
    }
    let table = optional + optional_size;
    let to_offset = |rva: u32| -> anyhow::Result<usize> {
        for i in 0..sections {
            let s = table + i * 40;
            let (size, va, raw) = (u32_at(image, s + 8)?, u32_at(image, s + 12)?, u32_at(image, s + 20)?);
            if rva >= va && rva - va < size {
                return Ok((raw + (rva - va)) as usize);
            }
        }
        anyhow::bail!("RVA {rva:#x} is in no section")
    };
    let dir = to_offset(export_rva)?;
    let count = u32_at(image, dir + 24)? as usize;
    let names = to_offset(u32_at(image, dir + 32)?)?;
    (0..count.min(4096))
        .map(|i| {
            let at = to_offset(u32_at(image, names + 4 * i)?)?;
            let name = image.get(at..).context("export name past the end")?;
            let end = name.iter().position(|&b| b == 0).context("unterminated export name")?;
            Ok(String::from_utf8_lossy(name.get(..end).unwrap_or_default()).into_owned())
        })
        .collect()
}

fn u16_at(b: &[u8], at: usize) -> anyhow::Result<u16> {
    let bytes = b.get(at..at + 2).and_then(|s| s.try_into().ok()).context("PE image truncated")?;
    Ok(u16::from_le_bytes(bytes))
}

fn u32_at(b: &[u8], at: usize) -> anyhow::Result<u32> {
    let bytes = b.get(at..at + 4).and_then(|s| s.try_into().ok()).context("PE image truncated")?;
    Ok(u32::from_le_bytes(bytes))
}
