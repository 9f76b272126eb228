//! Units of the position packets: 48-bit fixed point, the pbh word, 16.16 velocities
//! (seed 004 rows POSITION_LLAPBH and POSITION_VELOCITY; FS-MULTIPLAYER.md 3.4, 3.5, 4).
//!
//! Every conversion is total: NaN, infinities and out-of-range values saturate or wrap as each
//! function documents, and nothing panics.

use serde::Serialize;

/// Latitude units per degree: FS counts latitude in metres north of the equator, a quarter
/// meridian being 10 001 750 m (FS-MULTIPLAYER.md 3.4).
pub const LAT_UNITS_PER_DEG: f64 = 10_001_750.0 / 90.0;
/// Longitude units per degree: 2³² pseudo-degrees make a full turn (FS-MULTIPLAYER.md 3.4).
pub const LON_UNITS_PER_DEG: f64 = 4_294_967_296.0 / 360.0;
/// Metres in one foot (international foot).
pub const METRES_PER_FOOT: f64 = 0.3048;
/// Metres of arc per degree on FS's sphere (quarter meridian 10 001 750 m over 90°); used to
/// turn north and east speeds into degrees per second.
pub const METRES_PER_DEG: f64 = 10_001_750.0 / 90.0;

/// A 48-bit two's-complement fixed-point value: the high 32 bits `i` and the low 16 bits `f`
/// of an SIF48/ANGL48 (FS-MULTIPLAYER.md 3.4 "What FS itself does", 4 SIF48).
///
/// The value is `i + f / 65536` with `f` unsigned and always added, so −3.25 is `i = −4`,
/// `f = 49152` (docs/decisions.md, add-on: fixed-point sign).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Fixed48 {
    /// The integer (high) 32 bits: `lat_i`, `lon_hi` or `alt_i`.
    pub i: i32,
    /// The fraction (low) 16 bits: `lat_f`, `lon_lo` or `alt_f`.
    pub f: u16,
}

const FIXED48_MIN: i64 = -(1 << 47);
const FIXED48_MAX: i64 = (1 << 47) - 1;

impl Fixed48 {
    /// The 48-bit raw value, sign-extended.
    pub fn raw(self) -> i64 {
        i64::from(self.i) * 65536 + i64::from(self.f)
    }

    /// Splits a raw value; bits above the 48 are dropped (wrapping, as angles need).
    #[allow(clippy::cast_possible_truncation)] // the split of a 48-bit value, by construction
    pub fn from_raw(raw: i64) -> Self {
        Self { i: (raw >> 16) as i32, f: (raw & 0xFFFF) as u16 }
    }

    /// The value in units (`i + f / 65536`).
    pub fn to_units(self) -> f64 {
        self.raw() as f64 / 65536.0
    }

    /// The nearest value to `units`, saturating at the 48-bit range; NaN gives 0.
    pub fn from_units(units: f64) -> Self {
        Self::from_raw(saturate(units * 65536.0, FIXED48_MIN, FIXED48_MAX))
    }
}

/// Rounds and clamps to `[lo, hi]`; NaN gives 0.
#[allow(clippy::cast_possible_truncation)] // clamped first; `as` saturates anyway
fn saturate(x: f64, lo: i64, hi: i64) -> i64 {
    if x.is_nan() {
        return 0;
    }
    (x.round() as i64).clamp(lo, hi)
}

/// Latitude in degrees from `lat_i`/`lat_f` (FS-MULTIPLAYER.md 3.4).
pub fn latitude_deg(lat: Fixed48) -> f64 {
    lat.to_units() / LAT_UNITS_PER_DEG
}

/// `lat_i`/`lat_f` for a latitude in degrees, to 1/65536 of a metre (FS-MULTIPLAYER.md 3.4).
pub fn latitude_from_deg(deg: f64) -> Fixed48 {
    Fixed48::from_units(deg * LAT_UNITS_PER_DEG)
}

/// Longitude in degrees, in [−180, 180), from `lon_hi`/`lon_lo` (FS-MULTIPLAYER.md 3.4).
pub fn longitude_deg(lon: Fixed48) -> f64 {
    lon.to_units() / LON_UNITS_PER_DEG
}

