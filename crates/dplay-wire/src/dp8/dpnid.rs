//! DPNID: the identifier of a player or group (MC-DPL8CS 2.2.7; MS-DPDX 2.2.1).
//!
//! The host builds it from the name-table index (low 20 bits) and the name-table version at
//! which the entry was added (the bits above), then XORs it with `Data1` of the session's
//! instance GUID. On the wire only the XORed value appears, so decoding needs the instance.

use std::fmt;

use uuid::Uuid;

/// Bits of a raw DPNID that hold the name-table index (MC-DPL8CS 2.2.7).
pub const DPNID_INDEX_BITS: u32 = 20;
/// Mask of the index bits.
pub const DPNID_INDEX_MASK: u32 = (1 << DPNID_INDEX_BITS) - 1;

/// A DPNID as carried on the wire, already XORed with the instance GUID (MC-DPL8CS 2.2.7).
///
/// 0 is invalid as an identifier (MC-DPL8CS 2.2.7) but is what absent `dpnidOwner` fields
/// carry, so the type allows it; [`Dpnid::is_valid`] says which it is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize)]
pub struct Dpnid(pub u32);

impl Dpnid {
    /// The zero DPNID: never a player or group.
    pub const NONE: Self = Self(0);

    /// Builds the wire DPNID of the entry at `index` added at name-table `version`, in the
    /// session whose instance GUID is `instance`.
    ///
    /// `index` keeps its low 20 bits and `version` its low 12 (the spec gives the version no
    /// more room; what happens past 4095 is unspecified, INDEX F-18).
    pub fn new(index: u32, version: u32, instance: &Uuid) -> Self {
        Self(Self::raw_from(index, version) ^ instance_key(instance))
    }

    /// `(version << 20) | index`, before the XOR.
    pub fn raw_from(index: u32, version: u32) -> u32 {
        (version << DPNID_INDEX_BITS) | (index & DPNID_INDEX_MASK)
    }

    /// The value before the XOR with the instance GUID.
    pub fn raw(self, instance: &Uuid) -> u32 {
        self.0 ^ instance_key(instance)
    }

    /// The name-table index this DPNID was created at: the host finds the entry by it.
    pub fn index(self, instance: &Uuid) -> u32 {
        self.raw(instance) & DPNID_INDEX_MASK
    }

    /// The name-table version at which the entry was created.
    pub fn version(self, instance: &Uuid) -> u32 {
        self.raw(instance) >> DPNID_INDEX_BITS
    }

    /// False for 0, which is never a player or group.
    pub fn is_valid(self) -> bool {
        self.0 != 0
    }
}

/// `Data1` of the instance GUID, "the first 32 bits" the DPNID is XORed with (MC-DPL8CS 2.2.7;
/// INDEX F-18: checked against both spec examples).
pub fn instance_key(instance: &Uuid) -> u32 {
    instance.as_fields().0
}

impl fmt::Debug for Dpnid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Dpnid({:#010X})", self.0)
    }
}

impl fmt::Display for Dpnid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#010X}", self.0)
    }
}

impl From<u32> for Dpnid {
    fn from(v: u32) -> Self {
        Self(v)
    }
}

#[cfg(test)]
mod tests {
    use dplay_spec_examples::mc_dpl8cs_4::{HOST_DPNID, INSTANCE, JOINER_DPNID};

    use super::*;

    /// MC-DPL8CS 4: instance `23 81 BE 94 …`; host 0x949E8121 and joiner 0x948E8120.
    #[test]
    fn mc_dpl8cs_4_dpnids() {
        let instance = Uuid::from_bytes_le(INSTANCE);
        assert_eq!(instance_key(&instance), 0x94BE_8123);
        let host = Dpnid(HOST_DPNID);
        assert_eq!(host.raw(&instance), 0x0020_0002);
        assert_eq!((host.index(&instance), host.version(&instance)), (2, 2));
        let joiner = Dpnid(JOINER_DPNID);
        assert_eq!(joiner.raw(&instance), 0x0030_0003);
        assert_eq!((joiner.index(&instance), joiner.version(&instance)), (3, 3));
        assert_eq!(Dpnid::new(3, 3, &instance), joiner);
    }

    /// MC-DPL8CS 2.2.7: index 5, version 10, Data1 0xA1B2C3D4 gives 0xA112C3D1.
    #[test]
    fn mc_dpl8cs_2_2_7_worked_value() {
        let instance = Uuid::from_fields(0xA1B2_C3D4, 0, 0, &[0; 8]);
        assert_eq!(Dpnid::raw_from(5, 10), 0x00A0_0005);
        assert_eq!(Dpnid::new(5, 10, &instance), Dpnid(0xA112_C3D1));
    }

    /// MC-DPLNAT 4.2 (INDEX D.13): instance {C0A65D4F-…}.
    #[test]
    fn mc_dplnat_4_2_dpnids() {
        let instance = Uuid::from_fields(0xC0A6_5D4F, 0, 0, &[0; 8]);
        assert_eq!(Dpnid(0xC0F6_5D4B).raw(&instance), 0x0050_0004);
        assert_eq!(Dpnid(0xC096_5D4C).raw(&instance), 0x0030_0003);
    }

    #[test]
    fn index_wraps_to_twenty_bits() {
        let instance = Uuid::nil();
        assert_eq!(Dpnid::new(0x12_3456, 1, &instance).index(&instance), 0x2_3456);
        assert!(!Dpnid::NONE.is_valid());
    }
}
