//! Finding the CPUs and the local APIC in the ACPI tables.
//!
//! The path is RSDP → XSDT (or RSDT on ACPI 1.0) → MADT ("APIC"). The
//! kernel supplies physical memory through [`PhysRead`]; everything is
//! parsed by little-endian byte offsets, so no table layout is ever
//! trusted to match a Rust struct. Every table relied upon has its
//! checksum verified: a corrupted table is reported, not half-used.

/// Read access to physical memory.
pub trait PhysRead {
    /// Fills `buf` with the bytes at `phys..phys + buf.len()`.
    fn read(&self, phys: u64, buf: &mut [u8]);
}

/// A processor listed in the MADT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MadtCpu {
    /// Local (x2)APIC id, used to address IPIs to it.
    pub apic_id: u32,
    /// Usable now; `false` means online-capable (may be hot-added later).
    pub enabled: bool,
}

/// What [`read_madt`] found besides the CPU list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MadtInfo {
    /// Physical address of the local APIC registers.
    pub lapic_phys: u64,
    /// Number of entries written to the `cpus` slice.
    pub cpu_count: usize,
}

/// Why the MADT could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcpiError {
    /// No "RSD PTR " signature at the given address.
    NoRsdp,
    /// The named structure ("RSDP", "RSDT", "XSDT" or "MADT") fails its
    /// checksum.
    BadChecksum(&'static str),
    /// No MADT is listed, or the root table pointer leads to something
    /// that is not a root table.
    NoMadt,
    /// The `cpus` slice is too short for the processors listed.
    TooManyCpus,
}

const RSDP_SIGNATURE: &[u8; 8] = b"RSD PTR ";
/// ACPI 1.0 RSDP size, covered by the first checksum.
const RSDP_V1_LEN: usize = 20;
/// ACPI 2.0+ RSDP size.
const RSDP_V2_LEN: usize = 36;
/// Common header of every system description table.
const SDT_HEADER_LEN: u64 = 36;
/// MADT: local APIC address and flags follow the header.
const MADT_ENTRIES_OFFSET: u64 = 44;

/// MADT entry types we use.
const ENTRY_LOCAL_APIC: u8 = 0;
const ENTRY_LAPIC_ADDRESS_OVERRIDE: u8 = 5;
const ENTRY_LOCAL_X2APIC: u8 = 9;

/// Processor flags (types 0 and 9).
const FLAG_ENABLED: u32 = 1 << 0;
const FLAG_ONLINE_CAPABLE: u32 = 1 << 1;

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from(u32_at(b, at)) | (u64::from(u32_at(b, at + 4)) << 32)
}

fn read_u32(mem: &impl PhysRead, phys: u64) -> u32 {
    let mut b = [0; 4];
    mem.read(phys, &mut b);
    u32::from_le_bytes(b)
}

/// Whether the bytes `phys..phys + len` sum to zero modulo 256, read in
/// small chunks so no buffer has to hold a whole table.
fn checksum_ok(mem: &impl PhysRead, phys: u64, len: u64) -> bool {
    let mut chunk = [0u8; 64];
    let mut sum = 0u8;
    let mut done = 0;
    while done < len {
        let n = core::cmp::min(chunk.len() as u64, len - done) as usize;
        mem.read(phys + done, &mut chunk[..n]);
        sum = chunk[..n].iter().fold(sum, |s, &b| s.wrapping_add(b));
        done += n as u64;
    }
    sum == 0
}

/// Root-table pointers from a validated RSDP.
struct Rsdp {
    revision: u8,
    rsdt: u32,
    xsdt: u64,
}