/// `lon_hi`/`lon_lo` for a longitude in degrees; a full turn wraps, so 180° and −180° are the
/// same value (FS-MULTIPLAYER.md 3.4, ANGL48).
pub fn longitude_from_deg(deg: f64) -> Fixed48 {
    let turn = 1_i64 << 48;
    let raw = saturate(deg * LON_UNITS_PER_DEG * 65536.0, i64::MIN / 2, i64::MAX / 2);
    // Wrap into the signed 48-bit range.
    let wrapped = (raw + turn / 2).rem_euclid(turn) - turn / 2;
    Fixed48::from_raw(wrapped)
}

/// Altitude in metres from `alt_i`/`alt_f` (FS-MULTIPLAYER.md 3.4).
pub fn altitude_m(alt: Fixed48) -> f64 {
    alt.to_units()
}

/// `alt_i`/`alt_f` for an altitude in metres (FS-MULTIPLAYER.md 3.4).
pub fn altitude_from_m(m: f64) -> Fixed48 {
    Fixed48::from_units(m)
}

/// Altitude in feet from `alt_i`/`alt_f`.
pub fn altitude_ft(alt: Fixed48) -> f64 {
    altitude_m(alt) / METRES_PER_FOOT
}

/// `alt_i`/`alt_f` for an altitude in feet.
pub fn altitude_from_ft(ft: f64) -> Fixed48 {
    altitude_from_m(ft * METRES_PER_FOOT)
}

/// Units of one 10-bit angle field per degree: a full turn is 1024 (FS-MULTIPLAYER.md 3.5).
pub const PBH_UNITS_PER_DEG: f64 = 1024.0 / 360.0;

/// The `pbh` word: pitch, bank and heading in their 10 most significant bits each, then the
/// on-ground bit (seed 004 row POSITION_LLAPBH; FS-MULTIPLAYER.md 3.5).
///
/// Bits 22–31 pitch and 12–21 bank are signed (−512…511), bits 2–11 heading unsigned (0…1023),
/// bit 1 on ground (the FS2004 dialect's use of one of the two bits the seed calls unused),
/// bit 0 unused. Every field is the top 10 bits of a 16-bit FS angle (1024 = 360°).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Pbh(pub u32);

impl Pbh {
    /// Packs raw fields; pitch and bank are taken modulo 1024 (two's complement in 10 bits).
    pub fn from_fields(pitch: i16, bank: i16, heading: u16, on_ground: bool) -> Self {
        let ten = |v: i32| (v as u32) & 0x3FF;
        Self(
            ten(pitch.into()) << 22
                | ten(bank.into()) << 12
                | ten(heading.into()) << 2
                | u32::from(on_ground) << 1,
        )
    }

    /// Pitch field, −512…511 (positive is nose down on the wire, FS-MULTIPLAYER.md 3.5).
    pub fn pitch(self) -> i16 {
        sign10(self.0 >> 22)
    }

    /// Bank field, −512…511 (positive is left wing down on the wire, FS-MULTIPLAYER.md 3.5).
    pub fn bank(self) -> i16 {
        sign10(self.0 >> 12)
    }

    /// Heading field, 0…1023.
    #[allow(clippy::cast_possible_truncation)] // masked to 10 bits
    pub fn heading(self) -> u16 {
        ((self.0 >> 2) & 0x3FF) as u16
    }

    /// The on-ground bit (bit 1).
    pub fn on_ground(self) -> bool {
        self.0 & 0b10 != 0
    }

    /// Encodes an attitude given the usual way (nose up and right wing down positive).
    ///
    /// FS counts pitch and bank the other way; the inversion is a bitwise NOT of the floored
    /// field (`~floor(x)`, which never overflows 10 bits), as the FS-MULTIPLAYER.md 3.5 test
    /// vectors encode it. Heading is rounded and wraps at 360°.
    pub fn from_attitude(a: Attitude, on_ground: bool) -> Self {
        let field = |deg: f64| {
            // A half-open turn [−180, 180) keeps the floored field inside −512…511.
            let deg = if deg.is_finite() { (deg + 180.0).rem_euclid(360.0) - 180.0 } else { 0.0 };
            i16::try_from(saturate((deg * PBH_UNITS_PER_DEG).floor(), -512, 511)).unwrap_or(0)
        };
        let heading = if a.heading_deg.is_finite() { a.heading_deg.rem_euclid(360.0) } else { 0.0 };
        let heading = u16::try_from(saturate(heading * PBH_UNITS_PER_DEG, 0, 1024) & 0x3FF).unwrap_or(0);
        Self::from_fields(!field(a.pitch_deg), !field(a.bank_deg), heading, on_ground)
    }

    /// Decodes to the middle of the interval each field stands for, so
    /// `attitude(from_attitude(a))` is within half a unit (0.176°) of `a`.
    pub fn attitude(self) -> Attitude {
        let undo = |field: i16| (f64::from(!field) + 0.5) / PBH_UNITS_PER_DEG;
        Attitude {
            pitch_deg: undo(self.pitch()),
            bank_deg: undo(self.bank()),
            heading_deg: f64::from(self.heading()) / PBH_UNITS_PER_DEG,
        }
    }
}

/// Sign-extends a 10-bit field.
#[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)] // 10 bits fit an i16
fn sign10(v: u32) -> i16 {
    let v = (v & 0x3FF) as i16;
    if v >= 512 { v - 1024 } else { v }
}

impl std::fmt::Debug for Pbh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Pbh({:#010x}: pitch {}, bank {}, heading {}, on_ground {})",
            self.0,
            self.pitch(),
            self.bank(),
            self.heading(),
            self.on_ground()
        )
    }
}

/// An attitude in degrees, nose up and right wing down positive, heading 0…360
/// (FS-MULTIPLAYER.md 3.5; heading reference: docs/decisions.md).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Attitude {
    /// Pitch, degrees, nose up positive.
    pub pitch_deg: f64,
    /// Bank, degrees, right wing down positive.
    pub bank_deg: f64,
    /// Heading, degrees.
    pub heading_deg: f64,
}

/// A 16.16 fixed-point velocity in feet per second: SIF32 (`lat_velocity`, `lon_velocity`,
/// `alt_velocity`) or, read unsigned, UIF32 (`ground_velocity`) (seed 004 row
/// POSITION_VELOCITY: "16-bit integer, 16-bit fractional values with units of feet/second").
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Velocity16(pub i32);

impl std::fmt::Debug for Velocity16 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Velocity16({:#010x} = {} ft/s)", self.0, self.ft_per_s())
    }
}

impl Velocity16 {
    /// Feet per second.
    pub fn ft_per_s(self) -> f64 {
        f64::from(self.0) / 65536.0
    }

    /// The nearest 16.16 value, saturating at ±32768 ft/s; NaN gives 0.
    #[allow(clippy::cast_possible_truncation)] // saturated into the i32 range first
    pub fn from_ft_per_s(ft: f64) -> Self {
        Self(saturate(ft * 65536.0, i32::MIN.into(), i32::MAX.into()) as i32)
    }

    /// Metres per second.
    pub fn m_per_s(self) -> f64 {
        self.ft_per_s() * METRES_PER_FOOT
    }

    /// From metres per second.
    pub fn from_m_per_s(m: f64) -> Self {
        Self::from_ft_per_s(m / METRES_PER_FOOT)
    }

    /// A north–south speed (`lat_velocity`) as degrees of latitude per second.
    pub fn lat_deg_per_s(self) -> f64 {
        self.m_per_s() / METRES_PER_DEG
    }

    /// `lat_velocity` for degrees of latitude per second.
    pub fn from_lat_deg_per_s(deg: f64) -> Self {
        Self::from_m_per_s(deg * METRES_PER_DEG)
    }

    /// An east–west speed (`lon_velocity`) as degrees of longitude per second at `lat_deg`;
    /// 0 at the poles, where longitude is undefined.
    pub fn lon_deg_per_s(self, lat_deg: f64) -> f64 {
        let scale = lat_deg.to_radians().cos() * METRES_PER_DEG;
        if scale.abs() < 1e-9 { 0.0 } else { self.m_per_s() / scale }
    }

    /// `lon_velocity` for degrees of longitude per second at `lat_deg`.
    pub fn from_lon_deg_per_s(deg: f64, lat_deg: f64) -> Self {
        Self::from_m_per_s(deg * lat_deg.to_radians().cos() * METRES_PER_DEG)
    }

    /// `ground_velocity` (UIF32) in feet per second, reading the word unsigned.
    pub fn unsigned_ft_per_s(raw: u32) -> f64 {
        f64::from(raw) / 65536.0
    }

    /// The UIF32 word for a non-negative speed in feet per second (saturating).
    #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)] // clamped to the u32 range
    pub fn unsigned_from_ft_per_s(ft: f64) -> u32 {
        saturate(ft * 65536.0, 0, u32::MAX.into()) as u32
    }
}

#[cfg(test)]
mod tests;