/// Validates the RSDP at `phys`: signature, the ACPI 1.0 checksum, and for
/// revision 2+ the extended checksum over its `length` bytes.
fn parse_rsdp(mem: &impl PhysRead, phys: u64) -> Result<Rsdp, AcpiError> {
    let mut b = [0u8; RSDP_V2_LEN];
    mem.read(phys, &mut b[..8]);
    if &b[..8] != RSDP_SIGNATURE {
        return Err(AcpiError::NoRsdp);
    }
    mem.read(phys, &mut b[..RSDP_V1_LEN]);
    if !checksum_ok(mem, phys, RSDP_V1_LEN as u64) {
        return Err(AcpiError::BadChecksum("RSDP"));
    }
    let revision = b[15];
    let rsdt = u32_at(&b, 16);
    if revision < 2 {
        return Ok(Rsdp { revision, rsdt, xsdt: 0 });
    }
    mem.read(phys, &mut b);
    let length = u64::from(u32_at(&b, 20));
    if length < RSDP_V2_LEN as u64 || !checksum_ok(mem, phys, length) {
        return Err(AcpiError::BadChecksum("RSDP"));
    }
    Ok(Rsdp { revision, rsdt, xsdt: u64_at(&b, 24) })
}

/// Scans each `[start, end)` window on 16-byte boundaries (where the spec
/// puts it) for a valid RSDP and returns its physical address. Typical
/// windows are the first KiB of the EBDA and `0xE0000..0x100000`.
pub fn find_rsdp(mem: &impl PhysRead, windows: &[(u64, u64)]) -> Option<u64> {
    windows.iter().find_map(|&(start, end)| {
        let mut at = start.checked_add(15)? & !15;
        while at.checked_add(RSDP_V1_LEN as u64)? <= end {
            if parse_rsdp(mem, at).is_ok() {
                return Some(at);
            }
            at = at.checked_add(16)?;
        }
        None
    })
}

/// Checks the table at `phys` has signature `sig` and a valid checksum
/// (reported under `name`); returns its length.
fn load_table(
    mem: &impl PhysRead,
    phys: u64,
    sig: &[u8; 4],
    name: &'static str,
) -> Result<u64, AcpiError> {
    let mut found = [0u8; 4];
    mem.read(phys, &mut found);
    let length = u64::from(read_u32(mem, phys + 4));
    if &found != sig || length < SDT_HEADER_LEN {
        return Err(AcpiError::NoMadt);
    }
    if !checksum_ok(mem, phys, length) {
        return Err(AcpiError::BadChecksum(name));
    }
    Ok(length)
}

/// Finds the MADT through the RSDP at `rsdp`, writes its processors to
/// `cpus` in table order and returns the local APIC address and count.
///
/// The XSDT (64-bit pointers) is used when the RSDP is revision 2+ and
/// provides one, the RSDT otherwise. Processors are taken from Local APIC
/// (type 0) and Local x2APIC (type 9) entries; those neither enabled nor
/// online-capable are skipped. A Local APIC Address Override (type 5)
/// replaces the 32-bit address in the MADT header.
pub fn read_madt(
    mem: &impl PhysRead,
    rsdp: u64,
    cpus: &mut [MadtCpu],
) -> Result<MadtInfo, AcpiError> {
    let rsdp = parse_rsdp(mem, rsdp)?;
    let (root, pointer_size, sig, name) = if rsdp.revision >= 2 && rsdp.xsdt != 0 {
        (rsdp.xsdt, 8, b"XSDT", "XSDT")
    } else {
        (u64::from(rsdp.rsdt), 4, b"RSDT", "RSDT")
    };
    if root == 0 {
        return Err(AcpiError::NoMadt);
    }
    let root_len = load_table(mem, root, sig, name)?;
    let entries = (root_len - SDT_HEADER_LEN) / pointer_size;
    for i in 0..entries {
        let mut ptr = [0u8; 8];
        let slot = root + SDT_HEADER_LEN + i * pointer_size;
        mem.read(slot, &mut ptr[..pointer_size as usize]);
        let table = u64::from_le_bytes(ptr);
        let mut table_sig = [0u8; 4];
        if table != 0 {
            mem.read(table, &mut table_sig);
        }
        if &table_sig == b"APIC" {
            let length = load_table(mem, table, b"APIC", "MADT")?;
            return parse_madt(mem, table, length, cpus);
        }
    }
    Err(AcpiError::NoMadt)
}

/// Walks the MADT entries of a validated table of `length` bytes.
fn parse_madt(
    mem: &impl PhysRead,
    madt: u64,
    length: u64,
    cpus: &mut [MadtCpu],
) -> Result<MadtInfo, AcpiError> {
    let mut lapic_phys = u64::from(read_u32(mem, madt + SDT_HEADER_LEN));
    let mut count = 0;
    let mut offset = MADT_ENTRIES_OFFSET;
    while offset + 2 <= length {
        let mut entry = [0u8; 16];
        mem.read(madt + offset, &mut entry[..2]);
        let (kind, len) = (entry[0], u64::from(entry[1]));
        if len < 2 || offset + len > length {
            break; // Malformed; everything before it was checksummed and used.
        }
        let body = core::cmp::min(len, entry.len() as u64) as usize;
        mem.read(madt + offset, &mut entry[..body]);
        let cpu = match kind {
            ENTRY_LOCAL_APIC if len >= 8 => Some((u32::from(entry[3]), u32_at(&entry, 4))),
            ENTRY_LOCAL_X2APIC if len >= 16 => Some((u32_at(&entry, 4), u32_at(&entry, 8))),
            ENTRY_LAPIC_ADDRESS_OVERRIDE if len >= 12 => {
                lapic_phys = u64_at(&entry, 4);
                None
            }
            _ => None,
        };
        if let Some((apic_id, flags)) = cpu {
            if flags & (FLAG_ENABLED | FLAG_ONLINE_CAPABLE) != 0 {
                let slot = cpus.get_mut(count).ok_or(AcpiError::TooManyCpus)?;
                *slot = MadtCpu { apic_id, enabled: flags & FLAG_ENABLED != 0 };
                count += 1;
            }
        }
        offset += len;
    }
    Ok(MadtInfo { lapic_phys, cpu_count: count })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Sparse physical memory: blobs at base addresses, zeros elsewhere.
    #[derive(Default)]
    struct Mem(BTreeMap<u64, Vec<u8>>);

    impl Mem {
        fn put(&mut self, base: u64, bytes: Vec<u8>) -> &mut Self {
            self.0.insert(base, bytes);
            self
        }

        fn poke(&mut self, phys: u64, value: u8) {
            let (base, blob) = self.0.range_mut(..=phys).next_back().unwrap();
            blob[(phys - base) as usize] = value;
        }
    }

    impl PhysRead for Mem {
        fn read(&self, phys: u64, buf: &mut [u8]) {
            for (i, out) in buf.iter_mut().enumerate() {
                let addr = phys + i as u64;
                *out = match self.0.range(..=addr).next_back() {
                    Some((base, blob)) => blob.get((addr - base) as usize).copied().unwrap_or(0),
                    None => 0,
                };
            }
        }
    }

    /// Value making `bytes` sum to zero when stored in a zeroed checksum byte.
    fn fix(bytes: &[u8]) -> u8 {
        0u8.wrapping_sub(bytes.iter().fold(0u8, |s, &b| s.wrapping_add(b)))
    }

    fn rsdp(revision: u8, rsdt: u32, xsdt: u64) -> Vec<u8> {
        let mut b = Vec::from(&RSDP_SIGNATURE[..]);
        b.push(0); // checksum
        b.extend_from_slice(b"ATOLL ");
        b.push(revision);
        b.extend_from_slice(&rsdt.to_le_bytes());
        b[8] = fix(&b);
        if revision >= 2 {
            b.extend_from_slice(&(RSDP_V2_LEN as u32).to_le_bytes());
            b.extend_from_slice(&xsdt.to_le_bytes());
            b.extend_from_slice(&[0; 4]); // extended checksum + reserved
            b[32] = fix(&b);
        }
        b
    }

    fn sdt(sig: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut b = Vec::from(&sig[..]);
        b.extend_from_slice(&(SDT_HEADER_LEN as u32 + body.len() as u32).to_le_bytes());
        b.extend_from_slice(&[1, 0]); // revision, checksum
        b.extend_from_slice(b"ATOLL ATOLLTBL");
        b.extend_from_slice(&[0; 12]); // OEM revision, creator id/revision
        assert_eq!(b.len() as u64, SDT_HEADER_LEN);
        b.extend_from_slice(body);
        b[9] = fix(&b);
        b
    }

    fn root(sig: &[u8; 4], tables: &[u64]) -> Vec<u8> {
        let body: Vec<u8> = if sig == b"XSDT" {
            tables.iter().flat_map(|t| t.to_le_bytes()).collect()
        } else {
            tables.iter().flat_map(|&t| (t as u32).to_le_bytes()).collect()
        };
        sdt(sig, &body)
    }

    fn madt(lapic: u32, entries: &[Vec<u8>]) -> Vec<u8> {
        let mut body = lapic.to_le_bytes().to_vec();
        body.extend_from_slice(&1u32.to_le_bytes()); // PCAT_COMPAT
        entries.iter().for_each(|e| body.extend_from_slice(e));
        sdt(b"APIC", &body)
    }

    fn lapic(acpi_id: u8, apic_id: u8, flags: u32) -> Vec<u8> {
        let mut e = vec![0, 8, acpi_id, apic_id];
        e.extend_from_slice(&flags.to_le_bytes());
        e
    }

    fn x2apic(id: u32, flags: u32, uid: u32) -> Vec<u8> {
        let mut e = vec![9, 16, 0, 0];
        [id, flags, uid].iter().for_each(|v| e.extend_from_slice(&v.to_le_bytes()));
        e
    }

    fn lapic_override(addr: u64) -> Vec<u8> {
        let mut e = vec![5, 12, 0, 0];
        e.extend_from_slice(&addr.to_le_bytes());
        e
    }

    fn ioapic() -> Vec<u8> {
        vec![1, 12, 0, 0, 0, 0, 0xc0, 0xfe, 0, 0, 0, 0]
    }

    const BIOS: (u64, u64) = (0xe0000, 0x100000);
    const RSDP_AT: u64 = 0xe0010;
    const RSDT_AT: u64 = 0x7fe_0000;
    const FACP_AT: u64 = 0x7fe_1000;
    const MADT_AT: u64 = 0x7fe_2000;
    const XSDT_AT: u64 = 0x1_0000_0000;
    const MADT2_AT: u64 = 0x1_0000_1000;

    fn cpu(apic_id: u32, enabled: bool) -> MadtCpu {
        MadtCpu { apic_id, enabled }
    }

    /// ACPI 1.0 system: RSDT → FACP, MADT with xAPIC entries.
    fn acpi1() -> Mem {
        let mut m = Mem::default();
        m.put(RSDP_AT, rsdp(0, RSDT_AT as u32, 0))
            .put(RSDT_AT, root(b"RSDT", &[FACP_AT, MADT_AT]))
            .put(FACP_AT, sdt(b"FACP", &[0; 8]))
            .put(
                MADT_AT,
                madt(
                    0xfee0_0000,
                    &[
                        lapic(0, 0, 1),
                        ioapic(),
                        lapic(1, 2, 1),
                        lapic(2, 4, 2),
                        lapic(3, 6, 0),
                        lapic(4, 8, 3),
                    ],
                ),
            );
        m
    }

    /// ACPI 2.0 system whose XSDT and RSDT list different MADTs.
    fn acpi2(xsdt: u64) -> Mem {
        let mut m = acpi1();
        m.put(RSDP_AT, rsdp(2, RSDT_AT as u32, xsdt))
            .put(XSDT_AT, root(b"XSDT", &[FACP_AT, MADT2_AT]))
            .put(
                MADT2_AT,
                madt(
                    0xfee0_0000,
                    &[
                        x2apic(0x100, 1, 0),
                        lapic_override(0x1_fee0_0000),
                        lapic(1, 3, 1),
                        x2apic(0x101, 2, 1),
                        x2apic(7, 0, 2),
                    ],
                ),
            );
        m
    }

    fn read(m: &Mem, n: usize) -> Result<(MadtInfo, Vec<MadtCpu>), AcpiError> {
        let mut cpus = vec![cpu(u32::MAX, false); n];
        let info = read_madt(m, RSDP_AT, &mut cpus)?;
        cpus.truncate(info.cpu_count);
        Ok((info, cpus))
    }

    #[test]
    fn finds_rsdp_on_16_byte_boundary_with_valid_checksum() {
        let mut m = acpi1();
        assert_eq!(find_rsdp(&m, &[(0x9fc00, 0xa0000), BIOS]), Some(RSDP_AT));
        // A corrupt candidate earlier in the window is skipped.
        m.put(0xe0000, {
            let mut bad = rsdp(0, 1, 0);
            bad[8] ^= 1;
            bad
        });
        assert_eq!(find_rsdp(&m, &[BIOS]), Some(RSDP_AT));
        // Signatures off the 16-byte grid do not count.
        let mut m = Mem::default();
        m.put(0xe0008, rsdp(0, 1, 0));
        assert_eq!(find_rsdp(&m, &[BIOS]), None);
        // The window end must leave room for the 20-byte structure.
        let mut m = Mem::default();
        m.put(0xe0010, rsdp(0, 1, 0));
        assert_eq!(find_rsdp(&m, &[(0xe0000, 0xe0023)]), None);
        assert_eq!(find_rsdp(&m, &[(0xe0000, 0xe0024)]), Some(0xe0010));
        assert_eq!(find_rsdp(&m, &[]), None);
    }

    #[test]
    fn rev2_rsdp_needs_extended_checksum() {
        let mut m = Mem::default();
        m.put(0xe0000, rsdp(2, 1, 2));
        assert_eq!(find_rsdp(&m, &[BIOS]), Some(0xe0000));
        m.poke(0xe0000 + 24, 9); // xsdt address: v1 checksum still fine
        assert_eq!(find_rsdp(&m, &[BIOS]), None);
    }

    #[test]
    fn reads_madt_through_rsdt() {
        let (info, cpus) = read(&acpi1(), 8).unwrap();
        assert_eq!(info, MadtInfo { lapic_phys: 0xfee0_0000, cpu_count: 4 });
        // apic 6 is neither enabled nor online-capable: skipped.
        assert_eq!(cpus, [cpu(0, true), cpu(2, true), cpu(4, false), cpu(8, true)]);
    }

    #[test]
    fn prefers_xsdt_and_applies_override() {
        let (info, cpus) = read(&acpi2(XSDT_AT), 8).unwrap();
        assert_eq!(info, MadtInfo { lapic_phys: 0x1_fee0_0000, cpu_count: 3 });
        assert_eq!(cpus, [cpu(0x100, true), cpu(3, true), cpu(0x101, false)]);
    }

    #[test]
    fn rev2_without_xsdt_falls_back_to_rsdt() {
        let (info, cpus) = read(&acpi2(0), 8).unwrap();
        assert_eq!(info.lapic_phys, 0xfee0_0000);
        assert_eq!(cpus.len(), 4);
    }

    #[test]
    fn too_many_cpus() {
        assert_eq!(read(&acpi1(), 3), Err(AcpiError::TooManyCpus));
        assert_eq!(read(&acpi1(), 4).unwrap().0.cpu_count, 4);
    }

    #[test]
    fn bad_checksums_are_reported() {
        let mut m = acpi1();
        m.poke(MADT_AT + 50, 0x77);
        assert_eq!(read(&m, 8), Err(AcpiError::BadChecksum("MADT")));

        let mut m = acpi1();
        m.poke(RSDT_AT + 10, b'X');
        assert_eq!(read(&m, 8), Err(AcpiError::BadChecksum("RSDT")));

        let mut m = acpi2(XSDT_AT);
        m.poke(XSDT_AT + 40, 0x55);
        assert_eq!(read(&m, 8), Err(AcpiError::BadChecksum("XSDT")));

        let mut m = acpi1();
        m.poke(RSDP_AT + 9, b'Z');
        assert_eq!(read(&m, 8), Err(AcpiError::BadChecksum("RSDP")));
    }

    #[test]
    fn missing_madt_or_rsdp() {
        let mut m = acpi1();
        m.put(RSDT_AT, root(b"RSDT", &[FACP_AT, 0]));
        assert_eq!(read(&m, 8), Err(AcpiError::NoMadt));

        let mut m = acpi1();
        m.put(RSDT_AT, sdt(b"FACP", &[]));
        assert_eq!(read(&m, 8), Err(AcpiError::NoMadt), "root pointer leads to a non-root table");

        let m = Mem::default();
        assert_eq!(read(&m, 8), Err(AcpiError::NoRsdp));
    }
}
